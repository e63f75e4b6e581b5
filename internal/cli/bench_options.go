package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/accesslog"
	"github.com/phptune/phptune/internal/traffic/load"
)

// benchHelp is the hint of bench's usage errors that have no better one.
const benchHelp = "Try: phptune bench --help"

// openLabFunc opens the lab of --lab when options needs it: bench's
// stack session attaches to it, export's files only read it (lab.Open).
type openLabFunc func(name string) (*lab.Lab, error)

// options turns the flags into load.Options, refusing anything invalid
// before a single connection is made. appPathSet says --app-path was
// given; openLab opens --lab's lab, once, after the checks that need no
// lab.
func (f *benchFlags) options(ctx context.Context, args []string, appPathSet bool, openLab openLabFunc) (load.Options, error) {
	var o load.Options
	f.appPathSet = appPathSet
	userScript := f.scriptFilename
	if err := f.checkTargetChoice(args); err != nil {
		return o, err
	}
	if err := f.loadModel(&o); err != nil {
		return o, err
	}
	if err := f.readSources(); err != nil {
		return o, err
	}
	method, hdr, body, err := f.request()
	if err != nil {
		return o, err
	}
	reqPath, labFront, l, err := f.target(&o, args, openLab)
	if err != nil {
		return o, err
	}
	if err := f.connection(&o); err != nil {
		return o, err
	}
	reqs, err := f.requestList(ctx, l, hdr, userScript, labFront)
	if err != nil {
		return o, err
	}
	if reqs == nil {
		reqs = []load.Request{{Method: method, Path: reqPath, Header: hdr, Body: body, ScriptFilename: f.scriptFilename}}
	}
	o.Requests = reqs
	if err := o.Validate(); err != nil {
		return o, usageErr(benchHelp, "%v", err)
	}
	return o, nil
}

// checkTargetChoice refuses a TARGET with --lab, neither of them, and the
// lab's flags without a lab.
func (f *benchFlags) checkTargetChoice(args []string) error {
	switch {
	case f.stack.lab != "" && len(args) > 0:
		return usageErr(benchHelp, "give either TARGET or --lab, not both")
	case f.stack.lab == "" && len(args) == 0:
		return usageErr("Try: phptune bench http://127.0.0.1:8080/ or phptune bench --lab NAME", "no target")
	case f.stack.lab == "" && (f.labFCGI || f.appPathSet):
		return usageErr(benchHelp, "--fcgi and --app-path go with --lab NAME; for other targets put them in the URL (fcgi://...)")
	}
	return nil
}

// loadModel sets o's connections, threads, length (-n or -d), warm-up,
// timeout, pacing, keep-alive and body checks from the flags.
func (f *benchFlags) loadModel(o *load.Options) error {
	if err := f.checkNumbers(); err != nil {
		return err
	}
	o.Connections, o.Threads, o.N, o.Warmup, o.Timeout = f.conns, f.threads, f.requests, f.warmup, f.timeout
	if f.requests == 0 {
		o.Duration = f.duration
	}
	if f.rate != "" {
		if f.requests > 0 {
			return usageErr("Try: --rate 1000 -d 30s", "--rate runs for a duration (-d), not -n requests")
		}
		p, err := load.ParseRate(f.rate, o.Duration)
		if err != nil {
			return usageErr(`Try: --rate 1000, --rate 500..2000 or --rate 500,1000,2000`, "--rate: %v", err)
		}
		o.Pacer = p
	}
	// HTTP keeps connections alive unless told; FastCGI does not unless
	// told, like nginx (fastcgi_keep_conn off): php-fpm gives a kept
	// connection its worker until the connection closes, so with more
	// connections than workers the extra ones would starve.
	o.KeepAlive = !f.noKeepAlive
	if f.keepConn && f.noKeepAlive {
		return usageErr(benchHelp, "--fcgi-keep-conn and --no-keepalive contradict each other")
	}
	o.CheckLength, o.FailOnStderr = f.checkLength, f.failOnStderr
	if _, err := load.CompileExpect(f.stack.expect); err != nil {
		return usageErr(`Try: --expect '<title>My blog' (quoted for the shell)`, "--expect: %v", err)
	}
	o.Expect = f.stack.expect
	return nil
}

// checkNumbers refuses counts and durations out of range.
func (f *benchFlags) checkNumbers() error {
	switch {
	case f.conns < 1:
		return usageErr("Try: -c 10", "-c %d: need at least one connection", f.conns)
	case f.threads < 0:
		return usageErr("Try: -t 2", "--threads %d: must be positive", f.threads)
	case f.requests < 0:
		return usageErr("Try: -n 10000", "-n %d: must be positive", f.requests)
	case f.duration <= 0 || f.warmup < 0 || f.timeout <= 0:
		return usageErr("Try: -d 10s --warmup 2s --timeout 5s", "-d, --warmup and --timeout must be positive durations")
	case f.stack.lab != "" && !f.noObserve && f.observeInterval < 50*time.Millisecond:
		return usageErr("Try: --observe-interval 1s (or --no-observe)", "--observe-interval %v: below 50ms /proc CPU times (10 ms ticks) only measure noise", f.observeInterval)
	case f.requests > 0 && f.durationSet:
		return usageErr("Try: -n 10000 or -d 10s", "give -n or -d, not both")
	case f.requests > 0 && int64(f.conns) > f.requests:
		return usageErr(fmt.Sprintf("Try: -c %d", f.requests), "-c %d is more than -n %d requests", f.conns, f.requests)
	}
	return nil
}

// readSources refuses more than one of --scenario, --workload and
// --workload-from-log, and flags they replace, and reads the access log
// of --workload-from-log.
func (f *benchFlags) readSources() error {
	sources := 0
	for _, set := range []bool{f.scenario != "", f.stack.workload != "", f.stack.fromLog != ""} {
		if set {
			sources++
		}
	}
	switch {
	case sources > 1:
		return usageErr(benchHelp, "give one of --scenario, --workload and --workload-from-log")
	case sources == 1 && (f.body != "" || f.bodyFile != "" || f.methodSet || f.appPathSet):
		return usageErr(benchHelp, "--scenario, --workload and --workload-from-log bring their own requests: drop -m, --body, --body-file and --app-path")
	case f.stack.workload != "" && f.stack.lab == "":
		return usageErr("Try: phptune bench --lab NAME --workload mix", "--workload goes with --lab NAME")
	case f.stack.allowPost && f.stack.fromLog == "":
		return usageErr(benchHelp, "--allow-post goes with --workload-from-log FILE")
	}
	if f.stack.fromLog == "" {
		return nil
	}
	if f.stack.fromLog == vhostLog {
		// --lab's: a lab of its own's was found by upOwnLab.
		l, err := lab.Open(f.stack.lab)
		if err != nil {
			return usageErr("See the running labs with: phptune lab status", "--lab %s: %v", f.stack.lab, err)
		}
		if f.stack.fromLog, err = vhostLogPath(nil, l); err != nil {
			return err
		}
	}
	f.logOpt = accesslog.Options{AllowPost: f.stack.allowPost}
	sum, err := accesslog.ReadFile(f.stack.fromLog, f.logOpt)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return usageErr("Give an access log you can read", "--workload-from-log: %v", err)
	}
	if err != nil {
		return usageErr("Give an nginx or Apache access log in the common or combined format", "--workload-from-log %s: %v", f.stack.fromLog, err)
	}
	f.logSummary = sum
	return nil
}

// request is the single request of -m, -H, --body and --body-file: its
// method, headers (also added to a scenario's or workload's requests) and
// body.
func (f *benchFlags) request() (string, http.Header, []byte, error) {
	hdr := http.Header{}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(strings.TrimSpace(name), " \t") {
			return "", nil, nil, usageErr(`Try: -H "Accept: text/html"`, "-H %q: want \"Name: value\"", h)
		}
		hdr.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	var body []byte
	switch {
	case f.body != "" && f.bodyFile != "":
		return "", nil, nil, usageErr(benchHelp, "give --body or --body-file, not both")
	case f.body != "":
		body = []byte(f.body)
	case f.bodyFile != "":
		b, err := load.ReadBodyFile(f.bodyFile)
		if err != nil {
			return "", nil, nil, usageErr("Give a file you can read", "--body-file: %v", err)
		}
		body = b
	}
	method := strings.ToUpper(f.method)
	if body != nil && !f.methodSet {
		method = "POST"
	}
	if body != nil && hdr.Get("Content-Type") == "" {
		hdr.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == "" || strings.IndexFunc(method, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
		return "", nil, nil, usageErr("Try: -m POST", "-m %q is not an HTTP method", f.method)
	}
	return method, hdr, body, nil
}

// target sets o.Target to TARGET or the lab's (opened with openLab), and
// returns the request path, over FastCGI to a lab its front controller,
// and the lab.
func (f *benchFlags) target(o *load.Options, args []string, openLab openLabFunc) (reqPath, labFront string, l *lab.Lab, err error) {
	if f.stack.lab == "" {
		t, p, err := parseTarget(args[0])
		if err != nil {
			return "", "", nil, err
		}
		o.Target = t
		return p, "", nil, nil
	}
	l, err = openLab(f.stack.lab)
	if err != nil {
		return "", "", nil, usageErr("Try: phptune lab status", "--lab %s: %v", f.stack.lab, err)
	}
	if !strings.HasPrefix(f.appPath, "/") {
		return "", "", l, usageErr("Try: --app-path /index.php", "--app-path %q must start with /", f.appPath)
	}
	if !f.labFCGI {
		// Over HTTP: a sealed site lab through its web server's unix
		// socket with the site's own Host, any other at its URL
		// (labstack.Target).
		o.Target, err = labstack.TargetFor(l, workload.Workload{}, f.appPath)
		return f.appPath, "", l, err
	}
	return f.appPath, l.ScriptFilename, l, f.labFCGITarget(o, l)
}

// labFCGITarget points o at lab l's php-fpm (--fcgi).
func (f *benchFlags) labFCGITarget(o *load.Options, l *lab.Lab) error {
	reqPath := f.appPath
	if l.FPMListen == "" {
		return usageErr("Leave --fcgi out to load it over HTTP", "--fcgi: lab %s runs no php-fpm (server=%s runs PHP inside the web server)", l.Name, l.Config.Server())
	}
	network, addr, ok := strings.Cut(l.FPMListen, ":")
	if !ok || (network != "unix" && network != "tcp") {
		return fmt.Errorf("lab %s records php-fpm's socket as %q, which is neither unix:PATH nor tcp:HOST:PORT; take the lab down and up again: phptune lab down %s", l.Name, l.FPMListen, l.Name)
	}
	u, _ := url.Parse(l.URL)
	host := "localhost"
	if u != nil && u.Host != "" {
		host = u.Host
	}
	o.Target = load.Target{Protocol: "fcgi", Network: network, Address: addr, Host: host, DocRoot: l.DocRoot,
		Display: "fcgi://" + l.FPMListen + " (lab " + l.Name + ") " + reqPath,
		// The socket's directory is the lab's to write: every
		// connection checks who listens before it sends.
		CheckPeer: true, PeerUID: l.PeerUID()}
	p, _, _ := strings.Cut(reqPath, "?")
	if f.scriptFilename == "" && !strings.HasSuffix(p, ".php") {
		// Not a script path: the front controller serves it, as nginx's
		// try_files would arrange.
		f.scriptFilename = l.ScriptFilename
	}
	return nil
}

// connection applies --host and --fcgi-keep-conn to o's target and
// refuses a target off loopback without --allow-remote.
func (f *benchFlags) connection(o *load.Options) error {
	if err := checkHostFlag(f.stack.host); err != nil {
		return err
	}
	if f.stack.host != "" {
		o.Target.Host = f.stack.host
	}
	if o.Target.Protocol == "fcgi" {
		o.KeepAlive = f.keepConn
	} else if f.keepConn {
		return usageErr(benchHelp, "--fcgi-keep-conn is for FastCGI targets")
	}
	return checkLoopback(o.Target, f.allowRemote)
}

// requestList is the requests of --workload-from-log, --workload (parsed
// on l, --lab's lab) or --scenario, with -H's headers added (nil: none of
// them, the single request of the flags). userScript is --script-filename
// as given, labFront the lab's front controller over FastCGI.
func (f *benchFlags) requestList(ctx context.Context, l *lab.Lab, hdr http.Header, userScript, labFront string) ([]load.Request, error) {
	var reqs []load.Request
	switch {
	case f.logSummary != nil:
		reqs = f.logSummary.Requests()
	case f.stack.workload != "":
		if l == nil {
			return nil, usageErr("Try: phptune bench --lab NAME --workload mix", "--workload goes with --lab NAME")
		}
		w, err := workload.Parse(ctx, l, f.stack.workload)
		if err != nil {
			return nil, usageErr("Try: --workload front, comment, mix, /path or a scenario file", "--workload: %v", err)
		}
		reqs = w.Requests
	case f.scenario != "":
		return f.scenarioRequests(hdr)
	default:
		return nil, nil
	}
	for i := range reqs {
		addHeaders(&reqs[i], hdr)
		// Over FastCGI to a lab, each path goes to its script: a .php
		// path to itself, anything else to the front controller, as
		// nginx's try_files would send it.
		p, _, _ := strings.Cut(reqs[i].Path, "?")
		switch {
		case reqs[i].ScriptFilename != "":
		case userScript != "":
			reqs[i].ScriptFilename = userScript
		case labFront != "" && !strings.HasSuffix(p, ".php"):
			reqs[i].ScriptFilename = labFront
		}
	}
	return reqs, nil
}

// scenarioRequests are --scenario's requests, with -H's headers and
// --script-filename.
func (f *benchFlags) scenarioRequests(hdr http.Header) ([]load.Request, error) {
	reqs, err := load.ReadScenarioFile(f.scenario)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, usageErr("Give a scenario file you can read", "--scenario: %v", err)
	}
	if err != nil {
		return nil, usageErr("Each line: WEIGHT METHOD PATH [BODY], e.g. 1 GET /index.php", "--scenario %s: %v", f.scenario, err)
	}
	for i := range reqs {
		addHeaders(&reqs[i], hdr)
		reqs[i].ScriptFilename = f.scriptFilename
	}
	return reqs, nil
}

// addHeaders adds hdr's headers to r where r does not set them itself.
func addHeaders(r *load.Request, hdr http.Header) {
	for k, v := range hdr {
		if r.Header == nil {
			r.Header = http.Header{}
		}
		if r.Header.Get(k) == "" {
			r.Header[k] = v
		}
	}
}
