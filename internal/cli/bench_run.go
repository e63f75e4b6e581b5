package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/phptune/phptune/internal/base/cpulist"
	"github.com/phptune/phptune/internal/base/shellquote"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// runBench is phptune bench once its flags are valid: its stack session
// (a lab of its own brought up, or --lab's attached to once the flags that
// need no lab are checked; none for a TARGET), the load's options, the
// generator's pinning and progress, the kernel's settings, the page check,
// the measured run and its result stored and printed.
func runBench(env *Env, f *benchFlags, args []string) error {
	var sess *stacksession.Session
	defer func() { sess.Close() }()
	if f.stack.ownLab() {
		// A lab of its own (--app, --docroot, or a sealed one of the
		// site's), benched as --lab and taken down at the end.
		var err error
		if sess, err = f.upOwnLab(env); err != nil {
			return err
		}
	}
	opt, err := f.options(env.Ctx, args, f.appPathSet, func(string) (*lab.Lab, error) {
		if sess != nil {
			return sess.Lab, nil
		}
		// bench parses its workload itself, on the lab it attaches to;
		// it changes nothing there, so nothing is restored.
		s, err := openSession(env, &f.stack, sessionSpec{command: "bench", redactNames: f.redact})
		var le *stacksession.LabError
		if errors.As(err, &le) {
			return nil, le.Err
		}
		if err != nil {
			return nil, err
		}
		sess = s
		return s.Lab, nil
	})
	if err != nil {
		return err
	}
	if sess == nil {
		// A TARGET: no stack, the session holds the kernel's settings
		// alone.
		sess = &stacksession.Session{}
	}
	opt.Command = "phptune " + shellquote.Join(redact.Args(env.Args, f.redact))
	stopProfile, err := f.prepareGenerator(env, &opt)
	if err != nil {
		return err
	}
	defer stopProfile()
	if f.logSummary != nil {
		f.logSummary.Print(env.Stderr, f.stack.fromLog, f.logOpt)
	}
	kernelRun, err := f.raiseKernel(env, sess, opt.Connections)
	if err != nil {
		return err
	}
	pageWarnings := f.checkPage(env, sess.Lab, opt)
	res, err := f.measure(env, opt, sess.Lab)
	if res == nil {
		return err
	}
	if ferr := f.finish(env, res, sess.Lab, kernelRun, pageWarnings); ferr != nil {
		return ferr
	}
	return err
}

// prepareGenerator checks the open-file limit for the connections, pins
// the generator to --cpus, shows progress on a terminal and starts
// --cpuprofile; stop ends the profile.
func (f *benchFlags) prepareGenerator(env *Env, opt *load.Options) (stop func(), err error) {
	stop = func() {}
	if err := load.CheckFDLimit(opt.Connections); err != nil {
		return stop, usageErr("", "-c %d: %v", opt.Connections, err)
	}
	if f.cpus != "" {
		cpus, err := cpulist.Parse(f.cpus)
		if err != nil {
			return stop, usageErr("Try: --cpus 0 or --cpus 1-3", "--cpus: %v", err)
		}
		if err := load.PinProcess(cpus); err != nil {
			return stop, usageErr("Try: --cpus 0 (see nproc)", "--cpus %s: %v", f.cpus, err)
		}
	}
	if !f.quiet {
		if fd, ok := env.TermStderr.(*os.File); ok && term.IsTerminal(int(fd.Fd())) {
			opt.Progress = func(p load.Progress) { printBenchProgress(env, p) }
		}
	}
	if f.cpuProfile != "" {
		s, err := load.StartCPUProfile(f.cpuProfile)
		if err != nil {
			return stop, usageErr("Give a file path you can write", "--cpuprofile: %v", err)
		}
		stop = s
	}
	return stop, nil
}

// printBenchProgress rewrites the progress line on the terminal.
func printBenchProgress(env *Env, p load.Progress) {
	phase := ""
	if p.Warmup {
		phase = " (warm-up)"
	}
	fmt.Fprintf(env.TermStderr, "\r\033[K%6.1fs%s  %8.0f req/s  %d requests  %d errors  p99 %.2f ms",
		p.Elapsed.Seconds(), phase, p.RPS, p.Requests, p.Errors, p.P99LastMs)
}

// raiseKernel raises the kernel's settings for --apply-sysctl (for the
// session's lab's backlogs when there is one) in the session, which
// restarts the lab's servers so their sockets listen under them and, at
// Close, puts the host's own back and restarts them again.
func (f *benchFlags) raiseKernel(env *Env, sess *stacksession.Session, conns int) (*sysctl.Run, error) {
	if !f.applySysctl {
		return nil, nil
	}
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "bench: "+format+"\n", a...) }
	return sess.RaiseOnStack(env.Ctx, func(l *lab.Lab) (*sysctl.Run, func(), error) {
		need := sysctl.NeedOf(nil, conns)
		if l != nil {
			need = sysctl.NeedOf([]knob.Config{l.Config}, conns)
		}
		kernelRun, err := applySysctl(env, need, "bench")
		if err != nil {
			return nil, nil, err
		}
		return kernelRun, func() { restoreSysctl(env, kernelRun, "bench") }, nil
	}, say)
}

// checkPage looks once at the lab's page before it is loaded, so that an
// error page answered with 200 does not pass for the app, and returns its
// warnings.
func (f *benchFlags) checkPage(env *Env, l *lab.Lab, opt load.Options) []string {
	if l == nil {
		return nil
	}
	var warnings []string
	page, perr := labstack.CheckPage(env.Ctx, l, workload.Workload{Requests: opt.Requests, Host: f.stack.host})
	if perr != nil {
		warnings = append(warnings, fmt.Sprintf("page check: %v", perr))
	} else {
		fmt.Fprintf(env.Stderr, "bench: page %s\n", redact.Text(page.String(), f.redact))
		warnings = labstack.PageWarnings(pagecheck.Page{}, page)
	}
	for _, wmsg := range warnings {
		fmt.Fprintf(env.Stderr, "bench: WARNING: %s\n", redact.Text(wmsg, f.redact))
	}
	return warnings
}

// measure runs the load on its engine. On a lab the observer watches the
// lab's processes (and this one, the generator) while it runs, its
// derived figures covering the measured part; the servers' error logs,
// what a sealed lab's code tried to reach outside and how a site lab's
// own caches served the measured part are attached to the result.
func (f *benchFlags) measure(env *Env, opt load.Options, benchLab *lab.Lab) (*results.Bench, error) {
	gen, err := f.eng.benchGenerator(env.Ctx, opt, benchLab, f.redact, env.Stderr)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context) (*results.Bench, error) { return gen.Run(ctx, opt) }
	clearProgress := func() {
		if opt.Progress != nil {
			fmt.Fprint(env.TermStderr, "\r\033[K")
		}
	}
	if benchLab == nil {
		res, err := run(env.Ctx)
		clearProgress()
		return res, err
	}
	l := benchLab
	// The servers' error logs, from the end of the warm-up.
	logs := labstack.NewErrorLogs(l)
	// A site lab's own caches' counters, from the end of the warm-up.
	caches := labstack.NewCacheCounters(env.Ctx, l)
	opt.OnMeasure = func() { logs.Mark(); caches.Mark() }
	// What a sealed lab's code tries to reach outside.
	blocked := labstack.NewBlockedCounter(env.Ctx, l)
	var res *results.Bench
	if !f.noObserve {
		res, err = labstack.Observe(env.Ctx, l, f.observeInterval, run)
	} else {
		res, err = run(env.Ctx)
	}
	clearProgress()
	if res == nil {
		return nil, err
	}
	logs.Attach(res)
	caches.Attach(env.Ctx, res)
	var warn string
	if res.Blocked, warn = blocked.Since(env.Ctx); warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	res.Warnings = append(res.Warnings, labstack.CacheWarnings(l)...)
	return res, err
}

// finish completes the result (environment, kernel limits, the page's
// warnings), redacts it, stores it unless --no-save and prints it as text
// or JSON.
func (f *benchFlags) finish(env *Env, res *results.Bench, benchLab *lab.Lab, kernelRun *sysctl.Run, pageWarnings []string) error {
	res.Environment = environment(env.Ctx)
	if benchLab != nil {
		completeKernelLimits(res.Environment.KernelLimits, benchLab, kernelRun, benchLab.Config)
	} else {
		completeKernelLimits(res.Environment.KernelLimits, nil, kernelRun, nil)
	}
	res.Warnings = append(pageWarnings, res.Warnings...)
	// From here on the result is what is stored and shown: its target
	// URL, request URIs and messages hold no secret.
	if err := redact.Value(res, f.redact); err != nil {
		return err
	}
	if !f.noSave {
		app := ""
		if benchLab != nil {
			app = benchLab.App
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
		return enc.Encode(res)
	}
	return report.BenchText(env.Stdout, res)
}
