package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// Kernel limits: bench, tune and compare read them into every result; only
// --apply-sysctl changes them, for the length of the run. The work is
// stacksession's (raising, restoring, completing a result's limits); this
// file holds the flag and what is said about it.

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
	kr, err := stacksession.RaiseKernel(sysctlProc, need, "phptune "+strings.Join(firstArgs(env.Args, 1), " "))
	for _, n := range kr.Notes {
		fmt.Fprintf(env.Stderr, "%s: %s\n", prefix, n)
	}
	if err != nil {
		return nil, err
	}
	if len(kr.Run.Changes) == 0 {
		fmt.Fprintf(env.Stderr, "%s: --apply-sysctl: the kernel's settings already hold this run (listen backlogs up to %d, %d connections): nothing raised\n", prefix, need.Backlog, need.Connections)
		return kr.Run, nil
	}
	var parts []string
	for _, c := range kr.Run.Changes {
		parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Name, c.From, c.To))
	}
	fmt.Fprintf(env.Stderr, "%s: --apply-sysctl raised %s for this run; the previous values are recorded in %s and restored at its end\n",
		prefix, strings.Join(parts, ", "), kr.Record)
	return kr.Run, nil
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
	rec, ok := stacksession.LeftoverKernel()
	if !ok {
		return
	}
	if geteuid() != 0 {
		fmt.Fprintf(stderr, "phptune: %s records kernel settings raised by --apply-sysctl; run phptune as root to restore them if that run has ended\n", rec)
		return
	}
	notes, err := stacksession.RestoreLeftoverKernel(sysctlProc)
	for _, n := range notes {
		fmt.Fprintf(stderr, "phptune: %s\n", n)
	}
	if err != nil {
		fmt.Fprintf(stderr, "phptune: %v\n", err)
	}
}

// completeKernelLimits finishes a result's kernel limits
// (stacksession.CompleteKernelLimits, in sysctlProc).
func completeKernelLimits(k *results.KernelLimits, l *lab.Lab, run *sysctl.Run, cfg knob.Config) {
	stacksession.CompleteKernelLimits(sysctlProc, k, l, run, cfg)
}

// firstArgs is at most n of args.
func firstArgs(args []string, n int) []string {
	return args[:min(n, len(args))]
}
