package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/phptune/phptune/internal/cpulist"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/pagecheck"
	"github.com/phptune/phptune/internal/redact"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/shellquote"
	"github.com/phptune/phptune/internal/sysctl"
	"github.com/phptune/phptune/internal/workload"
)

// runBench is phptune bench once its flags are valid: a lab of its own
// when asked, the load's options, the generator's pinning and progress,
// the kernel's settings, the page check, the measured run and its result
// stored and printed.
func runBench(env *Env, f *benchFlags, args []string) error {
	if f.stack.ownLab() {
		// A lab of its own (--app, --docroot, or a sealed one of the
		// site's), benched as --lab and taken down at the end.
		down, err := f.upOwnLab(env)
		if err != nil {
			return err
		}
		defer down()
	}
	opt, err := f.options(env.Ctx, args, f.appPathSet)
	if err != nil {
		return err
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
	// The lab the load goes to, when there is one: its configuration
	// asks for the backlogs.
	var benchLab *lab.Lab
	if f.stack.lab != "" {
		if l, lerr := lab.Open(f.stack.lab); lerr == nil {
			benchLab = l
		}
	}
	kernelRun, restoreKernel, err := f.raiseKernel(env, benchLab, opt.Connections)
	if err != nil {
		return err
	}
	defer restoreKernel()
	pageWarnings := f.checkPage(env, opt)
	res, err := f.measure(env, opt, benchLab)
	if res == nil {
		return err
	}
	if ferr := f.finish(env, res, benchLab, kernelRun, pageWarnings); ferr != nil {
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

// raiseKernel raises the kernel's settings for --apply-sysctl (for
// benchLab's backlogs when there is a lab) and restarts the lab's servers
// so their sockets listen under them; restore puts the host's own back
// and restarts them again.
func (f *benchFlags) raiseKernel(env *Env, benchLab *lab.Lab, conns int) (*sysctl.Run, func(), error) {
	if !f.applySysctl {
		return nil, func() {}, nil
	}
	need := sysctl.NeedOf(nil, conns)
	if benchLab != nil {
		need = sysctl.NeedOf([]knob.Config{benchLab.Config}, conns)
	}
	kernelRun, err := applySysctl(env, need, "bench")
	if err != nil {
		return nil, func() {}, err
	}
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "bench: "+format+"\n", a...) }
	// A socket keeps the backlog it opened with: the lab's servers
	// listen again under the raised settings, and again under the
	// host's own once they are restored.
	restart := benchLab != nil && kernelNeedsRestart(kernelRun)
	if restart {
		restartLab(env.Ctx, benchLab, "its sockets listen under the raised limits", say)
	}
	restore := func() {
		restoreSysctl(env, kernelRun, "bench")
		if restart {
			restartLab(env.Ctx, benchLab, "its sockets have the host's own limits again", say)
		}
	}
	return kernelRun, restore, nil
}

// checkPage looks once at the lab's page before it is loaded, so that an
// error page answered with 200 does not pass for the app, and returns its
// warnings.
func (f *benchFlags) checkPage(env *Env, opt load.Options) []string {
	if f.stack.lab == "" {
		return nil
	}
	l, lerr := lab.Open(f.stack.lab)
	if lerr != nil {
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
// derived figures covering the measured part; the servers' error logs and
// what a sealed lab's code tried to reach outside are attached to the
// result.
func (f *benchFlags) measure(env *Env, opt load.Options, benchLab *lab.Lab) (*results.Bench, error) {
	run := func(ctx context.Context) (*results.Bench, error) { return load.Run(ctx, opt) }
	if f.eng.engine == "locust" {
		var err error
		if run, err = f.eng.locustRun(env.Ctx, opt, benchLab, f.redact, env.Stderr); err != nil {
			return nil, err
		}
	}
	clearProgress := func() {
		if opt.Progress != nil {
			fmt.Fprint(env.TermStderr, "\r\033[K")
		}
	}
	if f.stack.lab == "" {
		res, err := run(env.Ctx)
		clearProgress()
		return res, err
	}
	l, err := lab.Open(f.stack.lab)
	if err != nil {
		return nil, err
	}
	// The servers' error logs, from the end of the warm-up.
	logs := labstack.NewErrorLogs(l)
	opt.OnMeasure = logs.Mark
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
	var warn string
	if res.Blocked, warn = blocked.Since(env.Ctx); warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
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
		return enc.Encode(res)
	}
	return report.BenchText(env.Stdout, res)
}
