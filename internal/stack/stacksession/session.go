// Package stacksession owns the lifecycle of the stack a measuring command
// runs on: a lab of its own brought up and taken down, or a running lab
// attached to and given its configuration back, the kernel settings raised
// for the run and restored in the right order, and the workload parsed on
// the lab. tune, compare, capacity, profile, bench, servers and the PHP
// build's training open one session and close it however they end (a
// cancelled context included: the restores run without it), so that no
// lab, raised setting or changed configuration outlives the run; lab up
// opens one that keeps its lab (Options.Keep), so lab.Up has this one
// caller. Around it: the checks of a stack before
// anything starts (CheckStack), the start page (CheckStartPage), and the
// kernel's settings (RaiseKernel, CompleteKernelLimits, the leftovers of a
// killed run).
package stacksession

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// Options say which stack a session runs on and what it holds for the run.
type Options struct {
	// Command names the command ("compare"): a lab of its own is called
	// COMMAND-PID and owned by it.
	Command string
	// Lab is a running lab to attach to (--lab); its configuration is
	// restored at Close when RestoreConfig is set. Empty: Own is brought
	// up.
	Lab           string
	RestoreConfig bool
	// Own is the lab of its own (Name and OwnedBy are filled in when
	// empty): an app's, a docroot's, or a sealed site lab's.
	Own lab.Options
	// Keep leaves the lab of its own running after Close, owned by no
	// command (phptune lab up): it is taken down only when Open fails.
	Keep bool
	// Workload is the workload spec parsed on the lab ("": none, the
	// command builds its own requests), with Expect and Host set on it.
	Workload     string
	Expect, Host string
	// Generator, when set, chooses what loads the stack once the lab is
	// open and its workload parsed (Locust runs as the lab's account and
	// checks the workload's requests); nil, or a nil Generator returned,
	// keeps phptune's own.
	Generator func(st *labstack.Stack) (labstack.Generator, error)
	// RedactNames are the run's secret names, for messages.
	RedactNames []string
	// Raise, when set, raises the kernel settings for the run and returns
	// what restores them: before a lab of its own starts (its sockets
	// open under them), after a running lab's configuration is saved (it
	// is restored last, under the host's own settings again).
	Raise func() (restore func(), err error)
	// Say gets progress lines.
	Say func(format string, args ...any)
}

// Session is a stack held for a run. Close gives everything back. The
// zero Session holds no stack: a command that loads a target of its own
// (bench URL) holds its raised kernel settings in one (RaiseOnStack).
type Session struct {
	Lab      *lab.Lab
	Workload workload.Workload
	// Own: the lab is the session's own (taken down at Close).
	Own     bool
	stack   *labstack.Stack
	closers []func()
	kept    bool // Options.Keep, once Open succeeded: Close leaves the lab up
}

// LabName is the name of command's lab of its own in this process.
func LabName(command string) string { return fmt.Sprintf("%s-%d", command, os.Getpid()) }

// Open brings up or attaches to the stack, in the order that lets Close
// undo it: on an error everything done so far is undone before it returns.
func Open(ctx context.Context, o Options) (s *Session, err error) {
	say := o.Say
	if say == nil {
		say = func(string, ...any) {}
	}
	s = &Session{}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if o.Lab != "" {
		if s.Lab, err = lab.Open(o.Lab); err != nil {
			return s, &LabError{Lab: o.Lab, Err: err}
		}
		if o.RestoreConfig {
			l, cfg := s.Lab, s.Lab.Config.Clone()
			s.defer_(func() { RestoreConfig(ctx, l, cfg, say) })
		}
		if err = s.raise(o.Raise); err != nil {
			return s, err
		}
	} else {
		if err = s.raise(o.Raise); err != nil {
			return s, err
		}
		opt := o.Own
		if opt.Name == "" {
			opt.Name = LabName(o.Command)
		}
		if opt.OwnedBy == "" && !o.Keep {
			opt.OwnedBy = o.Command
		}
		if s.Lab, err = lab.Up(ctx, opt); err != nil {
			return s, err
		}
		s.Own = !o.Keep
		name := s.Lab.Name
		s.defer_(func() {
			if s.kept {
				return
			}
			if derr := lab.Down(name); derr != nil {
				say("taking lab %s down: %v", name, derr)
			} else {
				say("lab %s is down", name)
			}
		})
	}
	if o.Workload != "" {
		if s.Workload, err = workload.Parse(ctx, s.Lab, o.Workload); err != nil {
			return s, fmt.Errorf("workload %s on lab %s: %w", redact.Text(o.Workload, o.RedactNames), s.Lab.Name, err)
		}
	}
	s.Workload.Expect, s.Workload.Host = o.Expect, o.Host
	s.stack = labstack.New(s.Lab, s.Workload)
	if o.Generator != nil {
		if s.stack.Generator, err = o.Generator(s.stack); err != nil {
			return s, err
		}
	}
	s.kept = o.Keep
	return s, nil
}

// Stack is the session's lab loaded with its workload by its generator,
// the same stack every time.
func (s *Session) Stack() *labstack.Stack {
	if s.stack == nil {
		s.stack = labstack.New(s.Lab, s.Workload)
	}
	return s.stack
}

// Close undoes what Open did, last first: a lab of its own goes down
// before the kernel's settings are restored, and a running lab gets its
// configuration back after them, so its sockets open under the host's own
// settings again. A second Close does nothing.
func (s *Session) Close() {
	if s == nil {
		return
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

func (s *Session) defer_(f func()) { s.closers = append(s.closers, f) }

func (s *Session) raise(raise func() (func(), error)) error {
	if raise == nil {
		return nil
	}
	restore, err := raise()
	if err != nil {
		return err
	}
	if restore != nil {
		s.defer_(restore)
	}
	return nil
}

// RestoreConfig puts a running lab back to the configuration it had before
// the run, however the run ended (a cancelled context included).
func RestoreConfig(ctx context.Context, l *lab.Lab, cfg knob.Config, say func(string, ...any)) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := l.Apply(rctx, cfg); err != nil {
		say("restoring lab %s's configuration: %v", l.Name, err)
	} else {
		say("lab %s runs its starting configuration again", l.Name)
	}
}

// LabError is a running lab (Options.Lab) that could not be opened.
type LabError struct {
	Lab string
	Err error
}

func (e *LabError) Error() string { return fmt.Sprintf("lab %s: %v", e.Lab, e.Err) }
func (e *LabError) Unwrap() error { return e.Err }

// RaiseOnStack raises the kernel's settings on a session already open, for
// a command that knows what its run needs only once the stack is there
// (bench: its connections, the lab's backlogs). raise gets the session's
// lab (nil for the zero Session: the command loads a target of its own)
// and returns the run that holds the raised settings and what restores
// them; Close restores them. When the run changed what a listening socket
// takes as it opens, the lab's servers restart to listen under the raised
// settings, and again after the restore, under the host's own.
func (s *Session) RaiseOnStack(ctx context.Context, raise func(l *lab.Lab) (*sysctl.Run, func(), error), say func(string, ...any)) (*sysctl.Run, error) {
	run, restore, err := raise(s.Lab)
	if err != nil {
		return nil, err
	}
	l := s.Lab
	restart := l != nil && KernelNeedsRestart(run)
	if restart {
		RestartLab(ctx, l, "its sockets listen under the raised limits", say)
	}
	s.defer_(func() {
		if restore != nil {
			restore()
		}
		if restart {
			RestartLab(ctx, l, "its sockets have the host's own limits again", say)
		}
	})
	return run, nil
}
