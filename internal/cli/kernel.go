package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/sysctl"
)

// Kernel limits: bench, tune and compare read them into every result; only
// --apply-sysctl changes them, for the length of the run (package sysctl
// says how they are restored after Ctrl-C and crashes).

// geteuid is os.Geteuid; tests replace it to check what is refused
// without root.
var geteuid = os.Geteuid

// sysctlProc is the /proc tree the limits are read from and written to.
var sysctlProc = "/proc"

// addApplySysctlFlag adds --apply-sysctl.
func addApplySysctlFlag(fl *pflag.FlagSet, p *bool) {
	fl.BoolVar(p, "apply-sysctl", false, "raise the kernel settings this run needs (net.core.somaxconn, which caps every listen backlog, tcp_max_syn_backlog, the ephemeral port range, fs.file-max, fs.nr_open) for the length of the run only: the previous values are recorded first and restored at the end, on Ctrl-C too, and by the next phptune after a crash (root only; without it phptune only reads them)")
}

// checkApplySysctl refuses --apply-sysctl without root, before anything
// starts.
func checkApplySysctl(on bool) error {
	if on && geteuid() != 0 {
		return usageErr("Run phptune as root, or leave --apply-sysctl out: phptune then only reads the kernel's limits, and the recommendation says what to set",
			"--apply-sysctl needs root: it writes host-wide kernel settings (/proc/sys)")
	}
	return nil
}

// applySysctl raises what need asks for, saying what it did on stderr
// after prefix ("bench"). The returned run is restored by restoreSysctl.
func applySysctl(env *Env, need sysctl.Need, prefix string) (*sysctl.Run, error) {
	home, err := lab.EnsureHome()
	if err != nil {
		return nil, fmt.Errorf("--apply-sysctl: %w", err)
	}
	a := &sysctl.Applier{FS: sysctl.NewFS(sysctlProc), Dir: home, Self: sysctl.Holder{Command: "phptune " + strings.Join(firstArgs(env.Args, 1), " ")}}
	run, notes, err := a.Apply(need)
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "%s: %s\n", prefix, n)
	}
	if err != nil {
		return nil, err
	}
	if len(run.Changes) == 0 {
		fmt.Fprintf(env.Stderr, "%s: --apply-sysctl: the kernel's settings already hold this run (listen backlogs up to %d, %d connections): nothing raised\n", prefix, need.Backlog, need.Connections)
		return run, nil
	}
	var parts []string
	for _, c := range run.Changes {
		parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Name, c.From, c.To))
	}
	fmt.Fprintf(env.Stderr, "%s: --apply-sysctl raised %s for this run; the previous values are recorded in %s and restored at its end\n",
		prefix, strings.Join(parts, ", "), filepath.Join(home, sysctl.RecordFile))
	return run, nil
}

// restoreSysctl ends a run's hold on raised settings.
func restoreSysctl(env *Env, run *sysctl.Run, prefix string) {
	notes, err := run.Restore()
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "%s: %s\n", prefix, n)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", prefix, err)
	}
}

// restoreLeftoverSysctl restores the settings a run raised and could not
// restore (it was killed outright), at the start of every phptune run.
func restoreLeftoverSysctl(stderr io.Writer) {
	home := lab.Home()
	if _, err := os.Lstat(filepath.Join(home, sysctl.RecordFile)); err != nil {
		return
	}
	if geteuid() != 0 {
		fmt.Fprintf(stderr, "phptune: %s records kernel settings raised by --apply-sysctl; run phptune as root to restore them if that run has ended\n", filepath.Join(home, sysctl.RecordFile))
		return
	}
	a := &sysctl.Applier{FS: sysctl.NewFS(sysctlProc), Dir: home}
	notes, err := a.RestoreLeftovers()
	for _, n := range notes {
		fmt.Fprintf(stderr, "phptune: %s\n", n)
	}
	if err != nil {
		fmt.Fprintf(stderr, "phptune: %v\n", err)
	}
}

// completeKernelLimits finishes a result's kernel limits (read by
// environment()): the open-file limits of the lab's processes, what
// --apply-sysctl raised (Sysctl keeps the host's own values, read before
// the run), and cfg's backlogs as the kernel gives them (nil cfg: none).
func completeKernelLimits(k *results.KernelLimits, l *lab.Lab, run *sysctl.Run, cfg knob.Config) {
	if k == nil {
		return
	}
	if run != nil {
		for _, c := range run.Changes {
			k.Applied = append(k.Applied, c)
			k.Sysctl[c.Name] = c.From
		}
	}
	if l != nil {
		more := sysctl.NewFS(sysctlProc).Collect(labProcesses(l))
		k.NoFile = append(k.NoFile, more.NoFile[1:]...) // [0] is phptune, read already
		for _, e := range more.Errors {
			if strings.Contains(e, "open-file limit") {
				k.Errors = append(k.Errors, e)
			}
		}
	}
	if cfg != nil {
		k.Backlogs = sysctl.Backlogs(cfg, sysctl.RunSomaxconn(k))
	}
}

// labProcesses are the lab's servers, one process of each component (the
// masters, which the workers inherit their limits from).
func labProcesses(l *lab.Lab) []sysctl.Process {
	var out []sysctl.Process
	seen := map[string]bool{}
	for _, p := range l.LiveProcesses() {
		if seen[p.Component] {
			continue
		}
		seen[p.Component] = true
		out = append(out, sysctl.Process{Name: p.Component, PID: p.PID})
	}
	return out
}

// kernelNeedsRestart reports whether changes touch what a listening
// socket takes when it opens: its backlog (somaxconn) and SYN queue.
func kernelNeedsRestart(run *sysctl.Run) bool {
	if run == nil {
		return false
	}
	for _, c := range run.Changes {
		if c.Name == sysctl.Somaxconn || c.Name == sysctl.TCPMaxSynBacklog {
			return true
		}
	}
	return false
}

// restartLab restarts a running lab's servers with its own configuration,
// so that its sockets listen again under the kernel's current settings.
func restartLab(ctx context.Context, l *lab.Lab, why string, say func(string, ...any)) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := l.Apply(rctx, l.Config); err != nil {
		say("restarting lab %s's servers (%s): %v", l.Name, why, err)
		return
	}
	say("restarted lab %s's servers: %s", l.Name, why)
}

// firstArgs is at most n of args.
func firstArgs(args []string, n int) []string {
	return args[:min(n, len(args))]
}
