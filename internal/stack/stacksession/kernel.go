package stacksession

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// Kernel limits: bench, tune and compare read them into every result; only
// --apply-sysctl changes them, for the length of the run (package sysctl
// says how they are restored after Ctrl-C and crashes).

// KernelRaise is what RaiseKernel did: the run that holds the raised
// settings (restored by its Restore), the notes of the applier, and the
// record of the previous values.
type KernelRaise struct {
	Run    *sysctl.Run
	Notes  []string
	Record string
}

// RaiseKernel raises what need asks for in the /proc tree proc, recording
// the previous values in phptune's home under holder's name (the command
// as typed, "phptune tune"). On an error Notes may still say something.
func RaiseKernel(proc string, need sysctl.Need, holder string) (KernelRaise, error) {
	home, err := lab.EnsureHome()
	if err != nil {
		return KernelRaise{}, fmt.Errorf("--apply-sysctl: %w", err)
	}
	a := &sysctl.Applier{FS: sysctl.NewFS(proc), Dir: home, Self: sysctl.Holder{Command: holder}}
	run, notes, err := a.Apply(need)
	return KernelRaise{Run: run, Notes: notes, Record: filepath.Join(home, sysctl.RecordFile)}, err
}

// LeftoverKernel says whether phptune's home holds a record of kernel
// settings raised by a run that could not restore them, and its path.
func LeftoverKernel() (string, bool) {
	rec := filepath.Join(lab.Home(), sysctl.RecordFile)
	_, err := os.Lstat(rec)
	return rec, err == nil
}

// RestoreLeftoverKernel restores the settings of LeftoverKernel's record
// (root only) in the /proc tree proc.
func RestoreLeftoverKernel(proc string) ([]string, error) {
	a := &sysctl.Applier{FS: sysctl.NewFS(proc), Dir: lab.Home()}
	return a.RestoreLeftovers()
}

// CompleteKernelLimits finishes a result's kernel limits (read with the
// environment): the open-file limits of the lab's processes, what
// --apply-sysctl raised (Sysctl keeps the host's own values, read before
// the run), and cfg's backlogs as the kernel gives them (nil cfg: none).
// proc is the /proc tree.
func CompleteKernelLimits(proc string, k *results.KernelLimits, l *lab.Lab, run *sysctl.Run, cfg knob.Config) {
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
		more := sysctl.NewFS(proc).Collect(labProcesses(l))
		if len(more.NoFile) > 1 {
			k.NoFile = append(k.NoFile, more.NoFile[1:]...) // [0] is phptune, read already
		}
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

// KernelNeedsRestart reports whether changes touch what a listening
// socket takes when it opens: its backlog (somaxconn) and SYN queue.
func KernelNeedsRestart(run *sysctl.Run) bool {
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

// RestartLab restarts a running lab's servers with its own configuration,
// so that its sockets listen again under the kernel's current settings.
func RestartLab(ctx context.Context, l *lab.Lab, why string, say func(string, ...any)) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := l.Apply(rctx, l.Config); err != nil {
		say("restarting lab %s's servers (%s): %v", l.Name, why, err)
		return
	}
	say("restarted lab %s's servers: %s", l.Name, why)
}
