// Package perf runs Linux perf (Debian's linux-perf) for phptune profile:
// `perf record` of every CPU with DWARF call graphs at a low rate, and
// `perf script` confined to a directory of verified links (see Symfs), so
// that perf, run as root, reads no file the profiled lab could have
// written. perf's text output is parsed by package profile.
package perf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/capwrite"
	"github.com/phptune/phptune/internal/watch/profile"
)

// Options are a recording's settings.
type Options struct {
	// Freq is the sampling rate per CPU, in Hz (49–99: DWARF stacks cost
	// perf 8 KB a sample to copy and unwind).
	Freq int
	// StackBytes is how much of each user stack is copied for DWARF
	// unwinding.
	StackBytes int
}

// DefaultOptions sample at 49 Hz with 8 KB of stack.
var DefaultOptions = Options{Freq: 49, StackBytes: 8192}

// Binary is perf's path, found by Check.
type Binary struct{ Path string }

// ErrUnavailable wraps every reason perf cannot profile here.
var ErrUnavailable = errors.New("native profiling unavailable")

// Check finds perf and checks it may sample every CPU: as root, or with
// kernel.perf_event_paranoid at -1. Its error says what is missing and
// how to get it.
func Check(ctx context.Context) (*Binary, error) {
	path, err := exec.LookPath("perf")
	if err != nil {
		return nil, fmt.Errorf("%w: perf is not installed (as root: apt-get install linux-perf, or phptune setup)", ErrUnavailable)
	}
	// Debian's /usr/bin/perf is a wrapper that runs perf_VERSION for the
	// running kernel; it fails without one.
	vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(vctx, path, "--version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: %s --version failed: %s (%v)", ErrUnavailable, path, strings.TrimSpace(string(out)), err)
	}
	if os.Geteuid() != 0 {
		b, _ := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
		level, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if level > -1 {
			return nil, fmt.Errorf("%w: sampling every CPU needs root or kernel.perf_event_paranoid=-1 (it is %d); run phptune profile as root", ErrUnavailable, level)
		}
	}
	return &Binary{Path: path}, nil
}

// Recording is a running `perf record`.
type Recording struct {
	cmd    *exec.Cmd
	Data   string
	stderr bytes.Buffer
	done   chan error
}

// Record starts sampling every CPU (cpu-clock: these VMs have no hardware
// counters) into dir/perf.data; dir must be private (root-only). Stop
// ends it. The process dies with phptune (Pdeathsig), so a crash leaves
// no perf behind.
func (b *Binary) Record(ctx context.Context, dir string, o Options) (*Recording, error) {
	if o.Freq < 1 || o.Freq > 999 {
		return nil, fmt.Errorf("perf sampling rate %d Hz: use 1..999", o.Freq)
	}
	if o.StackBytes < 1024 || o.StackBytes > 65528 {
		return nil, fmt.Errorf("perf stack copy %d bytes: use 1024..65528", o.StackBytes)
	}
	data := filepath.Join(dir, "perf.data")
	r := &Recording{Data: data, done: make(chan error, 1)}
	// -B -N: no build-ids, no build-id cache: perf record then reads no
	// file of the profiled processes (it would read every mapped file,
	// the lab's own included, as root).
	r.cmd = exec.Command(b.Path, "record", "-a", "-e", "cpu-clock", "-F", strconv.Itoa(o.Freq),
		"--call-graph", "dwarf,"+strconv.Itoa(o.StackBytes), "-B", "-N", "-q", "-o", data)
	r.cmd.Stdout, r.cmd.Stderr = &r.stderr, &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting perf record: %w", err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	// perf needs a moment to open its events; one that fails at once
	// (permissions, a kernel without perf events) says so here.
	select {
	case err := <-r.done:
		return nil, fmt.Errorf("%w: perf record exited at once: %s (%v)", ErrUnavailable, strings.TrimSpace(r.stderr.String()), err)
	case <-time.After(500 * time.Millisecond):
	case <-ctx.Done():
		r.kill()
		return nil, ctx.Err()
	}
	return r, nil
}

// Stop ends the recording (SIGINT: perf writes its header and exits) and
// waits for perf, killing it after a minute.
func (r *Recording) Stop() error {
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-r.done:
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 130) {
			if st, serr := os.Stat(r.Data); serr != nil || st.Size() == 0 {
				return fmt.Errorf("perf record: %s (%v)", strings.TrimSpace(r.stderr.String()), err)
			}
		}
		return nil
	case <-time.After(time.Minute):
		r.kill()
		return errors.New("perf record did not stop within a minute after SIGINT: killed")
	}
}

func (r *Recording) kill() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
}

// Script runs `perf script` on data with symbols and unwinding confined to
// symfs (a Symfs's directory) and the kernel's symbols from
// /proc/kallsyms, and passes every sample to each. perf, run as root,
// looks up a JIT's /tmp/perf-PID.map only when root owns it; the lab's
// maps are read by the caller (profile.PerfMap), never by perf.
func (b *Binary) Script(ctx context.Context, data, symfs string, each func(profile.Sample)) error {
	cmd := exec.CommandContext(ctx, b.Path, "script", "-i", data, "--symfs", symfs, "--kallsyms", "/proc/kallsyms",
		"-F", "comm,pid,tid,ip,sym,dso")
	var stderr bytes.Buffer
	cmd.Stderr = &capwrite.Writer{W: &stderr, N: 64 << 10}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting perf script: %w", err)
	}
	perr := profile.ReadPerfScript(out, each)
	if perr != nil {
		_, _ = io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	if perr != nil {
		return fmt.Errorf("reading perf script's output: %w", perr)
	}
	if werr != nil {
		return fmt.Errorf("perf script: %s (%v)", strings.TrimSpace(stderr.String()), werr)
	}
	return nil
}

// PID is perf record's process id.
func (r *Recording) PID() int { return r.cmd.Process.Pid }
