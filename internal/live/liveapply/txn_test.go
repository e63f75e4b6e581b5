package liveapply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// host is a directory standing for a host's /etc: a file that exists, and
// the path of a drop-in that does not yet.
type host struct {
	dir, existing, dropIn string
	before                []byte
}

func newHost(t *testing.T) host {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h := host{dir: dir, existing: filepath.Join(dir, "www.conf"), dropIn: filepath.Join(dir, "zz-phptune.conf"), before: []byte("[www]\npm.max_children = 5\n")}
	if err := os.WriteFile(h.existing, h.before, 0o640); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h host) plan(steps ...Step) Plan {
	return Plan{Changes: []Change{
		{Path: h.existing, Content: []byte("[www]\npm.max_children = 12\n")},
		{Path: h.dropIn, Content: []byte("[www]\npm = static\n")},
	}, Steps: steps}
}

// unchanged fails unless the host's files are as before the transaction.
func (h host) unchanged(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(h.existing)
	if err != nil || string(b) != string(h.before) {
		t.Errorf("%s: %q, %v; want it byte-identical", h.existing, b, err)
	}
	if st, err := os.Stat(h.existing); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("%s lost its mode: %v %v", h.existing, st.Mode(), err)
	}
	if _, err := os.Lstat(h.dropIn); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the drop-in is still there: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(h.dir, "*.phptune-tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// calls records the steps' calls in order; an undo's are marked "(undo)".
type calls []string

func (c *calls) step(name string, fail string) Step {
	do := func(what string) func(context.Context) error {
		return func(ctx context.Context) error {
			call := name + "." + what
			if Undoing(ctx) {
				call += "(undo)"
			}
			*c = append(*c, call)
			if what == fail {
				return fmt.Errorf("%s failed", what)
			}
			return nil
		}
	}
	return Step{Name: name, Check: do("check"), Reload: do("reload"), Healthy: do("healthy")}
}

func TestApplyAndRollback(t *testing.T) {
	h := newHost(t)
	opt := Options{Home: filepath.Join(t.TempDir(), "apply")}
	var c calls
	j, err := Apply(context.Background(), h.plan(c.step("fpm", "")), opt)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != Done || strings.Join(c, " ") != "fpm.check fpm.reload fpm.healthy" {
		t.Fatalf("state %s, calls %v", j.State, c)
	}
	if b, _ := os.ReadFile(h.dropIn); string(b) != "[www]\npm = static\n" {
		t.Errorf("drop-in %q", b)
	}
	if st, _ := os.Stat(h.existing); st.Mode().Perm() != 0o640 {
		t.Errorf("a rewritten file changed mode: %v", st.Mode())
	}
	c = nil
	opt.StepsFor = func(names []string) []Step {
		if strings.Join(names, ",") != "fpm" {
			t.Errorf("steps recorded %v", names)
		}
		return []Step{c.step("fpm", "")}
	}
	undone, err := Rollback(context.Background(), opt)
	if err != nil || undone == nil || undone.ID != j.ID {
		t.Fatalf("rollback: %v %+v", err, undone)
	}
	h.unchanged(t)
	if strings.Join(c, " ") != "fpm.check(undo) fpm.reload(undo) fpm.healthy(undo)" {
		t.Errorf("rollback calls %v", c)
	}
	if again, err := Rollback(context.Background(), opt); err != nil || again != nil {
		t.Errorf("a second rollback undid %+v, %v; nothing is left to undo", again, err)
	}
}

func TestFailuresRollBack(t *testing.T) {
	tests := []struct {
		fail  string
		calls string // the apply's calls, then the rollback's
		cause string
	}{
		{"check", "fpm.check", "fpm refused the new configuration: check failed"},
		{"reload", "fpm.check fpm.reload fpm.check(undo) fpm.reload(undo) fpm.healthy(undo)", "reloading fpm: reload failed"},
		{"healthy", "fpm.check fpm.reload fpm.healthy fpm.check(undo) fpm.reload(undo) fpm.healthy(undo)", "fpm is not healthy after the reload: healthy failed"},
	}
	for _, tt := range tests {
		t.Run(tt.fail, func(t *testing.T) {
			h := newHost(t)
			var c calls
			fails := true
			step := c.step("fpm", tt.fail)
			// The restored configuration passes: fail the first time only.
			orig := map[string]func(context.Context) error{"check": step.Check, "reload": step.Reload, "healthy": step.Healthy}
			once := func(what string) func(context.Context) error {
				return func(ctx context.Context) error {
					err := orig[what](ctx)
					if what == tt.fail && fails {
						fails = false
						return err
					}
					return nil
				}
			}
			step.Check, step.Reload, step.Healthy = once("check"), once("reload"), once("healthy")
			j, err := Apply(context.Background(), h.plan(step), Options{Home: filepath.Join(t.TempDir(), "apply")})
			var f *Failure
			if !errors.As(err, &f) || f.Rollback != nil || !strings.Contains(err.Error(), tt.cause) {
				t.Fatalf("got %v, want a rolled-back failure with %q", err, tt.cause)
			}
			if j.State != RolledBack || !strings.Contains(j.Reason, tt.cause) {
				t.Errorf("journal %s %q", j.State, j.Reason)
			}
			if got := strings.Join(c, " "); got != tt.calls {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
			h.unchanged(t)
		})
	}
}

func TestInterruptedApplyRollsBack(t *testing.T) {
	h := newHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	var c calls
	step := c.step("fpm", "")
	check := step.Check
	step.Check = func(ctx context.Context) error { cancel(); return check(ctx) } // Ctrl-C during the check
	_, err := Apply(ctx, h.plan(step), Options{Home: filepath.Join(t.TempDir(), "apply")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the interruption", err)
	}
	h.unchanged(t)
}

func TestConcurrentApplyRefused(t *testing.T) {
	h := newHost(t)
	opt := Options{Home: filepath.Join(t.TempDir(), "apply")}
	var inner error
	opt.AfterState = func(state string) {
		if state == Written {
			_, inner = Apply(context.Background(), h.plan(), Options{Home: opt.Home})
		}
	}
	if _, err := Apply(context.Background(), h.plan(), opt); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, ErrBusy) {
		t.Fatalf("a second apply while the first ran: %v, want ErrBusy", inner)
	}
}

func TestUntrustedTargetsRefused(t *testing.T) {
	h := newHost(t)
	opt := Options{Home: filepath.Join(t.TempDir(), "apply")}
	open := filepath.Join(h.dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	link := filepath.Join(h.dir, "link.conf")
	if err := os.Symlink(h.existing, link); err != nil {
		t.Fatal(err)
	}
	// A directory link in a directory others can write: the link points
	// into the host's own (trusted) directory, but could be re-pointed
	// between the check and the write.
	dirLink := filepath.Join(open, "pool.d")
	if err := os.Symlink(h.dir, dirLink); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dirLink, "zz.conf"), "is writable by others"},
		{filepath.Join(open, "x.conf"), "phptune writes only into a directory that its own user"},
		{link, "is not a regular file"},
		{"relative.conf", "is not a clean absolute path"},
	} {
		_, err := Apply(context.Background(), Plan{Changes: []Change{{Path: tt.path, Content: []byte("x")}}}, opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
	h.unchanged(t)
	if js, _ := History(opt); len(js) != 0 {
		t.Errorf("refused plans left journals: %+v", js)
	}
}

// TestKilledApplyIsUndone runs apply in a child process killed with
// SIGKILL at each state; the next phptune (Recover) puts the host back.
func TestKilledApplyIsUndone(t *testing.T) {
	if state := os.Getenv("LIVEAPPLY_KILL_AT"); state != "" {
		h := host{existing: os.Getenv("LIVEAPPLY_EXISTING"), dropIn: os.Getenv("LIVEAPPLY_DROPIN")}
		Apply(context.Background(), h.plan(Step{Name: "fpm"}), Options{Home: os.Getenv("LIVEAPPLY_HOME"), AfterState: func(s string) {
			if s == state {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}})
		os.Exit(3) // not killed: the parent says so
	}
	for _, state := range []string{Prepared, Written, Reloaded} {
		t.Run(state, func(t *testing.T) {
			h := newHost(t)
			home := filepath.Join(t.TempDir(), "apply")
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledApplyIsUndone$")
			cmd.Env = append(os.Environ(), "LIVEAPPLY_KILL_AT="+state, "LIVEAPPLY_HOME="+home, "LIVEAPPLY_EXISTING="+h.existing, "LIVEAPPLY_DROPIN="+h.dropIn)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %s: %v", state, err)
			}
			var c calls
			undone, err := Recover(context.Background(), Options{Home: home, StepsFor: func([]string) []Step { return []Step{c.step("fpm", "")} }})
			if err != nil || len(undone) != 1 {
				t.Fatalf("recover: %v, %d undone", err, len(undone))
			}
			h.unchanged(t)
			want := "fpm.check(undo) fpm.reload(undo) fpm.healthy(undo)"
			if state == Prepared {
				want = "" // nothing was written: nothing to reload
			}
			if got := strings.Join(c, " "); got != want {
				t.Errorf("reloads after recovering from %s: %q, want %q", state, got, want)
			}
			if again, _ := Recover(context.Background(), Options{Home: home}); len(again) != 0 {
				t.Errorf("recovered twice: %+v", again)
			}
		})
	}
}

func TestSaveBeside(t *testing.T) {
	opt := Options{Home: t.TempDir()}
	j, err := Apply(context.Background(), Plan{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	p, err := SaveBeside(opt, j, "nginx.patch", []byte("--- a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 || filepath.Dir(p) != filepath.Join(opt.Home, j.ID) {
		t.Errorf("%s: %v %v", p, st, err)
	}
	for _, bad := range []string{"", "../x", "journal.json", "saved-0", ".."} {
		if _, err := SaveBeside(opt, j, bad, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
