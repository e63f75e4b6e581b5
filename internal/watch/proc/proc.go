// Package proc reads what phptune's observer needs from /proc and from the
// cgroup file system: each process's CPU time and memory (RSS, PSS, USS), the
// process tree, the machine's CPU split (steal and softirq included), run
// queue, context switches, free memory and swap, and the cgroup memory limit
// that applies to a process.
//
// An FS is rooted at a directory (normally /proc and /sys) so that tests read
// fixture trees from testdata/, as github.com/prometheus/procfs does; that
// library parses the machine-wide files (/proc/stat, meminfo, a process's
// cgroup file). The per-process files that are read for every process on
// every sample (stat, smaps_rollup) are parsed here, with a reused buffer and
// without allocating per field, because they dominate the sampler's cost.
package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/prometheus/procfs"
)

// ErrParse is wrapped by every error about a file whose contents could not be
// understood.
var ErrParse = errors.New("malformed /proc file")

// ErrGone is returned when the process exited (or never existed): a normal
// event between two samples (pm.max_requests recycling, ondemand pools), not a
// failure.
var ErrGone = errors.New("process is gone")

// FS reads a proc file system and a sys file system rooted at given paths.
type FS struct {
	proc string
	sys  string
	lib  procfs.FS
	buf  []byte
}

// NewFS returns an FS reading procRoot (normally "/proc") and sysRoot
// (normally "/sys", used for cgroup limits). An FS reuses one read buffer and
// so must not be used from several goroutines at once.
func NewFS(procRoot, sysRoot string) (*FS, error) {
	lib, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w (is /proc mounted?)", procRoot, err)
	}
	return &FS{proc: procRoot, sys: sysRoot, lib: lib, buf: make([]byte, 8192)}, nil
}

// Default returns an FS on the running system's /proc and /sys.
func Default() (*FS, error) { return NewFS("/proc", "/sys") }

// Root returns the proc root the FS reads.
func (p *FS) Root() string { return p.proc }

// read returns the contents of a /proc file in the shared buffer, valid until
// the next read. Files in /proc report size 0, so the buffer grows until a
// read comes back short instead of trusting stat.
func (p *FS) read(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(p.buf) {
			p.buf = append(p.buf, make([]byte, len(p.buf))...)
		}
		m, err := syscall.Read(fd, p.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return p.buf[:n], nil
		}
		n += m
	}
}

// readPID reads /proc/PID/name, turning "no such file" and ESRCH (the process
// exited while being read) into ErrGone.
func (p *FS) readPID(pid int, name string) ([]byte, error) {
	b, err := p.read(filepath.Join(p.proc, strconv.Itoa(pid), name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("pid %d: %w", pid, ErrGone)
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w; reading another user's process memory needs root or the same user (run phptune as root or as the stack's user)", err)
		}
		return nil, err
	}
	return b, nil
}

// PIDs lists the processes in the proc root, unsorted.
func (p *FS) PIDs() ([]int, error) {
	d, err := os.Open(p.proc)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", p.proc, err)
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
