package locust

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/traffic/load"
)

// Workload is what a locustfile sends: phptune's own workload description
// (the requests of --workload, --scenario, --workload-from-log or one
// page), the --expect body check, and for the open model the rate each
// simulated user keeps.
type Workload struct {
	Requests []load.Request
	// Expect is --expect: a 2xx body (its first 64 KiB) that does not
	// match is an unexpected_body error. Python's re runs it, not RE2: the
	// common subset (literals, classes, alternation, anchors) means the same.
	Expect string
	// RatePerUser, when set, is the open model: each user keeps this many
	// requests per second, each started one interval after the last (as
	// Locust's constant_throughput, but from a random first start); 0 is
	// the closed model (no think time).
	RatePerUser float64
	// TimeoutS bounds connecting and each response.
	TimeoutS float64
	// Redact are the extra secret names of --redact.
	Redact []string
}

// Secret is a value the locustfile reads from its environment instead of
// holding it: a credential header, or a path or body that carries one.
type Secret struct {
	// Env is the environment variable's name: PHPTUNE_SECRET_1, ...
	Env string
	// What says what it is, for the README and messages ("header
	// X-Api-Key of request 1"): never the value.
	What string
	// Value is the secret itself, passed in the environment of a run
	// phptune starts; never written to a file.
	Value string
}

// Locustfile is a generated locustfile and the secrets it reads from its
// environment.
type Locustfile struct {
	Source  []byte
	Secrets []Secret
}

// Env returns the secrets as NAME=VALUE environment entries.
func (f Locustfile) Env() []string {
	out := make([]string, 0, len(f.Secrets))
	for _, s := range f.Secrets {
		out = append(out, s.Env+"="+s.Value)
	}
	return out
}

// ResultFDEnv names the environment variable that, when set, makes the
// locustfile write its final statistics and error classes as one JSON
// document (see Result) to that file descriptor when Locust's master (or a
// single process) quits: phptune reads it from a pipe, not from a file the
// run's account could write.
const ResultFDEnv = "PHPTUNE_LOCUST_RESULT_FD"

// Generate writes a locustfile for w. Every value in it is a Python string
// literal (JSON's string syntax is a subset of Python's); secret values
// are read from the environment (Secrets), so the file can be kept, shown
// and exported.
func Generate(w Workload) (Locustfile, error) {
	if len(w.Requests) == 0 {
		return Locustfile{}, fmt.Errorf("the workload has no request")
	}
	var lf Locustfile
	secret := func(what, value string) string {
		s := Secret{Env: fmt.Sprintf("PHPTUNE_SECRET_%d", len(lf.Secrets)+1), What: what, Value: value}
		lf.Secrets = append(lf.Secrets, s)
		return fmt.Sprintf("_secret(%s)", pyStr(s.Env))
	}
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "TIMEOUT = %s\n", pyFloat(w.TimeoutS))
	if w.Expect != "" {
		fmt.Fprintf(&b, "EXPECT = re.compile(%s)\n", pyStr(w.Expect))
	} else {
		b.WriteString("EXPECT = None\n")
	}
	b.WriteString("\n# (weight, method, path, headers, body, expected status or 0 for any 2xx)\nREQUESTS = [\n")
	for i, r := range w.Requests {
		n := i + 1
		weight := r.Weight
		if weight <= 0 {
			weight = 1
		}
		method := strings.ToUpper(r.Method)
		if method == "" {
			method = "GET"
		}
		if !validMethod(method) {
			return Locustfile{}, fmt.Errorf("request %d: %q is not an HTTP method", n, r.Method)
		}
		path := pyStr(r.Path)
		if redact.URL(r.Path, w.Redact) != r.Path {
			path = secret(fmt.Sprintf("path of request %d (its query holds a credential)", n), r.Path)
		}
		var hdrs []string
		for _, name := range slices.Sorted(maps.Keys(r.Header)) {
			for _, v := range r.Header[name] {
				val := pyStr(v)
				if redact.IsSecretName(name, w.Redact) || redact.Header(name+": "+v, w.Redact) != name+": "+v {
					val = secret(fmt.Sprintf("header %s of request %d", name, n), v)
				}
				hdrs = append(hdrs, fmt.Sprintf("(%s, %s)", pyStr(name), val))
			}
		}
		body := "None"
		switch {
		case r.Body == nil:
		case redact.Form(string(r.Body), w.Redact) != string(r.Body) || redact.Text(string(r.Body), w.Redact) != string(r.Body):
			body = secret(fmt.Sprintf("body of request %d (it holds a credential)", n), string(r.Body)) + ".encode()"
		case utf8.Valid(r.Body):
			body = pyStr(string(r.Body)) + ".encode()"
		default:
			body = fmt.Sprintf("base64.b64decode(%s)", pyStr(base64.StdEncoding.EncodeToString(r.Body)))
		}
		fmt.Fprintf(&b, "    (%d, %s, %s, [%s], %s, %d),\n", weight, pyStr(method), path, strings.Join(hdrs, ", "), body, r.ExpectStatus)
	}
	b.WriteString("]\n")
	for _, s := range lf.Secrets {
		if strings.ContainsRune(s.Value, 0) {
			return Locustfile{}, fmt.Errorf("the %s holds a NUL byte, which an environment variable cannot carry", s.What)
		}
	}
	if w.RatePerUser > 0 {
		fmt.Fprintf(&b, "\n# Open model: each user starts a request every OPEN_INTERVAL seconds\n# (%s per second; see _pacing). Locust does not correct coordinated omission.\nOPEN_INTERVAL = %s\n", pyFloat(w.RatePerUser), pyFloat(1/w.RatePerUser))
	} else {
		b.WriteString("\n# Closed model: each user sends its next request when the last is answered.\nOPEN_INTERVAL = 0\n")
	}
	b.WriteString(body)
	lf.Source = b.Bytes()
	return lf, nil
}

func validMethod(m string) bool {
	for _, r := range m {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return m != ""
}

// pyStr is s as a Python string literal.
func pyStr(s string) string {
	j, _ := json.Marshal(s)
	return string(j)
}

func pyFloat(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d.0", int64(f))
	}
	return fmt.Sprintf("%g", f)
}

const header = `# A Locust workload written by phptune (https://locust.io, MIT). It runs as
# it is: locust -f locustfile.py --headless -u USERS -t 30s --host URL --json
# Values that are credentials are read from PHPTUNE_SECRET_* environment
# variables, never written here. Failures are named by phptune's error
# classes and the status (status_5xx (status 502), read_timeout (status 0)).
import base64
import json
import os
import random
import re
import socket
import time

import gevent
from locust import FastHttpUser, constant, events
from locust.runners import WorkerRunner


def _secret(name):
    value = os.environ.get(name)
    if value is None:
        raise SystemExit("locustfile: set the environment variable %s (a credential phptune keeps out of files)" % name)
    return value


`

const body = `

def _error_class(r, expect_status):
    """The phptune error class of a response, or None when it succeeded."""
    err = getattr(r, "error", None)
    code = r.status_code or 0
    if code == 0 or (err is not None and code == 0):
        if isinstance(err, ConnectionRefusedError):
            return "connect_refused"
        if isinstance(err, ConnectionResetError) or isinstance(err, BrokenPipeError):
            return "reset"
        if isinstance(err, (socket.timeout, TimeoutError)) or "timed out" in str(err).lower() or "timeout" in type(err).__name__.lower():
            return "read_timeout"
        return "closed_early"
    if expect_status:
        if code == expect_status:
            return None
        if 200 <= code < 300:
            return "unexpected_status"
    elif 200 <= code < 300:
        if EXPECT is not None and code != 204:
            content = r.content or b""
            if not EXPECT.search(content[:65536].decode("utf-8", "replace")):
                return "unexpected_body"
        return None
    if 300 <= code < 400:
        return "redirect"
    if 400 <= code < 500:
        return "status_4xx"
    if 500 <= code < 600:
        return "status_5xx"
    return "protocol"


def _make_task(req):
    weight, method, path, headers, body, expect_status = req

    def t(user):
        user._send(method, path, headers, body, expect_status)
    return t


def _pacing(user):
    """The open model's wait: the next request starts OPEN_INTERVAL after
    the last one started (at once when the last took longer: a user that
    runs late sends less, and the achieved rate shows it). Locust's own
    constant_throughput waits 0 after a user's first request, so every
    user sent two at once and a short run's rate read high (6-10% on a
    5 s capacity step)."""
    now = time.monotonic()
    wait = max(0.0, OPEN_INTERVAL - (now - user._phptune_started))
    user._phptune_started = now + wait
    return wait


class PhptuneUser(FastHttpUser):
    wait_time = _pacing if OPEN_INTERVAL > 0 else constant(0)
    network_timeout = TIMEOUT
    connection_timeout = TIMEOUT
    # Redirects are errors, not followed: they would time another page.
    max_redirects = 0
    # Each request is a task, picked in proportion to its weight.
    tasks = {_make_task(req): req[0] for req in REQUESTS}

    def on_start(self):
        # Open model: users spawned within a moment would send their
        # first requests together, a burst of one per user; each starts
        # at a random point of its first interval instead.
        if OPEN_INTERVAL > 0:
            gevent.sleep(random.random() * OPEN_INTERVAL)
        self._phptune_started = time.monotonic()

    def _send(self, method, path, headers, body, expect_status):
        name = method + " " + path.split("?")[0]
        with self.client.request(method, path, headers=dict(headers), data=body, name=name,
                                 catch_response=True, allow_redirects=False) as r:
            code = r.status_code or 0
            _count_status(name, code)
            cls = _error_class(r, expect_status)
            if cls is None:
                r.success()
            else:
                # The status goes into the message too: Locust's failure
                # table (its _failures.csv) then tells codes apart.
                r.failure("%s (status %d)" % (cls, code))


# Response status codes by request name ({name: {"200": n, "0": n}}; 0 is
# no response: refused, reset, timed out). A worker hands its tally to the
# master with each statistics report (Locust's report_to_master and
# worker_report events, its own protocol, so workers on other machines
# count too), and then starts a new one: the counts cover exactly the
# requests the statistics count.
_STATUS = {}


def _count_status(name, code):
    by = _STATUS.setdefault(name, {})
    key = str(code)
    by[key] = by.get(key, 0) + 1


def _add_status(tally):
    for name, codes in (tally or {}).items():
        by = _STATUS.setdefault(str(name), {})
        for code, n in codes.items():
            by[str(code)] = by.get(str(code), 0) + int(n)


@events.report_to_master.add_listener
def _status_to_master(client_id, data, **_kw):
    global _STATUS
    data["phptune_status_codes"] = _STATUS
    _STATUS = {}


@events.worker_report.add_listener
def _status_from_worker(client_id, data, **_kw):
    _add_status(data.get("phptune_status_codes"))


if os.environ.get("PHPTUNE_LOCUST_RESULT_FD"):
    # A run phptune started: at the end of -t, Locust's master tells its
    # workers to quit and waits only 0.5 s for their last statistics, so
    # requests still in flight then (slow pages) would be sent but never
    # counted. Wait instead until every worker has quit (it sends its last
    # report first), at most --stop-timeout and 5 s more.
    import time
    import gevent
    from locust import runners as _runners
    from locust.rpc import Message

    _master_quit = _runners.MasterRunner.quit

    def _quit_after_last_report(self):
        if getattr(self, "_phptune_quitting", False):
            return _master_quit(self)
        self._phptune_quitting = True
        self.stop(send_stop_to_client=False)
        for client in list(self.clients.all):
            self.server.send_to_client(Message("quit", None, client.id))
        deadline = time.monotonic() + (self.environment.stop_timeout or 0) + 5
        while len(self.clients) > 0 and time.monotonic() < deadline:
            gevent.sleep(0.1)
        _master_quit(self)
    _runners.MasterRunner.quit = _quit_after_last_report


@events.quitting.add_listener
def _write_result(environment, **_kw):
    """With PHPTUNE_LOCUST_RESULT_FD set (phptune bench), the master or the
    single process writes the final statistics and errors to that pipe."""
    fd = os.environ.get("PHPTUNE_LOCUST_RESULT_FD")
    if not fd or isinstance(environment.runner, WorkerRunner):
        return
    import locust
    doc = {
        "version": locust.__version__,
        "stats": environment.runner.stats.serialize_stats(),
        "errors": [{"method": e.method, "name": e.name, "error": str(e.error), "occurrences": e.occurrences}
                   for e in environment.runner.stats.errors.values()],
        "workers": len(getattr(environment.runner, "clients", {}) or {}),
        "status_codes": _STATUS,
    }
    with os.fdopen(int(fd), "w") as f:
        json.dump(doc, f)
`
