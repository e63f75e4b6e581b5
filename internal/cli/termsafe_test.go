package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
)

// hostile is what a lab, or any local account, writes where phptune reads
// it: an OSC setting the terminal's title ended by BEL, a CSI hiding what
// follows, an 8-bit CSI. shown is how phptune must print it.
const (
	hostile = "\x1b]2;PWNED\a\x1b[8m\u009b"
	shown   = `\x1b]2;PWNED\a\x1b[8m\u009b`
)

// checkShown fails t when out holds a raw escape or does not show want.
func checkShown(t *testing.T, out, want string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\a\u009b") {
		t.Errorf("raw escape printed: %q", out)
	}
	if !strings.Contains(out, want) {
		t.Errorf("%s not shown in: %q", want, out)
	}
}

// TestNeighboursLineShowsProcessNames runs a process named, as any account
// may name its own, "h2o" and an OSC (exec'd through a link of that name,
// which the kernel takes as its comm), and reads the warning lab up prints.
func TestNeighboursLineShowsProcessNames(t *testing.T) {
	name := "h2o\x1b]2;PWNED\a" // 13 bytes: comm keeps 15
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	link := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "comm"))
		if strings.TrimSpace(string(b)) == name {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's comm is %q, not %q", b, name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var stderr bytes.Buffer
	warnNeighbours(&Env{Ctx: context.Background(), Stdout: &bytes.Buffer{}, Stderr: &stderr})
	checkShown(t, stderr.String(), `h2o\x1b]2;PWNED\a (pid `+strconv.Itoa(cmd.Process.Pid))
}

// TestTopShowsStatusPageEscapes renders a status page whose pool, worker
// state and request URI a lab wrote.
func TestTopShowsStatusPageEscapes(t *testing.T) {
	s := &results.Sample{FPM: []results.FPMStatus{{
		Pool: "www" + hostile, ProcessManager: "dynamic",
		Workers: []results.FPMWorker{{PID: 7, State: "Idle" + hostile, RequestURI: "/x" + hostile}},
	}, {Pool: "err", Error: "read: " + hostile}}, Errors: []string{"observer: " + hostile}}
	for _, width := range []int{0, 400} {
		out := renderTop(&lab.Lab{Name: "wp", App: "hello"}, s, nil, width)
		checkShown(t, out, "www"+shown)
		checkShown(t, out, "/x"+shown)
		checkShown(t, out, "Idle")
		checkShown(t, out, "observer: "+shown)
	}
}

// TestAdviceShowsMariaDBEscapes prints advice whose MariaDB version,
// socket and a finding came from the host.
func TestAdviceShowsMariaDBEscapes(t *testing.T) {
	a := advise.Advice{
		Findings: []advise.Finding{{Severity: "warning", Pool: "www" + hostile, Message: "answer " + hostile}},
		MariaDB:  &advise.MariaDBAdvice{Version: "10.11.6-MariaDB" + hostile, Socket: "/run/mysqld/mysqld.sock" + hostile},
	}
	var stdout bytes.Buffer
	printAdvice(&Env{Ctx: context.Background(), Stdout: &stdout, Stderr: &bytes.Buffer{}}, a)
	out := stdout.String()
	checkShown(t, out, "MariaDB 10.11.6-MariaDB"+shown)
	checkShown(t, out, "pool www"+shown+": answer "+shown)
}

// TestMainShowsErrorEscapes checks the last line of every failed command:
// an error quoting a lab's log or answer.
func TestMainShowsErrorEscapes(t *testing.T) {
	var stderr bytes.Buffer
	err := errors.New("the lab's log says: " + hostile + "\nsecond line")
	printError(&stderr, err)
	checkShown(t, stderr.String(), "the lab's log says: "+shown+"\nsecond line")
}
