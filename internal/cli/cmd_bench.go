package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/loopback"
	"github.com/phptune/phptune/internal/pagecheck"
	"github.com/phptune/phptune/internal/redact"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/shellquote"
	"github.com/phptune/phptune/internal/sysctl"
)

func init() { register(newBenchCmd) }

type benchFlags struct {
	conns, threads         int
	requests               int64
	duration, warmup       time.Duration
	timeout                time.Duration
	rate                   string
	noKeepAlive, keepConn  bool
	method                 string
	headers                []string
	body, bodyFile         string
	scenario               string
	cpus                   string
	checkLength            bool
	failOnStderr           bool
	allowRemote            bool
	asJSON, quiet          bool
	appPath                string
	labFCGI                bool
	scriptFilename         string
	durationSet, methodSet bool
	cpuProfile             string
	noObserve, noSave      bool
	observeInterval        time.Duration
	reportFile             string
	redact                 []string
	applySysctl            bool
	// logSummary is what --workload-from-log found, shown before the run.
	logSummary *accesslog.Summary
	logOpt     accesslog.Options
	// eng is --engine and Locust's flags.
	eng engineFlags
	// stack is the lab benched instead of a TARGET, and its traffic.
	stack stackFlags
}

func newBenchCmd(env *Env) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench TARGET",
		Short: "Load a web server or php-fpm over HTTP/1.1 or FastCGI and measure it",
		Long: `bench sends requests to TARGET and reports throughput, latency percentiles
(HdrHistogram), errors by class, and what the generator itself cost.

TARGET is one of
  http://127.0.0.1:PORT/path?query
  fcgi://unix:/run/php/php-fpm.sock/srv/www/index.php   (socket path, then the script)
  fcgi://127.0.0.1:9000/srv/www/index.php
or --lab NAME (with --app-path and --fcgi to talk to the lab's php-fpm directly).
FastCGI requests carry the parameters nginx's fastcgi_params would send.

Closed model: -c connections each send a request as soon as the previous one
is answered, for -d DURATION or -n REQUESTS. Open model: --rate sends requests
at a fixed schedule whatever the server does ("1000", a ramp "500..2000" or
steps "500,1000,2000" over -d), and latency counts from each request's
intended send time, so queueing is not hidden (no coordinated omission).

Errors are counted by class: connect_refused, connect_timeout,
connect_backlog_full, reset, closed_early, read_timeout, protocol,
fcgi_overloaded, fcgi_stderr, length_mismatch, redirect, status_4xx,
status_5xx, unexpected_status, unexpected_body. A 3xx answer is a redirect
error: redirects are not followed, so it timed the redirect, not the page.
A request may expect a status instead (the comment workload's POST expects
WordPress's 302, a scenario line's "=> 302", a log path the log answered
mostly with a redirect): then that status is the success and any other one,
2xx included (unexpected_status), is an error.

--expect REGEX (Go RE2 syntax) counts 2xx responses whose body does not match
as unexpected_body errors: an app's error or setup page served with status
200 is then not measured as the page. It is matched against the first 64 KiB
of each body (HTTP or FastCGI, chunked or not); responses to HEAD and 204 have
none, and 3xx, 4xx and 5xx are errors already (an expected status, such as a
comment POST's 302, is a success whose body is not matched). Without --expect
no body byte is kept.

With --lab, bench first GETs the page once and prints its status, size and
<title>, warning when the page is an error, a redirect, or its title reads
like an error, setup or maintenance page.

--workload-from-log FILE replays the traffic of an nginx or Apache access log
(common or combined format, or gzip-compressed): its top 50 paths by count,
weighted by their counts, query strings kept; GET and HEAD only unless
--allow-post (POSTs then go with an empty form body: logs do not record
bodies); static files (css, js, images, fonts, media, archives, txt, html)
and 4xx answers left out; malformed lines counted and skipped. The scenario
is printed to stderr before the run.

Scenario files (--scenario) hold weighted requests, one per line:
  # WEIGHT METHOD PATH [FORM BODY]
  8 GET /index.php
  1 POST /wp-comments-post.php comment=Hi&author=b&email=b%40example.com
      X-Header: indented lines add headers to the request above
      => 302   the status the request above answers when it works (default: any 2xx)

The kernel's limits on queued and open connections (net.core.somaxconn, which
caps every listen backlog, tcp_max_syn_backlog, the port range, tcp_tw_reuse,
fs.file-max, fs.nr_open, open-file limits) are read and shown, with a lab's
backlogs as asked and as the kernel gives them. They are changed only with
--apply-sysctl (root): raised for this run, a lab's servers restarted so
their sockets listen under them, and restored at the end.

Only loopback targets are allowed unless --allow-remote is given. --json
writes the result record (docs/results-schema.md) to stdout; a progress line
goes to stderr when it is a terminal.

The command line is recorded with the result, secrets redacted first: the
values of credential headers (Authorization, Cookie, and names with key,
token, pass, password, passwd, secret, auth or session, such as X-Api-Key),
of such form fields in --body and query parameters in the URL, and a URL's
password become <redacted> in the results database, the JSON, the text and
the HTML report. --redact NAME adds a name; --body-file and --scenario
contents are never recorded.

--engine locust runs the same workload on Locust (phptune setup --with-locust
installs it) as the lab's account: -c users, --rate as each user's constant
throughput (no coordinated-omission correction: the output says how far the
achieved rate fell short), --workers N worker processes behind Locust's
master, or --master-bind ADDR:PORT --expect-workers N for workers started on
other machines (the command to start them is printed). Latencies are Locust's
rounded buckets. --warmup is a throwaway Locust run of the same load first
(not with --expect-workers: workers quit with their master). HTTP only, not a
unix socket; no -n or ramps. See docs/locust.md.`,
		Example: `  phptune bench -c 10 -d 10s http://127.0.0.1:8080/index.php
  phptune bench -c 50 --rate 2000 -d 30s --warmup 5s http://127.0.0.1:8080/
  phptune bench -c 8 -n 100000 fcgi://unix:/run/php/php8.2-fpm.sock/var/www/html/index.php
  phptune bench --lab demo --fcgi --app-path /index.php -c 10 -d 10s --json
  phptune bench --no-keepalive -c 10 -d 10s http://127.0.0.1:8080/index.php`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.durationSet = c.Flags().Changed("duration")
			f.methodSet = c.Flags().Changed("method")
			if err := checkApplySysctl(f.applySysctl); err != nil {
				return err
			}
			if err := checkRedactNames(f.redact); err != nil {
				return err
			}
			if err := f.eng.check(); err != nil {
				return err
			}
			if err := f.stack.check(len(args) > 0); err != nil {
				return err
			}
			if f.stack.ownLab() {
				// A lab of its own (--app, --docroot, or a sealed one of
				// the site's), benched as --lab and taken down at the end.
				down, err := f.upOwnLab(env)
				if err != nil {
					return err
				}
				defer down()
			}
			opt, err := f.options(env.Ctx, args, c.Flags().Changed("app-path"))
			if err != nil {
				return err
			}
			opt.Command = "phptune " + shellquote.Join(redact.Args(env.Args, f.redact))
			if err := load.CheckFDLimit(opt.Connections); err != nil {
				return usageErr("", "-c %d: %v", opt.Connections, err)
			}
			if f.cpus != "" {
				cpus, err := load.ParseCPUList(f.cpus)
				if err != nil {
					return usageErr("Try: --cpus 0 or --cpus 1-3", "--cpus: %v", err)
				}
				if err := load.PinProcess(cpus); err != nil {
					return usageErr("Try: --cpus 0 (see nproc)", "--cpus %s: %v", f.cpus, err)
				}
			}
			if !f.quiet {
				if fd, ok := env.TermStderr.(*os.File); ok && term.IsTerminal(int(fd.Fd())) {
					opt.Progress = func(p load.Progress) {
						phase := ""
						if p.Warmup {
							phase = " (warm-up)"
						}
						fmt.Fprintf(env.TermStderr, "\r\033[K%6.1fs%s  %8.0f req/s  %d requests  %d errors  p99 %.2f ms",
							p.Elapsed.Seconds(), phase, p.RPS, p.Requests, p.Errors, p.P99LastMs)
					}
				}
			}
			if f.cpuProfile != "" {
				pf, err := os.Create(f.cpuProfile)
				if err != nil {
					return usageErr("", "--cpuprofile: %v", err)
				}
				defer pf.Close()
				if err := pprof.StartCPUProfile(pf); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if f.logSummary != nil {
				f.logSummary.Print(env.Stderr, f.stack.fromLog, f.logOpt)
			}
			// The lab the load goes to, when there is one: its
			// configuration asks for the backlogs.
			var benchLab *lab.Lab
			if f.stack.lab != "" {
				if l, lerr := lab.Open(f.stack.lab); lerr == nil {
					benchLab = l
				}
			}
			var kernelRun *sysctl.Run
			if f.applySysctl {
				need := sysctl.NeedOf(nil, opt.Connections)
				if benchLab != nil {
					need = sysctl.NeedOf([]knob.Config{benchLab.Config}, opt.Connections)
				}
				if kernelRun, err = applySysctl(env, need, "bench"); err != nil {
					return err
				}
				say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "bench: "+format+"\n", a...) }
				// A socket keeps the backlog it opened with: the lab's
				// servers listen again under the raised settings, and
				// again under the host's own once they are restored.
				if benchLab != nil && kernelNeedsRestart(kernelRun) {
					defer restartLab(env.Ctx, benchLab, "its sockets have the host's own limits again", say)
				}
				defer restoreSysctl(env, kernelRun, "bench")
				if benchLab != nil && kernelNeedsRestart(kernelRun) {
					restartLab(env.Ctx, benchLab, "its sockets listen under the raised limits", say)
				}
			}
			// The page measured, looked at once before it is loaded: an
			// error page answered with 200 must not pass for the app.
			var pageWarnings []string
			if f.stack.lab != "" {
				if l, lerr := lab.Open(f.stack.lab); lerr == nil {
					page, perr := labstack.CheckPage(env.Ctx, l, labstack.Workload{Requests: opt.Requests, Host: f.stack.host})
					if perr != nil {
						pageWarnings = append(pageWarnings, fmt.Sprintf("page check: %v", perr))
					} else {
						fmt.Fprintf(env.Stderr, "bench: page %s\n", redact.Text(page.String(), f.redact))
						pageWarnings = labstack.PageWarnings(pagecheck.Page{}, page)
					}
					for _, wmsg := range pageWarnings {
						fmt.Fprintf(env.Stderr, "bench: WARNING: %s\n", redact.Text(wmsg, f.redact))
					}
				}
			}
			// The observer watches a lab's processes (and this one, the
			// generator) while the load runs; its derived figures cover
			// the measured part, warm-up excluded.
			run := func(ctx context.Context) (*results.Bench, error) { return load.Run(ctx, opt) }
			if f.eng.engine == "locust" {
				if run, err = f.eng.locustRun(env.Ctx, opt, benchLab, f.redact, env.Stderr); err != nil {
					return err
				}
			}
			var res *results.Bench
			var logs *labstack.ErrorLogs
			var blocked *labstack.BlockedCounter
			if f.stack.lab != "" {
				l, lerr := lab.Open(f.stack.lab)
				if lerr != nil {
					return lerr
				}
				// The servers' error logs, from the end of the warm-up.
				logs = labstack.NewErrorLogs(l)
				opt.OnMeasure = logs.Mark
				// What a sealed lab's code tries to reach outside.
				blocked = labstack.NewBlockedCounter(env.Ctx, l)
				if !f.noObserve {
					res, err = labstack.Observe(env.Ctx, l, f.observeInterval, run)
				} else {
					res, err = run(env.Ctx)
				}
			} else {
				res, err = run(env.Ctx)
			}
			if opt.Progress != nil {
				fmt.Fprint(env.TermStderr, "\r\033[K")
			}
			if res == nil {
				return err
			}
			if logs != nil {
				logs.Attach(res)
			}
			if blocked != nil {
				var warn string
				if res.Blocked, warn = blocked.Since(env.Ctx); warn != "" {
					res.Warnings = append(res.Warnings, warn)
				}
			}
			res.Environment = environment(env.Ctx)
			if benchLab != nil {
				completeKernelLimits(res.Environment.KernelLimits, benchLab, kernelRun, benchLab.Config)
			} else {
				completeKernelLimits(res.Environment.KernelLimits, nil, kernelRun, nil)
			}
			res.Warnings = append(pageWarnings, res.Warnings...)
			// From here on the result is what is stored and shown: its
			// target URL, request URIs and messages hold no secret.
			if rerr := redact.Value(res, f.redact); rerr != nil {
				return rerr
			}
			if !f.noSave {
				app := ""
				if f.stack.lab != "" {
					if l, lerr := lab.Open(f.stack.lab); lerr == nil {
						app = l.App
					}
				}
				path, serr := saveBenchRun(context.WithoutCancel(env.Ctx), res, app, f.appPath, f.reportFile, f.redact)
				if serr != nil {
					fmt.Fprintf(env.Stderr, "bench: saving the result: %v\n", serr)
				} else {
					fmt.Fprintf(env.Stderr, "bench: stored as run %s; report: %s\n", res.ID, path)
				}
			}
			if f.asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				if jerr := enc.Encode(res); jerr != nil {
					return jerr
				}
			} else if terr := report.BenchText(env.Stdout, res); terr != nil {
				return terr
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.conns, "connections", "c", 10, "concurrent connections (--engine locust: users)")
	fl.Int64VarP(&f.requests, "requests", "n", 0, "stop after this many requests (closed model)")
	fl.DurationVarP(&f.duration, "duration", "d", 10*time.Second, "measured duration (after --warmup)")
	fl.DurationVar(&f.warmup, "warmup", 0, "run this long first and discard it")
	fl.StringVar(&f.rate, "rate", "", `open model: requests/second ("1000", ramp "500..2000", steps "500,1000,2000")`)
	fl.IntVarP(&f.threads, "threads", "t", 0, "event loops (OS threads); default: CPUs available, at most -c")
	fl.BoolVar(&f.noKeepAlive, "no-keepalive", false, "a new connection per request (HTTP Connection: close; FastCGI without FCGI_KEEP_CONN)")
	fl.BoolVar(&f.keepConn, "fcgi-keep-conn", false, "FastCGI: keep connections open (FCGI_KEEP_CONN); php-fpm then ties a worker to each connection, so use -c <= pm.max_children")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "connect and response timeout per request")
	fl.StringVarP(&f.method, "method", "m", "GET", "HTTP method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, `request header "Name: value" (repeatable)`)
	fl.StringVar(&f.body, "body", "", "request body; a form body is sent as application/x-www-form-urlencoded unless -H sets Content-Type (implies POST)")
	fl.StringVar(&f.bodyFile, "body-file", "", "read the request body from a file (implies POST)")
	fl.StringVar(&f.scenario, "scenario", "", "file of weighted requests (see above)")
	// bench's --cpus pins the generator, as it did before the stack
	// flags: the lab's CPUs are lab up's --cpus (see stackFlags.ownCPUs).
	fl.StringVar(&f.cpus, "cpus", "", `pin the generator (not the lab) to these CPUs ("0", "2-3")`)
	f.stack.targetOK, f.stack.ownCPUs = true, true
	f.stack.add(fl, "bench", "")
	fl.BoolVar(&f.checkLength, "check-length", false, "count bodies whose length differs from the first response as length_mismatch errors")
	fl.BoolVar(&f.failOnStderr, "fail-on-stderr", false, "count FastCGI responses with stderr output (PHP notices, errors) as errors")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow a target that is not on loopback")
	fl.BoolVar(&f.asJSON, "json", false, "write the result as JSON to stdout")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress line")
	fl.StringVar(&f.appPath, "app-path", "/", "with --lab: the request path")
	fl.BoolVar(&f.labFCGI, "fcgi", false, "with --lab: talk FastCGI to the lab's php-fpm instead of HTTP to its web server")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the generator to this file (go tool pprof)")
	fl.BoolVar(&f.noObserve, "no-observe", false, "with --lab: do not sample the lab's processes, fpm status and queues")
	fl.DurationVar(&f.observeInterval, "observe-interval", time.Second, "with --lab: time between observer samples")
	fl.BoolVar(&f.noSave, "no-save", false, "do not store the result in the results database nor write the HTML report")
	fl.StringVar(&f.reportFile, "report", "", "HTML report file (default ./phptune-report-RUN.html)")
	fl.StringVar(&f.scriptFilename, "script-filename", "", "FastCGI: SCRIPT_FILENAME to send instead of the one derived from the target")
	addApplySysctlFlag(fl, &f.applySysctl)
	addRedactFlag(fl, &f.redact)
	f.eng.add(fl)
	return cmd
}

// options turns the flags into load.Options, refusing anything invalid
// before a single connection is made.
func (f *benchFlags) options(ctx context.Context, args []string, appPathSet bool) (load.Options, error) {
	var o load.Options
	help := "Try: phptune bench --help"
	userScript, labFront := f.scriptFilename, ""
	switch {
	case f.stack.lab != "" && len(args) > 0:
		return o, usageErr(help, "give either TARGET or --lab, not both")
	case f.stack.lab == "" && len(args) == 0:
		return o, usageErr("Try: phptune bench http://127.0.0.1:8080/ or phptune bench --lab NAME", "no target")
	case f.stack.lab == "" && (f.labFCGI || appPathSet):
		return o, usageErr(help, "--fcgi and --app-path go with --lab NAME; for other targets put them in the URL (fcgi://...)")
	}
	if f.conns < 1 {
		return o, usageErr("Try: -c 10", "-c %d: need at least one connection", f.conns)
	}
	if f.threads < 0 {
		return o, usageErr("Try: -t 2", "--threads %d: must be positive", f.threads)
	}
	if f.requests < 0 {
		return o, usageErr("Try: -n 10000", "-n %d: must be positive", f.requests)
	}
	if f.duration <= 0 || f.warmup < 0 || f.timeout <= 0 {
		return o, usageErr("Try: -d 10s --warmup 2s --timeout 5s", "-d, --warmup and --timeout must be positive durations")
	}
	if f.stack.lab != "" && !f.noObserve && f.observeInterval < 50*time.Millisecond {
		return o, usageErr("Try: --observe-interval 1s (or --no-observe)", "--observe-interval %v: below 50ms /proc CPU times (10 ms ticks) only measure noise", f.observeInterval)
	}
	if f.requests > 0 && f.durationSet {
		return o, usageErr("Try: -n 10000 or -d 10s", "give -n or -d, not both")
	}
	if f.requests > 0 && int64(f.conns) > f.requests {
		return o, usageErr(fmt.Sprintf("Try: -c %d", f.requests), "-c %d is more than -n %d requests", f.conns, f.requests)
	}
	o.Connections, o.Threads, o.N, o.Warmup, o.Timeout = f.conns, f.threads, f.requests, f.warmup, f.timeout
	if f.requests == 0 {
		o.Duration = f.duration
	}
	if f.rate != "" {
		if f.requests > 0 {
			return o, usageErr("Try: --rate 1000 -d 30s", "--rate runs for a duration (-d), not -n requests")
		}
		p, err := load.ParseRate(f.rate, o.Duration)
		if err != nil {
			return o, usageErr(`Try: --rate 1000, --rate 500..2000 or --rate 500,1000,2000`, "--rate: %v", err)
		}
		o.Pacer = p
	}
	// HTTP keeps connections alive unless told; FastCGI does not unless
	// told, like nginx (fastcgi_keep_conn off): php-fpm gives a kept
	// connection its worker until the connection closes, so with more
	// connections than workers the extra ones would starve.
	o.KeepAlive = !f.noKeepAlive
	if f.keepConn && f.noKeepAlive {
		return o, usageErr(help, "--fcgi-keep-conn and --no-keepalive contradict each other")
	}
	o.CheckLength, o.FailOnStderr = f.checkLength, f.failOnStderr
	if _, err := load.CompileExpect(f.stack.expect); err != nil {
		return o, usageErr(`Try: --expect '<title>My blog' (quoted for the shell)`, "--expect: %v", err)
	}
	o.Expect = f.stack.expect
	sources := 0
	for _, set := range []bool{f.scenario != "", f.stack.workload != "", f.stack.fromLog != ""} {
		if set {
			sources++
		}
	}
	switch {
	case sources > 1:
		return o, usageErr(help, "give one of --scenario, --workload and --workload-from-log")
	case sources == 1 && (f.body != "" || f.bodyFile != "" || f.methodSet || appPathSet):
		return o, usageErr(help, "--scenario, --workload and --workload-from-log bring their own requests: drop -m, --body, --body-file and --app-path")
	case f.stack.workload != "" && f.stack.lab == "":
		return o, usageErr("Try: phptune bench --lab NAME --workload mix", "--workload goes with --lab NAME")
	case f.stack.allowPost && f.stack.fromLog == "":
		return o, usageErr(help, "--allow-post goes with --workload-from-log FILE")
	}
	if f.stack.fromLog != "" {
		f.logOpt = accesslog.Options{AllowPost: f.stack.allowPost}
		fh, err := os.Open(f.stack.fromLog)
		if err != nil {
			return o, usageErr("", "--workload-from-log: %v", err)
		}
		sum, err := accesslog.Read(fh, f.logOpt)
		fh.Close()
		if err != nil {
			return o, usageErr("Give an nginx or Apache access log in the common or combined format", "--workload-from-log %s: %v", f.stack.fromLog, err)
		}
		f.logSummary = sum
	}

	// The request(s).
	hdr := http.Header{}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(strings.TrimSpace(name), " \t") {
			return o, usageErr(`Try: -H "Accept: text/html"`, "-H %q: want \"Name: value\"", h)
		}
		hdr.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	var body []byte
	switch {
	case f.body != "" && f.bodyFile != "":
		return o, usageErr(help, "give --body or --body-file, not both")
	case f.body != "":
		body = []byte(f.body)
	case f.bodyFile != "":
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			return o, usageErr("", "--body-file: %v", err)
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
		return o, usageErr("Try: -m POST", "-m %q is not an HTTP method", f.method)
	}

	// The target.
	var reqPath string
	if f.stack.lab != "" {
		l, err := lab.Open(f.stack.lab)
		if err != nil {
			return o, usageErr("Try: phptune lab status", "--lab %s: %v", f.stack.lab, err)
		}
		if !strings.HasPrefix(f.appPath, "/") {
			return o, usageErr("Try: --app-path /index.php", "--app-path %q must start with /", f.appPath)
		}
		reqPath = f.appPath
		if f.labFCGI {
			if l.FPMListen == "" {
				return o, usageErr("Leave --fcgi out to load it over HTTP", "--fcgi: lab %s runs no php-fpm (server=%s runs PHP inside the web server)", l.Name, l.Config.Server())
			}
			network, addr, ok := strings.Cut(l.FPMListen, ":")
			if !ok || (network != "unix" && network != "tcp") {
				return o, fmt.Errorf("lab %s records php-fpm's socket as %q, which is neither unix:PATH nor tcp:HOST:PORT", l.Name, l.FPMListen)
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
			labFront = l.ScriptFilename
			p, _, _ := strings.Cut(reqPath, "?")
			if f.scriptFilename == "" && !strings.HasSuffix(p, ".php") {
				// Not a script path: the front controller serves it, as
				// nginx's try_files would arrange.
				f.scriptFilename = l.ScriptFilename
			}
		} else {
			// Over HTTP: a sealed site lab through its web server's
			// unix socket with the site's own Host, any other at its
			// URL (labstack.Target).
			if o.Target, err = labstack.TargetFor(l, labstack.Workload{}, reqPath); err != nil {
				return o, err
			}
		}
	} else {
		t, p, err := parseTarget(args[0])
		if err != nil {
			return o, err
		}
		o.Target, reqPath = t, p
	}
	if err := checkHostFlag(f.stack.host); err != nil {
		return o, err
	}
	if f.stack.host != "" {
		o.Target.Host = f.stack.host
	}
	if o.Target.Protocol == "fcgi" {
		o.KeepAlive = f.keepConn
	} else if f.keepConn {
		return o, usageErr(help, "--fcgi-keep-conn is for FastCGI targets")
	}
	if err := checkLoopback(o.Target, f.allowRemote); err != nil {
		return o, err
	}

	var fromFile []load.Request
	switch {
	case f.logSummary != nil:
		fromFile = f.logSummary.Requests()
	case f.stack.workload != "":
		l, err := lab.Open(f.stack.lab)
		if err != nil {
			return o, usageErr("Try: phptune lab status", "--lab %s: %v", f.stack.lab, err)
		}
		w, err := labstack.ParseWorkload(ctx, l, f.stack.workload)
		if err != nil {
			return o, usageErr("Try: --workload front, comment, mix, /path or a scenario file", "--workload: %v", err)
		}
		fromFile = w.Requests
	}
	if fromFile != nil {
		for i := range fromFile {
			for k, v := range hdr {
				if fromFile[i].Header == nil {
					fromFile[i].Header = http.Header{}
				}
				if fromFile[i].Header.Get(k) == "" {
					fromFile[i].Header[k] = v
				}
			}
			// Over FastCGI to a lab, each path goes to its script: a .php
			// path to itself, anything else to the front controller, as
			// nginx's try_files would send it.
			p, _, _ := strings.Cut(fromFile[i].Path, "?")
			switch {
			case fromFile[i].ScriptFilename != "":
			case userScript != "":
				fromFile[i].ScriptFilename = userScript
			case labFront != "" && !strings.HasSuffix(p, ".php"):
				fromFile[i].ScriptFilename = labFront
			}
		}
		o.Requests = fromFile
	} else if f.scenario != "" {
		fh, err := os.Open(f.scenario)
		if err != nil {
			return o, usageErr("", "--scenario: %v", err)
		}
		reqs, err := load.ParseScenario(fh)
		fh.Close()
		if err != nil {
			return o, usageErr("Each line: WEIGHT METHOD PATH [BODY], e.g. 1 GET /index.php", "--scenario %s: %v", f.scenario, err)
		}
		for i := range reqs {
			for k, v := range hdr {
				if reqs[i].Header == nil {
					reqs[i].Header = http.Header{}
				}
				if reqs[i].Header.Get(k) == "" {
					reqs[i].Header[k] = v
				}
			}
			reqs[i].ScriptFilename = f.scriptFilename
		}
		o.Requests = reqs
	} else {
		o.Requests = []load.Request{{Method: method, Path: reqPath, Header: hdr, Body: body, ScriptFilename: f.scriptFilename}}
	}
	if err := o.Validate(); err != nil {
		return o, usageErr(help, "%v", err)
	}
	return o, nil
}

// parseTarget reads http:// and fcgi:// targets.
func parseTarget(s string) (load.Target, string, error) {
	hint := "Try: http://127.0.0.1:8080/index.php, fcgi://unix:/run/php/php8.2-fpm.sock/var/www/html/index.php or fcgi://127.0.0.1:9000/var/www/html/index.php"
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return load.Target{}, "", usageErr(hint, "target %q has no scheme", s)
	}
	switch scheme {
	case "http":
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return load.Target{}, "", usageErr(hint, "target %q is not a URL", s)
		}
		host := u.Hostname()
		port := u.Port()
		if port == "" {
			port = "80"
		}
		if host == "localhost" {
			host = "127.0.0.1"
		}
		if net.ParseIP(host) == nil {
			return load.Target{}, "", usageErr(hint, "target host %q: use an IP address (the generator does no DNS lookups)", u.Hostname())
		}
		p := u.RequestURI()
		return load.Target{Protocol: "http", Network: "tcp", Address: net.JoinHostPort(host, port), Host: u.Host, Display: s}, p, nil
	case "https":
		return load.Target{}, "", usageErr(hint, "https is not supported: bench the server's plain HTTP port or php-fpm directly")
	case "fcgi":
		script, query, _ := strings.Cut(rest, "?")
		var network, addr string
		if after, ok := strings.CutPrefix(script, "unix:"); ok {
			sock, sc, err := splitSocket(after)
			if err != nil {
				return load.Target{}, "", usageErr(hint, "target %q: %v", s, err)
			}
			network, addr, script = "unix", sock, sc
		} else {
			i := strings.IndexByte(script, '/')
			if i < 0 {
				return load.Target{}, "", usageErr(hint, "target %q: no script path after the address", s)
			}
			network, addr, script = "tcp", script[:i], script[i:]
			h, _, err := net.SplitHostPort(addr)
			if err != nil {
				return load.Target{}, "", usageErr(hint, "target %q: %q is not HOST:PORT", s, addr)
			}
			if h == "localhost" {
				addr = strings.Replace(addr, "localhost", "127.0.0.1", 1)
			}
		}
		if !path.IsAbs(script) || path.Clean(script) != script || strings.HasSuffix(script, "/") {
			return load.Target{}, "", usageErr(hint, "target %q: the script %q must be an absolute file path", s, script)
		}
		reqPath := "/" + path.Base(script)
		if query != "" {
			reqPath += "?" + query
		}
		return load.Target{Protocol: "fcgi", Network: network, Address: addr, DocRoot: path.Dir(script), Display: s}, reqPath, nil
	default:
		return load.Target{}, "", usageErr(hint, "target %q: scheme %q is not http or fcgi", s, scheme)
	}
}

// splitSocket separates "/run/php/fpm.sock/var/www/index.php" into the
// socket and the script: the socket is the longest existing prefix that is a
// socket, or failing that, the prefix ending in ".sock".
func splitSocket(p string) (string, string, error) {
	parts := strings.Split(p, "/")
	for i := len(parts) - 1; i > 1; i-- {
		cand := strings.Join(parts[:i], "/")
		if st, err := os.Stat(cand); err == nil && st.Mode()&os.ModeSocket != 0 {
			return cand, "/" + strings.Join(parts[i:], "/"), nil
		}
	}
	for i := 2; i < len(parts); i++ {
		if strings.HasSuffix(parts[i-1], ".sock") {
			return strings.Join(parts[:i], "/"), "/" + strings.Join(parts[i:], "/"), nil
		}
	}
	return "", "", fmt.Errorf("cannot tell the socket from the script in %q: no prefix is an existing socket (is php-fpm running?)", p)
}

// checkLoopback refuses a TCP target whose host is not a loopback IP
// literal (loopback.IP), unless allow (--allow-remote).
func checkLoopback(t load.Target, allow bool) error {
	if t.Network == "unix" || allow {
		return nil
	}
	host, _, err := net.SplitHostPort(t.Address)
	if err != nil {
		return usageErr("", "target address %q: %v", t.Address, err)
	}
	if loopback.IP(host) {
		return nil
	}
	return usageErr("Add --allow-remote if you mean it (and own that server).", "target %s is not on loopback: phptune refuses to load other machines by default", t.Address)
}
