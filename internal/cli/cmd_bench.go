package cli

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/traffic/accesslog"
)

func init() { register(newBenchCmd) }

// benchFlags are phptune bench's command line.
type benchFlags struct {
	conns, threads        int
	requests              int64
	duration, warmup      time.Duration
	timeout               time.Duration
	rate                  string
	noKeepAlive, keepConn bool
	method                string
	headers               []string
	body, bodyFile        string
	scenario              string
	cpus                  string
	checkLength           bool
	failOnStderr          bool
	allowRemote           bool
	asJSON, quiet         bool
	appPath               string
	labFCGI               bool
	scriptFilename        string
	// durationSet, methodSet and appPathSet say which of -d, -m and
	// --app-path were given.
	durationSet, methodSet, appPathSet bool
	cpuProfile                         string
	noObserve, noSave                  bool
	observeInterval                    time.Duration
	reportFile                         string
	redact                             []string
	applySysctl                        bool
	// logSummary is what --workload-from-log found, shown before the run.
	logSummary *accesslog.Summary
	logOpt     accesslog.Options
	// eng is --engine and Locust's flags.
	eng engineFlags
	// stack is the lab benched instead of a TARGET, and its traffic.
	stack stackFlags
}

func newBenchCmd(env *Env) *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:     "bench TARGET",
		Short:   "Load a web server or php-fpm over HTTP/1.1 or FastCGI and measure it",
		Long:    benchLong,
		Example: benchExample,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.durationSet = c.Flags().Changed("duration")
			f.methodSet = c.Flags().Changed("method")
			f.appPathSet = c.Flags().Changed("app-path")
			if err := f.validate(len(args) > 0); err != nil {
				return err
			}
			return runBench(env, f, args)
		},
	}
	f.add(cmd.Flags())
	return cmd
}

// add registers bench's flags on fl.
func (f *benchFlags) add(fl *pflag.FlagSet) {
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
}

// validate refuses the flags that cannot go together before anything
// starts; options checks the rest once a lab of its own is up.
func (f *benchFlags) validate(targetGiven bool) error {
	if err := checkApplySysctl(f.applySysctl); err != nil {
		return err
	}
	if err := checkRedactNames(f.redact); err != nil {
		return err
	}
	if err := f.eng.check(); err != nil {
		return err
	}
	return f.stack.check(targetGiven)
}
