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
		_, err := Up(ctx, Options{Name: os.Getenv("PHPTUNE_LAB_CHILD_NAME"), App: app})
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

// TestKilledDuringUpLeavesNothing SIGKILLs `lab up` at several moments of a
// WordPress lab's start (MariaDB initialising, WordPress installing, servers
// starting), then checks that the next `lab status` finds the lab dead and
// cleans it: no process, no directory, no socket.
func TestKilledDuringUpLeavesNothing(t *testing.T) {
	testHome(t)
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
			t.Skip("mariadb-server is not installed")
		}
	}
	for i, delay := range []time.Duration{300 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 4500 * time.Millisecond} {
		name := fmt.Sprintf("kill%d", i)
		t.Run(name, func(t *testing.T) {
			cmd := startChild(t, name, "wordpress")
			time.Sleep(delay)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			l, err := Open(name)
			if err != nil {
				l = &Lab{Name: name, Dir: Root() + "/" + name}
			}
			t.Logf("killed after %v: state %q, %d live processes", delay, l.State, len(labProcesses(testOwner(t, l.Dir), nil)))
			if _, err := List(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(l.Dir); err == nil {
				// Killed after it finished: the lab is up and healthy; take it down.
				st, _ := Open(name)
				if st == nil || st.State != "up" {
					t.Fatalf("lab %s survived status in state %+v", name, st)
				}
				if err := Down(name); err != nil {
					t.Fatal(err)
				}
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
	time.Sleep(1200 * time.Millisecond)
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
