package sysctl

import (
	"fmt"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// Effective is the backlog listen(2) gives a socket that asks for asked
// while somaxconn is in force: the kernel caps it there silently
// (__sys_listen in net/socket.c), for TCP and unix sockets alike, once,
// when the socket starts listening — a socket keeps its backlog when
// somaxconn changes later. somaxconn < 0 means unknown: asked is
// returned.
func Effective(asked, somaxconn int64) int64 {
	if somaxconn >= 0 && asked > somaxconn {
		return somaxconn
	}
	return asked
}

// BacklogText says what a backlog became: "asked 4096, effective 4096
// (somaxconn 4096)" or "asked 8192, capped at 4096 by somaxconn".
func BacklogText(asked, somaxconn int64) string {
	switch eff := Effective(asked, somaxconn); {
	case somaxconn < 0:
		return fmt.Sprintf("asked %d (somaxconn unknown: the kernel may cap it)", asked)
	case eff < asked:
		return fmt.Sprintf("asked %d, capped at %d by somaxconn", asked, eff)
	default:
		return fmt.Sprintf("asked %d, effective %d (somaxconn %d)", asked, eff, somaxconn)
	}
}

// Backlogs lists cfg's listen backlogs as the kernel gives them under
// somaxconn (-1: unknown).
func Backlogs(cfg knob.Config, somaxconn int64) []results.Backlog {
	var out []results.Backlog
	for _, b := range cfg.Backlogs() {
		out = append(out, results.Backlog{Knob: b.Knob, Asked: b.Value, Effective: Effective(b.Value, somaxconn), Somaxconn: somaxconn})
	}
	return out
}

// HostSomaxconn is this machine's net.core.somaxconn (read from /proc,
// no link followed), -1 when it cannot be read.
func HostSomaxconn() int64 {
	v, err := NewFS("/proc").Value(Somaxconn)
	if err != nil {
		return -1
	}
	n, err := parseInt(v)
	if err != nil {
		return -1
	}
	return n
}

// RunSomaxconn is the somaxconn a run's sockets were opened under: the
// value --apply-sysctl set, or else the host's; -1 when unknown.
func RunSomaxconn(k *results.KernelLimits) int64 {
	if k == nil {
		return -1
	}
	for _, c := range k.Applied {
		if c.Name == Somaxconn {
			if n, err := parseInt(c.To); err == nil {
				return n
			}
		}
	}
	if n, ok := Values(k.Sysctl).Int(Somaxconn); ok {
		return n
	}
	return -1
}

// CappedNote is what a result says about a backlog knob set to value
// that the kernel capped during the run ("128, capped by
// net.core.somaxconn"), or "" when it got what it asked for.
func CappedNote(name, value string, somaxconn int64) string {
	cfg := knob.Config{name: value}
	n := cfg.Int(name)
	if n <= 0 || Effective(n, somaxconn) >= n {
		return ""
	}
	return fmt.Sprintf("%d, capped by %s", somaxconn, Somaxconn)
}

// IsBacklogKnob reports whether name sets a listen backlog.
func IsBacklogKnob(name string) bool {
	for _, k := range knob.BacklogKnobs {
		if k == name {
			return true
		}
	}
	return false
}
