package livehost

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/servers/status/fpmstatus"
	"github.com/phptune/phptune/internal/watch/observe"
)

// fpmHost is a host in a directory: Debian's layout of php-fpm (a
// php-fpm.conf that includes pool.d/*.conf, pool www) under a temporary
// root, its master started for real, daemonized, as root with the pool
// running as nobody.
type fpmHost struct {
	root, wwwConf, dropIn string
	www                   []byte
	fpm                   FPM
}

const wwwPool = `[www]
user = nobody
group = nogroup
listen = %s
pm = dynamic
pm.max_children = 5
pm.start_servers = 2
pm.min_spare_servers = 1
pm.max_spare_servers = 3
pm.status_path = /status
`

func newFPMHost(t testing.TB, root string) *fpmHost {
	t.Helper()
	if testing.Short() {
		t.Skip("starts php-fpm; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("a live host's php-fpm master runs as root")
	}
	bin, err := phpfpm.Find()
	if err != nil {
		t.Skip(err)
	}
	if root == "" {
		root = t.TempDir()
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	h := &fpmHost{root: root, wwwConf: filepath.Join(root, "pool.d", "www.conf"), dropIn: filepath.Join(root, "pool.d", "zz-phptune.conf")}
	if err := os.MkdirAll(filepath.Join(root, "pool.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(root, "php-fpm.conf")
	global := fmt.Sprintf("[global]\npid = %[1]s/php-fpm.pid\nerror_log = %[1]s/php-fpm.log\ndaemonize = yes\ninclude = %[1]s/pool.d/*.conf\n", root)
	sock := filepath.Join(root, "www.sock")
	h.www = []byte(fmt.Sprintf(wwwPool, sock))
	for path, b := range map[string][]byte{conf: []byte(global), h.wwwConf: h.www} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.fpm = FPM{Binary: bin.Path, Conf: conf, Listen: "unix:" + sock,
		StatusPath: "/status", StartArgs: []string{"-y", conf, "--allow-to-run-as-root"}, Timeout: 10 * time.Second}
	if err := h.fpm.start(context.Background(), errors.New("starting the test host")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	return h
}

// stop ends every master of the host's configuration and their workers.
func (h *fpmHost) stop() { hosttest.StopMasters(h.fpm.Conf) }

// serves checks the host serves its pool with the given process manager
// and size (counted from the full page's worker list: the page's own
// counters lag the master's once-a-second count after a reload), waiting
// up to 3 s for a reloaded master to spawn its workers.
func (h *fpmHost) serves(ctx context.Context, pm string, workers int64) error {
	var err error
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = h.servesNow(ctx, pm, workers); err == nil {
			return nil
		}
	}
	return err
}

func (h *fpmHost) servesNow(ctx context.Context, pm string, workers int64) error {
	if _, err := h.fpm.Master(); err != nil {
		return err
	}
	network, addr := h.fpm.addr()
	body, err := observe.FPMFetcher(network, addr, h.fpm.StatusPath, 0)(ctx, "json&full")
	if err != nil {
		return err
	}
	st, err := fpmstatus.Parse(body)
	if err != nil {
		return err
	}
	if st.ProcessManager != pm || (workers > 0 && st.TotalProcesses != workers) {
		return fmt.Errorf("the pool runs pm=%s with %d processes, want pm=%s with %d", st.ProcessManager, st.TotalProcesses, pm, workers)
	}
	return nil
}

// intact checks the host's files are as they were: www.conf
// byte-identical and no drop-in.
func (h *fpmHost) intact() error {
	b, err := os.ReadFile(h.wwwConf)
	if err != nil || string(b) != string(h.www) {
		return fmt.Errorf("www.conf changed: %v", err)
	}
	if _, err := os.Lstat(h.dropIn); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the drop-in is still there (%v)", err)
	}
	return nil
}

func (h *fpmHost) plan(dropIn string) liveapply.Plan {
	return liveapply.Plan{Changes: []liveapply.Change{{Path: h.dropIn, Content: []byte(dropIn)}}, Steps: []liveapply.Step{h.fpm.Step()}}
}

func (h *fpmHost) options(t testing.TB) liveapply.Options {
	return liveapply.Options{Home: filepath.Join(h.root, "..", filepath.Base(h.root)+"-apply"), Root: h.root, Log: t.Logf,
		StepsFor: func([]string) []liveapply.Step { return []liveapply.Step{h.fpm.Step()} }}
}

func TestApplyToLiveFPM(t *testing.T) {
	h := newFPMHost(t, "")
	ctx := context.Background()
	if err := h.serves(ctx, "dynamic", 0); err != nil {
		t.Fatal(err)
	}
	opt := h.options(t)
	if _, err := liveapply.Apply(ctx, h.plan("[www]\npm = static\npm.max_children = 7\n"), opt); err != nil {
		t.Fatal(err)
	}
	if err := h.serves(ctx, "static", 7); err != nil {
		t.Fatalf("after apply: %v", err)
	}
	if b, _ := os.ReadFile(h.wwwConf); string(b) != string(h.www) {
		t.Error("apply edited the user's www.conf")
	}
	if _, err := liveapply.Rollback(ctx, opt); err != nil {
		t.Fatal(err)
	}
	if err := h.intact(); err != nil {
		t.Error(err)
	}
	if err := h.serves(ctx, "dynamic", 0); err != nil {
		t.Errorf("after rollback: %v", err)
	}
}

// TestChaos runs the ways an apply to a live php-fpm can go wrong; after
// each the host must serve its old configuration with its files as they
// were. It counts broken hosts (the README quotes the count).
func TestChaos(t *testing.T) {
	ctx := context.Background()
	broken := 0
	check := func(t *testing.T, h *fpmHost) {
		t.Helper()
		err := h.intact()
		if err == nil {
			err = h.serves(ctx, "dynamic", 0)
		}
		if err != nil {
			broken++
			t.Errorf("broken host: %v", err)
		}
	}
	t.Run("invalid value refused by php-fpm -t, nothing reloaded", func(t *testing.T) {
		h := newFPMHost(t, "")
		before, err := h.fpm.started(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = liveapply.Apply(ctx, h.plan("[www]\npm.max_children = -3\n"), h.options(t))
		if err == nil || !strings.Contains(err.Error(), "php-fpm refused the new configuration") {
			t.Fatalf("got %v", err)
		}
		if after, _ := h.fpm.started(ctx); after != before {
			t.Error("the master was reloaded for a configuration php-fpm -t refused")
		}
		check(t, h)
	})
	t.Run("reload makes the master exit: rolled back and started again", func(t *testing.T) {
		h := newFPMHost(t, "")
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		// php-fpm -t does not bind: only the reloaded master finds the port taken.
		_, err = liveapply.Apply(ctx, h.plan("[www]\nlisten = "+busy.Addr().String()+"\n"), h.options(t))
		var f *liveapply.Failure
		if !errors.As(err, &f) || f.Rollback != nil {
			t.Fatalf("got %v, want a failure rolled back whole", err)
		}
		t.Logf("apply: %v", err)
		check(t, h)
	})
	t.Run("master restarted by someone else mid-apply", func(t *testing.T) {
		h := newFPMHost(t, "")
		opt := h.options(t)
		var old int
		opt.AfterState = func(state string) {
			if state == liveapply.Written {
				old, _ = h.fpm.Master()
				h.stop()
				if err := h.fpm.start(ctx, errors.New("restarted by the test")); err != nil {
					t.Error(err)
				}
			}
		}
		if _, err := liveapply.Apply(ctx, h.plan("[www]\npm.max_children = 6\n"), opt); err != nil {
			t.Fatal(err)
		}
		if pid, _ := h.fpm.Master(); pid == old {
			t.Fatal("the master was not restarted")
		}
		if err := h.serves(ctx, "dynamic", 0); err != nil {
			t.Error(err)
		}
		if _, err := liveapply.Rollback(ctx, opt); err != nil {
			t.Fatal(err)
		}
		check(t, h)
	})
	t.Run("pool removed between advise and apply", func(t *testing.T) {
		h := newFPMHost(t, "")
		// Someone moved the pool out; the running master still has it.
		if err := os.Rename(h.wwwConf, h.wwwConf+".disabled"); err != nil {
			t.Fatal(err)
		}
		_, err := liveapply.Apply(ctx, h.plan("[www]\npm.max_children = 6\n"), h.options(t))
		if err == nil {
			t.Fatal("a drop-in for a pool that is gone was applied")
		}
		t.Logf("apply: %v", err)
		if err := os.Rename(h.wwwConf+".disabled", h.wwwConf); err != nil {
			t.Fatal(err)
		}
		check(t, h)
	})
	t.Run("disk full while writing the drop-in", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "small")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", root).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a small tmpfs here: %v %s", err, out)
		}
		// Registered before the host's own clean-up, so it runs after it.
		t.Cleanup(func() { exec.Command("umount", "-l", root).Run() })
		h := newFPMHost(t, root)
		// Fill what is left, then ask for a drop-in larger than nothing.
		fill, _ := os.Create(filepath.Join(root, "fill"))
		fill.Write(make([]byte, 1<<20))
		fill.Close()
		_, err := liveapply.Apply(ctx, h.plan("[www]\n; "+strings.Repeat("x", 8192)+"\npm.max_children = 6\n"), h.options(t))
		if err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("got %v, want the full disk", err)
		}
		os.Remove(filepath.Join(root, "fill"))
		check(t, h)
	})
	t.Run("two concurrent applies", func(t *testing.T) {
		h := newFPMHost(t, "")
		var outs [2]strings.Builder
		var cmds [2]*exec.Cmd
		for i := range cmds {
			cmds[i] = exec.Command(os.Args[0], "-test.run=^TestChaosChild$", "-test.v")
			cmds[i].Env = append(os.Environ(), "LIVEHOST_CHILD_ROOT="+h.root)
			cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range cmds {
			c.Wait()
		}
		applied, busy := 0, 0
		for _, o := range outs {
			switch {
			case strings.Contains(o.String(), "child apply: <nil>"):
				applied++
			case strings.Contains(o.String(), "another phptune apply or rollback is running"):
				busy++
			}
		}
		// Either one applied while the other found the lock held, or the
		// second came after the first had finished and applied the same
		// drop-in again: never two at once, never a failure.
		if applied+busy != 2 || applied == 0 {
			t.Errorf("two applies at once: %d applied, %d refused as busy\nfirst:\n%s\nsecond:\n%s", applied, busy, outs[0].String(), outs[1].String())
		}
		if err := h.serves(ctx, "static", 6); err != nil {
			broken++
			t.Errorf("broken host after two applies: %v", err)
		}
		for {
			js, _ := liveapply.History(h.options(t))
			if len(js) == 0 || js[0].State != liveapply.Done {
				break
			}
			if _, err := liveapply.Rollback(ctx, h.options(t)); err != nil {
				t.Fatalf("rollback: %v", err)
			}
		}
		check(t, h)
	})
	t.Run("Ctrl-C and SIGKILL at random moments", func(t *testing.T) {
		h := newFPMHost(t, "")
		rng := rand.New(rand.NewSource(time.Now().UnixNano()))
		for i := range 20 {
			sig := syscall.SIGKILL
			if i%2 == 1 {
				sig = syscall.SIGINT
			}
			delay := time.Duration(rng.Intn(400)) * time.Millisecond
			cmd := exec.Command(os.Args[0], "-test.run=^TestChaosChild$")
			cmd.Env = append(os.Environ(), "LIVEHOST_CHILD_ROOT="+h.root)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			cmd.Process.Signal(sig)
			cmd.Wait()
			// The next phptune: recover, then the host must be as before.
			if _, err := liveapply.Recover(ctx, h.options(t)); err != nil {
				t.Errorf("run %d (%v after %v): recover: %v", i, sig, delay, err)
			}
			// A child that finished before the signal applied for real:
			// roll that back too.
			if js, _ := liveapply.History(h.options(t)); len(js) > 0 && js[0].State == liveapply.Done {
				if _, err := liveapply.Rollback(ctx, h.options(t)); err != nil {
					t.Errorf("run %d: rollback: %v", i, err)
				}
			}
			err := h.intact()
			if err == nil {
				err = h.serves(ctx, "dynamic", 0)
			}
			if err != nil {
				broken++
				log, _ := os.ReadFile(filepath.Join(h.root, "php-fpm.log"))
				t.Errorf("run %d (%v after %v): broken host: %v\nchild:\n%s\nphp-fpm.log:\n%s", i, sig, delay, err, out.String(), tail(log, 15))
			}
		}
	})
	t.Logf("chaos: %d broken hosts", broken)
	fmt.Printf("livehost chaos: %d broken hosts\n", broken)
}

// TestChaosChild is the apply TestChaos interrupts (it runs only as
// TestChaos's child).
func TestChaosChild(t *testing.T) {
	root := os.Getenv("LIVEHOST_CHILD_ROOT")
	if root == "" {
		t.Skip("run by TestChaos")
	}
	bin, _ := phpfpm.Find()
	conf := filepath.Join(root, "php-fpm.conf")
	h := &fpmHost{root: root, dropIn: filepath.Join(root, "pool.d", "zz-phptune.conf"), fpm: FPM{Binary: bin.Path, Conf: conf,
		Listen: "unix:" + filepath.Join(root, "www.sock"), StatusPath: "/status",
		StartArgs: []string{"-y", conf, "--allow-to-run-as-root"}, Timeout: 10 * time.Second}}
	ctx, stop := signalContext()
	defer stop()
	_, err := liveapply.Apply(ctx, h.plan("[www]\npm = static\npm.max_children = "+strconv.Itoa(6)+"\n"), h.options(t))
	t.Logf("child apply: %v", err)
}

// signalContext is cancelled by SIGINT, as phptune's commands are.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestForgedMasterIgnored: a process of another account titled as the
// master of a configuration (any process can set its title) is not
// found, so it is never signalled nor its configuration read; the same
// process run as root would be.
func TestForgedMasterIgnored(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as nobody")
	}
	conf := filepath.Join(t.TempDir(), "php-fpm.conf")
	// A root-owned binary named like php-fpm's (a copy of cat), so that
	// only the account decides.
	cat, err := os.ReadFile("/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "forged-master-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // nobody runs it too
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "php-fpm-forged")
	if err := os.WriteFile(bin, cat, 0o755); err != nil {
		t.Fatal(err)
	}
	forge := func(cred *syscall.Credential) *exec.Cmd {
		cmd := &exec.Cmd{Path: bin, Args: []string{"php-fpm: master process (" + conf + ")"}, SysProcAttr: &syscall.SysProcAttr{Credential: cred}}
		if _, err := cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	forge(&syscall.Credential{Uid: 65534, Gid: 65534})
	f := FPM{Conf: conf}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if pid, err := f.Master(); err == nil {
			t.Fatalf("a process of nobody titled as the master was taken for it: %d", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	root := forge(nil)
	var pid int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if pid, err = f.Master(); err == nil {
			break
		}
	}
	if err != nil || pid != root.Process.Pid {
		t.Fatalf("root's process titled as the master: %d, %v; want %d (the check must be able to find a master)", pid, err, root.Process.Pid)
	}
}
