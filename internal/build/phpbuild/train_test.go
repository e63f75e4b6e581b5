package phpbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A php-fpm that exits while starting (the BOLT-instrumented one did) must
// end the training with its exit status, and the deferred wait after it
// must not block: the first version read the exit from a channel once in
// waitSocket, and the deferred second read hung the build forever.
func TestWaitSocketProcessExits(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := waitFor(cmd)
	err := waitSocket(context.Background(), filepath.Join(t.TempDir(), "none.sock"), 0, w)
	if err == nil || !strings.Contains(err.Error(), "exited while starting (exit status 3)") {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-w.done: // a second waiter is not blocked
	case <-time.After(5 * time.Second):
		t.Fatal("a second wait blocked")
	}
}

// TestTrainingWorkersExitGracefully: with the training's configuration,
// php-fpm's workers stop through exit() when the master is told to stop
// (SIGQUIT), which is when an instrumented worker writes its profile. With
// php-fpm's default process_control_timeout (0) the master sent SIGTERM
// right after, the workers died of it, and only the master's profile was
// left: a PGO build trained on start-up code alone (gcov-dump: runs=1).
// Runs the distro's php-fpm (the signals are the same).
func TestTrainingWorkersExitGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm; skipped with -short")
	}
	fpm, err := exec.LookPath("php-fpm8.2")
	if err != nil {
		if fpm, err = exec.LookPath("/usr/sbin/php-fpm8.2"); err != nil {
			t.Skip("no php-fpm8.2: run phptune setup")
		}
	}
	run := t.TempDir()
	conf := filepath.Join(run, "php-fpm.conf")
	// php-fpm logs its children's exits while stopping at debug level.
	c := strings.Replace(FPMConfig(run, 2), "[global]\n", "[global]\nlog_level = debug\n", 1)
	if err := os.WriteFile(conf, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fpm, "-F", "-R", "-n", "-y", conf)
	cmd.Dir = run
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := waitFor(cmd)
	defer func() { _ = cmd.Process.Kill(); <-w.done }()
	if err := waitSocket(context.Background(), filepath.Join(run, "php-fpm.sock"), os.Getuid(), w); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.done:
	case <-time.After(40 * time.Second):
		t.Fatal("php-fpm did not stop within 40 s of SIGQUIT")
	}
	log, err := os.ReadFile(filepath.Join(run, "php-fpm.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(log), "exited with code 0"); got != 2 || strings.Contains(string(log), "exited on signal") {
		t.Errorf("want both workers to exit with code 0, php-fpm's log:\n%s", log)
	}
}

func TestParseGcdaRuns(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  bool
	}{
		{"x.gcda:data:magic `gcda':version `B22*'\nx.gcda:  a1000000:   8:OBJECT_SUMMARY runs=3, sum_max=6179580\n", 3, false},
		{"  a1000000:   8:OBJECT_SUMMARY runs=1, sum_max=67795", 1, false},
		{"OBJECT_SUMMARY runs=, sum_max=1", 0, true},
		{"nothing here", 0, true},
		{"OBJECT_SUMMARY runs=99999999999999", 0, true}, // more than 10 digits
	} {
		got, err := ParseGcdaRuns(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseGcdaRuns(%q) = %d, %v; want %d (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzParseGcdaRuns(f *testing.F) {
	f.Add("OBJECT_SUMMARY runs=3, sum_max=1")
	f.Add("OBJECT_SUMMARY runs=")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseGcdaRuns(s)
		if err == nil && (n < 0 || !strings.Contains(s, "OBJECT_SUMMARY runs=")) {
			t.Fatalf("%q: %d without an error", s, n)
		}
	})
}
