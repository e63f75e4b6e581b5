package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/watch/sockq"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// TestApplySysctlRefusedWithoutRoot: --apply-sysctl without root is a
// usage error naming the flag, for bench, tune and compare, before any
// connection is made or lab started.
func TestApplySysctlRefusedWithoutRoot(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	geteuid = func() int { return 1000 }
	defer func() { geteuid = os.Geteuid }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	for _, args := range [][]string{
		{"bench", "--apply-sysctl", "-d", "1s", "http://" + ln.Addr().String() + "/"},
		{"tune", "--apply-sysctl", "--app", "hello"},
		{"compare", "--apply-sysctl", "--app", "hello", "default"},
	} {
		_, errs, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, "--apply-sysctl needs root") {
			t.Errorf("%v: exit %d\n%s", args, code, errs)
		}
	}
	if accepted.Load() != 0 {
		t.Errorf("%d connections reached the server", accepted.Load())
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Errorf("a lab was started: %+v", hs)
	}
}

// somaxconn reads the host's value.
func somaxconn(t *testing.T) int64 {
	t.Helper()
	v, err := sysctl.NewFS("/proc").Value(sysctl.Somaxconn)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// fpmBacklog is the kernel's backlog of the lab's php-fpm socket.
func fpmBacklog(t *testing.T, name string) int64 {
	t.Helper()
	l, err := lab.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	a, err := sockq.ParseAddr(l.FPMListen)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := (&sockq.Reader{}).Listeners(true, false)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := sockq.Find(ls, a)
	if !ok {
		t.Fatalf("no listener %s", l.FPMListen)
	}
	return s.Backlog
}

// waitSomaxconn waits until somaxconn is want.
func waitSomaxconn(t *testing.T, want int64, within time.Duration) bool {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if somaxconn(t) == want {
			return true
		}
	}
	return false
}

// TestApplySysctlChild is the phptune the crash case kills: it runs only
// when started by TestApplySysctlRestores.
func TestApplySysctlChild(t *testing.T) {
	args := os.Getenv("PHPTUNE_TEST_CHILD_ARGS")
	if args == "" {
		t.Skip("run by TestApplySysctlRestores")
	}
	os.Exit(Main(context.Background(), strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// TestApplySysctlRestores: bench --apply-sysctl raises net.core.somaxconn
// for the run (the lab's php-fpm socket gets the backlog it asks for,
// which somaxconn capped before) and restores it after a normal end,
// after Ctrl-C, and after a crash (the next phptune restores it). The
// machine's somaxconn is only ever raised above its value, and the test
// restores it if anything goes wrong.
func TestApplySysctlRestores(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--apply-sysctl needs root")
	}
	home := labtest.Home(t)
	t.Chdir(t.TempDir())
	before := somaxconn(t)
	if before >= 65535 {
		t.Skipf("somaxconn is %d already: listen.backlog cannot ask for more", before)
	}
	want := min(2*before, 65535)
	t.Cleanup(func() {
		// Whatever happened, the host gets its value back.
		if now := somaxconn(t); now == want {
			_ = os.WriteFile("/proc/sys/net/core/somaxconn", []byte(strconv.FormatInt(before, 10)), 0)
			t.Errorf("somaxconn left at %d; put back to %d", now, before)
		}
	})
	if _, errs, code := runCLI(t, "lab", "up", "--name", "sysctl", "--app", "hello", "--set", "listen.backlog="+strconv.FormatInt(want, 10)); code != 0 {
		t.Fatalf("lab up: %s", errs)
	}
	if got := fpmBacklog(t, "sysctl"); got != before {
		t.Fatalf("php-fpm asked for %d under somaxconn %d and got %d", want, before, got)
	}
	record := filepath.Join(home, sysctl.RecordFile)

	// 1. A normal end.
	out, errs, code := runCLI(t, "bench", "--lab", "sysctl", "--apply-sysctl", "--no-save", "--json", "-c", "2", "-d", "2s", "--observe-interval", "250ms")
	if code != 0 {
		t.Fatalf("bench --apply-sysctl: exit %d\n%s", code, errs)
	}
	var b results.Bench
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	k := b.Environment.KernelLimits
	if len(k.Applied) != 1 || k.Applied[0] != (results.SysctlChange{Name: sysctl.Somaxconn, From: strconv.FormatInt(before, 10), To: strconv.FormatInt(want, 10)}) ||
		k.Sysctl[sysctl.Somaxconn] != strconv.FormatInt(before, 10) {
		t.Errorf("kernel limits %+v", k)
	}
	if len(k.Backlogs) == 0 || k.Backlogs[0] != (results.Backlog{Knob: "listen.backlog", Asked: want, Effective: want, Somaxconn: want}) {
		t.Errorf("backlogs %+v", k.Backlogs)
	}
	// The kernel itself gave php-fpm's socket the raised backlog during
	// the run (the observer reads it from the socket tables).
	var seen []int64
	for _, s := range b.Observation.Samples {
		for _, q := range s.Queues {
			if q.Owner == "php-fpm" {
				seen = append(seen, q.Backlog)
			}
		}
	}
	if len(seen) == 0 || slices.ContainsFunc(seen, func(n int64) bool { return n != want }) {
		t.Errorf("php-fpm's socket had backlogs %v during the run (%d samples), want %d", seen, len(b.Observation.Samples), want)
	}
	if now := somaxconn(t); now != before {
		t.Fatalf("after the run somaxconn is %d, want %d\n%s", now, before, errs)
	}
	if _, err := os.Lstat(record); err == nil {
		t.Error("the record outlived the run")
	}
	if got := fpmBacklog(t, "sysctl"); got != before {
		t.Errorf("after the run php-fpm's socket keeps backlog %d, want %d (the host's)", got, before)
	}
	for _, w := range []string{"--apply-sysctl raised net.core.somaxconn", "restored net.core.somaxconn to " + strconv.FormatInt(before, 10)} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs)
		}
	}

	// 2. Ctrl-C in the middle of the run.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var raised bool
	go func() {
		defer wg.Done()
		raised = waitSomaxconn(t, want, 20*time.Second)
		time.Sleep(1500 * time.Millisecond) // into the load
		cancel()
	}()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code = Main(ctx, []string{"bench", "--lab", "sysctl", "--apply-sysctl", "--no-save", "-c", "2", "-d", "30s"}, &stdout, &stderr)
	wg.Wait()
	if !raised || code != 130 || time.Since(start) > 25*time.Second {
		t.Errorf("Ctrl-C: raised %v, exit %d after %v\n%s", raised, code, time.Since(start), stderr.String())
	}
	if now := somaxconn(t); now != before {
		t.Fatalf("after Ctrl-C somaxconn is %d, want %d\n%s", now, before, stderr.String())
	}
	if _, err := os.Lstat(record); err == nil {
		t.Error("the record outlived the interrupted run")
	}

	// 3. A crash: phptune killed outright leaves the record; the next
	// phptune restores what it names.
	child := exec.Command(os.Args[0], "-test.run=^TestApplySysctlChild$", "-test.count=1")
	child.Env = append(os.Environ(), "PHPTUNE_TEST_CHILD_ARGS="+strings.Join([]string{"bench", "--lab", "sysctl", "--apply-sysctl", "--no-save", "-c", "2", "-d", "30s"}, "\x1f"))
	var childErr syncBuffer
	child.Stderr = &childErr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(childErr.String(), "bench: page ") { // raised, lab restarted, load next
			time.Sleep(500 * time.Millisecond)
			_ = child.Process.Signal(syscall.SIGKILL)
			killed = true
			break
		}
	}
	_ = child.Wait()
	if !killed {
		t.Fatalf("the child never started its load:\n%s", childErr.String())
	}
	if now := somaxconn(t); now != want {
		t.Fatalf("the killed run left somaxconn at %d, want %d (raised)\n%s", now, want, childErr.String())
	}
	if _, err := os.Lstat(record); err != nil {
		t.Fatalf("the killed run left no record: %v", err)
	}
	_, errs, code = runCLI(t, "lab", "status")
	if code != 0 || !strings.Contains(errs, "phptune: restored net.core.somaxconn to "+strconv.FormatInt(before, 10)+" (from "+strconv.FormatInt(want, 10)+") (left raised by a phptune run that ended without restoring it)") {
		t.Errorf("the next phptune: exit %d\n%s", code, errs)
	}
	if now := somaxconn(t); now != before {
		t.Fatalf("after the next phptune somaxconn is %d, want %d", now, before)
	}
	if _, err := os.Lstat(record); err == nil {
		t.Error("the record outlived its restore")
	}
}

// syncBuffer is a bytes.Buffer safe to read while a child writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
