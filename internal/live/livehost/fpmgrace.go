package livehost

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/live/liveapply"
)

// ReloadGrace is the process_control_timeout phptune sets on a master that
// has none: on a reload (SIGUSR2) php-fpm asks its workers to finish the
// request they serve (SIGQUIT) and waits this long before it kills them
// (SIGTERM). With php-fpm's default of 0, and Debian's php-fpm.conf leaves
// it so, the kill comes at once and every request in flight fails (nginx
// answers 502). New requests wait in the pool's listen queue meanwhile,
// so the grace bounds how long a reload can hold them; a request that
// runs longer than it is still cut.
const ReloadGrace = 10 * time.Second

// GraceDropInName is the file that carries ReloadGrace, in the pool's
// include directory beside PoolDropInName, in a [global] section.
const GraceDropInName = "zz-phptune-reload.conf"

// ParseFPMDuration reads a php-fpm time value: a number of seconds, or a
// number followed by s, m, h or d. An empty value is php-fpm's default, 0.
func ParseFPMDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	unit := time.Second
	switch v[len(v)-1] {
	case 's':
		v = v[:len(v)-1]
	case 'm':
		unit, v = time.Minute, v[:len(v)-1]
	case 'h':
		unit, v = time.Hour, v[:len(v)-1]
	case 'd':
		unit, v = 24*time.Hour, v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a php-fpm time (seconds, or a number with s, m, h or d)", v)
	}
	// php-fpm keeps the time as an int of seconds: more does not fit.
	if secs := n * int64(unit/time.Second); secs > math.MaxInt32 {
		return 0, fmt.Errorf("%q is more seconds than php-fpm can hold (%d at most)", v, math.MaxInt32)
	}
	return time.Duration(n) * unit, nil
}

// ControlTimeout is the master's process_control_timeout as h configures
// it (the last value of its [global] sections; 0 when none sets it).
func ControlTimeout(h *FPMHost) (time.Duration, error) {
	d, err := ParseFPMDuration(h.Global["process_control_timeout"])
	if err != nil {
		return 0, fmt.Errorf("%s: process_control_timeout: %v", h.Conf, err)
	}
	return d, nil
}

// GraceChange is the change that gives a master whose configuration h
// sets no process_control_timeout phptune's ReloadGrace: a [global]
// section in GraceDropInName, in the include directory of pool's file.
// It is nil when the master already has a grace (its reloads already let
// requests in flight finish).
//
// The master applies the process_control_timeout of the configuration
// it runs, not of the one a reload brings: the reload that brings the
// grace is itself still abrupt. Apply therefore makes this change in a
// transaction of its own, reloaded when the pool is idle (FPM.WaitIdle),
// before the recommendation's; rolling the recommendation back leaves it,
// so later reloads, phptune's and anyone's, stay graceful.
func GraceChange(h *FPMHost, pool string) (*liveapply.Change, error) {
	d, err := ControlTimeout(h)
	if err != nil || d > 0 {
		return nil, err
	}
	p, ok := h.Pool(pool)
	if !ok {
		return nil, fmt.Errorf("php-fpm's configuration %s has no pool %q", h.Conf, pool)
	}
	dir, err := poolDir(h, p)
	if err != nil {
		return nil, err
	}
	content := fmt.Sprintf("; Written by phptune apply: a reload lets the requests in flight finish (up to %d s)\n"+
		"; instead of killing them. Undo: phptune rollback after the recommendation's\n"+
		"; rollback (or remove this file and reload php-fpm).\n[global]\nprocess_control_timeout = %ds\n",
		int(ReloadGrace/time.Second), int(ReloadGrace/time.Second))
	return &liveapply.Change{Path: filepath.Join(dir, GraceDropInName), Content: []byte(content)}, nil
}

// waitIdle waits, at most f.WaitIdle, until the pool's status page shows
// no request but its own and an empty listen queue; without a status page,
// or when no such moment comes, it returns anyway (the reload goes ahead).
func (f FPM) waitIdle(ctx context.Context) {
	if f.WaitIdle <= 0 || f.StatusPath == "" {
		return
	}
	deadline := time.Now().Add(f.WaitIdle)
	for time.Now().Before(deadline) {
		if st, err := f.statusPage(ctx); err == nil && st.ActiveProcesses <= 1 && st.ListenQueue == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// GracePlan is the transaction that makes f's reloads graceful: change
// (GraceChange's) and php-fpm's step, which reloads at a moment the pool
// is idle, waiting at most ReloadGrace for one.
func GracePlan(f FPM, change liveapply.Change) liveapply.Plan {
	f.WaitIdle, f.Probe = ReloadGrace, nil
	return liveapply.Plan{Changes: []liveapply.Change{change}, Steps: []liveapply.Step{f.Step()}}
}
