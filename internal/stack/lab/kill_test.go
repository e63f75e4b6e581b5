package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the kill tests run `lab up` in a child process (this test
// binary re-executed) that they can SIGKILL or SIGINT at any moment.
func TestMain(m *testing.M) {
	if app := os.Getenv("PHPTUNE_LAB_CHILD_APP"); app != "" {
		ctx, stop := signalContext()
		defer stop()
		var set []string
		if s := os.Getenv("PHPTUNE_LAB_CHILD_SET"); s != "" {
			set = strings.Split(s, ",")
		}
		_, err := Up(ctx, Options{Name: os.Getenv("PHPTUNE_LAB_CHILD_NAME"), App: app, Set: set})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func startChild(t *testing.T, name, app string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PHPTUNE_LAB_CHILD_APP="+app, "PHPTUNE_LAB_CHILD_NAME="+name)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// moment is a point of `lab up` recognised in the state it records: the
// kill tests wait for it, so the signal lands mid-operation every time.
type moment struct {
	name string
	at   func(l *Lab) bool
}

func recorded(l *Lab, component string) bool {
	for _, p := range l.Processes {
		if p.Component == component {
			return true
		}
	}
	return false
}

// waitFor polls the lab's state until m holds, and reports false if the
// child exited first.
func waitFor(t *testing.T, name string, m moment, child *exec.Cmd) bool {
	t.Helper()
	// alive counts a zombie as gone, so the child is not reaped here:
	// the test's own Wait must still see how it ended.
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); {
		if l, err := Open(name); err == nil && m.at(l) {
			return true
		}
		if !alive(child.Process.Pid) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

// TestKilledDuringUpLeavesNothing SIGKILLs `lab up` at each step of a
// WordPress lab's start — MariaDB initialising, WordPress installing, the
// snapshot being dumped, php-fpm starting, nginx starting — then checks
// that the next `lab status` finds the lab dead and cleans it: no process,
// no directory, no socket.
func TestKilledDuringUpLeavesNothing(t *testing.T) {
	testHome(t)
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
			t.Skip("mariadb-server is not installed")
		}
	}
	moments := []moment{
		{"mariadb-install-db", func(l *Lab) bool { return recorded(l, "mariadb-setup") && !recorded(l, "mariadb") }},
		{"provisioning", func(l *Lab) bool { return recorded(l, "mariadb") && recorded(l, "mariadb-setup") }},
		{"wordpress-install", func(l *Lab) bool { return recorded(l, "app-setup") }},
		{"snapshot", func(l *Lab) bool { return recorded(l, "mariadb-dump") }},
		{"php-fpm-start", func(l *Lab) bool { return recorded(l, "php-fpm") && !recorded(l, "nginx") }},
		{"nginx-start", func(l *Lab) bool { return recorded(l, "nginx") && l.State == "starting" }},
	}
	for i, m := range moments {
		name := fmt.Sprintf("kill%d", i)
		t.Run(m.name, func(t *testing.T) {
			cmd := startChild(t, name, "wordpress")
			if !waitFor(t, name, m, cmd) {
				_ = cmd.Process.Kill()
				Down(name)
				t.Fatalf("lab up finished before the moment %q came", m.name)
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			l, err := Open(name)
			if err != nil {
				t.Fatalf("after SIGKILL at %s: %v", m.name, err)
			}
			t.Logf("killed at %s: state %q, %d live processes", m.name, l.State, len(labProcesses(l.owner(), l.Processes)))
			hs, err := List()
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) != 1 || !strings.HasPrefix(hs[0].Status, "cleaned") {
				t.Fatalf("status after SIGKILL at %s: %+v, want the lab cleaned", m.name, hs)
			}
			assertGone(t, l)
			if left := labProcesses(testOwner(t, l.Dir), nil); len(left) > 0 {
				t.Fatalf("orphans: %v", left)
			}
		})
	}
}

// TestInterruptedUpCleansUp sends Ctrl-C (SIGINT) during `lab up`: the child
// must stop what it started and remove the lab before it exits.
func TestInterruptedUpCleansUp(t *testing.T) {
	testHome(t)
	cmd := startChild(t, "intr", "io")
	// Ctrl-C while MariaDB initialises.
	init := moment{"mariadb-install-db", func(l *Lab) bool { return recorded(l, "mariadb-setup") }}
	if !waitFor(t, "intr", init, cmd) {
		t.Fatal("lab up finished before MariaDB initialised")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	l := &Lab{Name: "intr", Dir: Root() + "/intr"}
	if err == nil {
		// It had finished; that is fine, but then it must be healthy.
		st, oerr := Open("intr")
		if oerr != nil || st.State != "up" {
			t.Fatalf("child exited 0 but lab is %+v %v", st, oerr)
		}
		Down("intr")
	} else if !strings.Contains(err.Error(), "exit status") {
		t.Fatalf("child: %v", err)
	}
	assertGone(t, l)
}
