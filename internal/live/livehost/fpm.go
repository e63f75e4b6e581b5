// Package livehost describes the servers of a live host (its php-fpm
// masters, its nginx) as package liveapply's steps: each server's own
// configuration check, its graceful reload (systemd when systemd runs it,
// otherwise a signal to a master whose identity was verified first) and a
// health check after the reload.
package livehost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/servers/status/fpmstatus"
	"github.com/phptune/phptune/internal/watch/observe"
	"github.com/phptune/phptune/internal/watch/proc"
)

// FPM is one php-fpm master of a host.
type FPM struct {
	Binary string // php-fpm8.2
	Conf   string // its php-fpm.conf
	// Prefix is -p for a host rooted elsewhere ("" on the host itself).
	Prefix string
	// Listen is a pool's address for the health probe ("unix:/path" or
	// "tcp:127.0.0.1:9000") and StatusPath its pm.status_path; without
	// a status path the probe only connects.
	Listen     string
	StatusPath string
	// Systemd names the service when systemd runs this master
	// ("php8.2-fpm"): reloads and restarts go through systemctl.
	Systemd string
	// StartArgs, when the master must be started again after a failed
	// reload without systemd, are its arguments (the binary is Binary).
	StartArgs []string
	// Env is added to the environment of php-fpm -t and of a master
	// started again (a host copy's PHP_INI_SCAN_DIR).
	Env []string
	// Timeout bounds each wait (default 15 s).
	Timeout time.Duration
	// WaitIdle, when above 0, makes Reload wait, at most this long, for a
	// moment the pool serves no request (its status page shows only its
	// own request active and an empty queue) before it signals: the
	// reload of a master without process_control_timeout (see
	// GraceChange).
	WaitIdle time.Duration
	// Probe, when set, sends requests to the pool while Reload runs and
	// counts those that fail.
	Probe *ReloadProbe
}

// Step returns f as a transaction step named "php-fpm".
func (f FPM) Step() liveapply.Step {
	return liveapply.Step{Name: "php-fpm", Check: f.Check, Reload: f.Reload, Healthy: f.Healthy}
}

func (f FPM) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return 15 * time.Second
}

// Check runs php-fpm -t on the configuration as it is on disk.
func (f FPM) Check(ctx context.Context) error {
	args := []string{"-t", "-y", f.Conf}
	if f.Prefix != "" {
		args = append(args, "-p", f.Prefix)
	}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-to-run-as-root")
	}
	cmd := exec.CommandContext(ctx, f.Binary, args...)
	cmd.Env = append(os.Environ(), f.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -t: %s (%v)", f.Binary, lastLines(out, 5), err)
	}
	return nil
}

// Reload makes the master read its configuration again: systemctl reload,
// or SIGUSR2 to the master Master finds in /proc. php-fpm re-executes
// itself (under the same pid, or a new one when it daemonizes again: the
// master is looked up anew each time); a master that is gone afterwards (a configuration
// php-fpm -t passed but the master could not use, e.g. a port in use) is
// started again, so that a rollback's reload brings the old one back.
func (f FPM) Reload(ctx context.Context) error {
	if f.Probe != nil {
		stop := f.Probe.start(ctx, f)
		defer stop()
	}
	if f.Systemd != "" {
		f.waitIdle(ctx)
		out, err := exec.CommandContext(ctx, "systemctl", "reload-or-restart", f.Systemd).CombinedOutput()
		if err != nil {
			return fmt.Errorf("systemctl reload-or-restart %s: %s (%v)", f.Systemd, lastLines(out, 3), err)
		}
		return f.waitServing(ctx)
	}
	// A reload already under way (another phptune's, killed mid-apply,
	// or the init system's) finishes first: a signal to a master that is
	// re-executing itself can lose it.
	if err := f.waitServing(ctx); err != nil {
		if _, gone := f.Master(); gone != nil {
			return f.start(ctx, gone)
		}
		return err
	}
	pid, err := f.Master()
	if err != nil {
		return f.start(ctx, err)
	}
	before, _ := f.started(ctx)
	// The status page's start time counts seconds: reload in a later
	// second than the master started, so the new start time differs.
	for before != 0 && time.Now().Unix() <= before {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if f.WaitIdle > 0 {
		f.waitIdle(ctx)
		// The wait took time: the master signalled is the one found now.
		if again, err := f.Master(); err != nil || again != pid {
			return fmt.Errorf("php-fpm's master %d changed while phptune waited for the pool to be idle (%v); run phptune again", pid, err)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
		return fmt.Errorf("signalling php-fpm's master %d: %v", pid, err)
	}
	// The re-executed master opens its sockets again and its status
	// page shows a new start time; until then it is reloading.
	if err := f.waitReloaded(ctx, before); err != nil {
		if _, gone := f.Master(); gone != nil {
			return fmt.Errorf("php-fpm's master %d exited on reload (%v); see its error_log", pid, gone)
		}
		return err
	}
	return nil
}

// start runs the master again when it is gone (why: the reason Master
// gave), without systemd.
func (f FPM) start(ctx context.Context, why error) error {
	if f.StartArgs == nil {
		return fmt.Errorf("php-fpm's master is not running (%v) and phptune does not know how to start it here", why)
	}
	cmd := exec.Command(f.Binary, f.StartArgs...)
	cmd.Env = append(os.Environ(), f.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("php-fpm's master was not running (%v); starting it: %s (%v)", why, lastLines(out, 3), err)
	}
	return f.waitServing(ctx)
}

// masterGrace is how long a master may be missing before it counts as
// gone: a reload that daemonizes again replaces the master's process.
const masterGrace = 2 * time.Second

// waitReloaded waits until a verified master answers with a start time
// other than before (without a status page: until it answers at all).
func (f FPM) waitReloaded(ctx context.Context, before int64) error {
	if f.StatusPath == "" || before == 0 {
		return f.waitServing(ctx)
	}
	return f.waitMaster(ctx, "finish reloading", func() error {
		t, err := f.started(ctx)
		if err == nil && t == before {
			err = errors.New("its status page still shows the old master's start time")
		}
		return err
	})
}

// waitServing waits until a verified master answers on Listen.
func (f FPM) waitServing(ctx context.Context) error {
	return f.waitMaster(ctx, "serve", func() error { return f.probe(ctx) })
}

// waitMaster polls until Master finds the one master and ready
// says it is ready, for at most the timeout; a master missing for longer
// than masterGrace is gone, and that is the error.
func (f FPM) waitMaster(ctx context.Context, what string, ready func() error) error {
	deadline := time.Now().Add(f.timeout())
	var last error
	var gone time.Time
	for time.Now().Before(deadline) {
		if _, err := f.Master(); err != nil {
			last = err
			if gone.IsZero() {
				gone = time.Now()
			} else if time.Since(gone) > masterGrace {
				return err
			}
		} else if last = ready(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("php-fpm did not %s within %v: %v", what, f.timeout(), last)
}

// started is the master's start time from the status page ("start time",
// seconds since the epoch; php-fpm sets it again when a reload re-executes
// the master).
func (f FPM) started(ctx context.Context) (int64, error) {
	body, err := f.status(ctx)
	if err != nil {
		return 0, err
	}
	var page struct {
		Start int64 `json:"start time"`
	}
	if err := json.Unmarshal(body, &page); err != nil || page.Start == 0 {
		return 0, fmt.Errorf("php-fpm's status page has no start time: %.80q", body)
	}
	return page.Start, nil
}

// Healthy checks that the master is php-fpm's, of this configuration, and
// that the pool answers (its status page when there is one).
func (f FPM) Healthy(ctx context.Context) error {
	if _, err := f.Master(); err != nil {
		return err
	}
	return f.probe(ctx)
}

func (f FPM) probe(ctx context.Context) error { return f.probeWithin(ctx, 2*time.Second) }

// probeOnce is one request of a ReloadProbe: the status page (or a
// connection) within ctx's deadline, however long the pool queues it.
func (f FPM) probeOnce(ctx context.Context) error { return f.probeWithin(ctx, 0) }

// probeWithin reads the pool's status page within d (0: within ctx's own
// deadline), or only connects to a pool without one.
func (f FPM) probeWithin(ctx context.Context, d time.Duration) error {
	if f.StatusPath == "" {
		network, addr := f.addr()
		c, err := peercred.Dial(ctx, network, addr, 0)
		if err != nil {
			return err
		}
		return c.Close()
	}
	body, err := f.statusWithin(ctx, d)
	// php-fpm answers its status page with 500 while its scoreboard's
	// lock is taken for a moment (a reload, a spawn): that is the page,
	// not a request the pool dropped. Ask again before calling it failed.
	for try := 1; try < scoreboardTries && scoreboardBusy(err); try++ {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(scoreboardRetry):
		}
		body, err = f.statusWithin(ctx, d)
	}
	if err != nil {
		return err
	}
	_, err = fpmstatus.Parse(body)
	return err
}

// scoreboardTries and scoreboardRetry bound how often, and how far apart,
// a probe asks again a status page whose scoreboard was busy.
const (
	scoreboardTries = 3
	scoreboardRetry = 20 * time.Millisecond
)

func scoreboardBusy(err error) bool {
	var e *observe.StatusPageError
	return errors.As(err, &e) && e.ScoreboardBusy()
}

// status reads the pool's status page as JSON over FastCGI.
func (f FPM) status(ctx context.Context) ([]byte, error) {
	return f.statusWithin(ctx, 2*time.Second)
}

// statusWithin is status within d (0: within ctx's own deadline).
func (f FPM) statusWithin(ctx context.Context, d time.Duration) ([]byte, error) {
	network, addr := f.addr()
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if d > 0 {
		pctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	// The master (root) created the socket: its listener's uid is 0.
	return observe.FPMFetcher(network, addr, f.StatusPath, 0)(pctx, "json")
}

func (f FPM) addr() (network, address string) {
	if a, ok := strings.CutPrefix(f.Listen, "tcp:"); ok {
		return "tcp", a
	}
	return "unix", strings.TrimPrefix(f.Listen, "unix:")
}

// Master returns the pid of the one running php-fpm master of f.Conf,
// found in /proc by its title and owned by root or this process's user
// (see Masters). It reads no pid file: on Debian /run/php belongs to
// www-data, so the pool's own account could forge one; a process of that
// account titled as a master is not owned by root and is never signalled.
// Two such masters (a reload that daemonizes again, under way) are an
// error until one is left.
func (f FPM) Master() (int, error) {
	fs, err := proc.Default()
	if err != nil {
		return 0, err
	}
	ms, err := Masters(fs)
	if err != nil {
		return 0, err
	}
	var pids []int
	for _, m := range ms {
		if m.Conf == f.Conf {
			pids = append(pids, m.PID)
		}
	}
	return oneMaster("php-fpm", f.Conf, pids, "a reload under way")
}

// lastLines is the end of a command's output, one line.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
