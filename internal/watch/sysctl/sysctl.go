// Package sysctl reads the kernel's limits on queued and open connections
// — net.core.somaxconn, net.ipv4.tcp_max_syn_backlog (and tcp_syncookies,
// which decides whether it matters), the ephemeral port range,
// tcp_tw_reuse, fs.file-max, fs.nr_open — and processes' open-file limits
// (RLIMIT_NOFILE) from a /proc tree. It works out the backlog listen(2)
// really gives, what a run needs, the /etc/sysctl.d fragment that provides
// it, and — only when asked (--apply-sysctl) — raises settings for the
// length of a run and restores them afterwards, after a crash included.
//
// Why it matters: listen(2) silently caps its backlog at
// somaxconn, so `listen.backlog = 4096` on a host whose somaxconn is 128
// queues 128 connections and the rest are refused with EAGAIN (nginx's
// 502s); the server is never told.
//
// The settings are host-wide (per network namespace, and labs share the
// host's), so phptune reads them and never changes them by default.
package sysctl

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/base/saferead"
)

// The settings phptune reads.
const (
	// Somaxconn caps every listen(2) backlog.
	Somaxconn = "net.core.somaxconn"
	// TCPMaxSynBacklog bounds half-open TCP connections per listener when
	// SYN cookies are off (with them on, a full SYN queue sends cookies).
	TCPMaxSynBacklog = "net.ipv4.tcp_max_syn_backlog"
	TCPSyncookies    = "net.ipv4.tcp_syncookies"
	// PortRange is the ephemeral ports a connecting socket gets one of:
	// the generator's connections, and the web server's to php-fpm over
	// TCP, each hold one.
	PortRange = "net.ipv4.ip_local_port_range"
	// TCPTWReuse lets a new outgoing connection reuse a port in TIME_WAIT
	// (1 everywhere, 2 on loopback only). Read, never changed: it alters
	// TCP's behaviour, not a limit.
	TCPTWReuse = "net.ipv4.tcp_tw_reuse"
	// FileMax bounds open files on the whole host.
	FileMax = "fs.file-max"
	// NrOpen bounds the RLIMIT_NOFILE a process may be given.
	NrOpen = "fs.nr_open"
)

// Names are the settings read, in the order reports list them.
var Names = []string{Somaxconn, TCPMaxSynBacklog, TCPSyncookies, PortRange, TCPTWReuse, FileMax, NrOpen}

// ErrParse is wrapped by errors about kernel output that could not be
// understood.
var ErrParse = errors.New("malformed kernel value")

// known reports whether name is one of Names: only those are ever read or
// written (a record file names settings; nothing else may be touched).
func known(name string) bool {
	for _, n := range Names {
		if n == name {
			return true
		}
	}
	return false
}

// FS is a /proc tree: /proc itself, or a fixture directory in tests.
type FS struct{ root string }

// NewFS returns the /proc tree at procRoot ("/proc" when empty).
func NewFS(procRoot string) FS {
	if procRoot == "" {
		procRoot = "/proc"
	}
	return FS{root: procRoot}
}

// Root is the tree's directory.
func (fs FS) Root() string { return fs.root }

// path is the file of a setting: net.core.somaxconn is sys/net/core/somaxconn.
func (fs FS) path(name string) string {
	return filepath.Join(fs.root, "sys", filepath.FromSlash(strings.ReplaceAll(name, ".", "/")))
}

// Value reads one setting, normalised by ParseValue.
func (fs FS) Value(name string) (string, error) {
	if !known(name) {
		return "", fmt.Errorf("sysctl %s: not a setting phptune reads", name)
	}
	data, err := saferead.Read(fs.path(name), 256, saferead.AnyOwner)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", name, err)
	}
	return ParseValue(name, data)
}

// Read reads every setting of Names. One that cannot be read (an older
// kernel without fs.nr_open, a /proc/sys hidden in a container) is left
// out, and its error returned beside the others.
func (fs FS) Read() (Values, []error) {
	v := Values{}
	var errs []error
	for _, n := range Names {
		s, err := fs.Value(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v[n] = s
	}
	return v, errs
}

// write sets one setting. The value is checked first: only a well-formed
// value of a known setting is ever written.
func (fs FS) write(name, value string) error {
	if !known(name) {
		return fmt.Errorf("sysctl %s: not a setting phptune changes", name)
	}
	norm, err := ParseValue(name, []byte(value))
	if err != nil {
		return err
	}
	f, err := os.OpenFile(fs.path(name), os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("setting %s: %w", name, err)
	}
	if _, err := f.WriteString(norm + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("setting %s = %s: %w", name, norm, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("setting %s = %s: %w", name, norm, err)
	}
	return nil
}

// ParseValue checks a setting's value as the kernel prints it and returns
// it normalised: fields separated by one space ("32768\t60999\n" is
// "32768 60999"). The port range is two ports, low first; every other
// setting one integer.
func ParseValue(name string, data []byte) (string, error) {
	f := strings.Fields(string(data))
	if name == PortRange {
		if len(f) != 2 {
			return "", fmt.Errorf("%w: %s %q: want two ports", ErrParse, name, data)
		}
		lo, err1 := strconv.ParseInt(f[0], 10, 32)
		hi, err2 := strconv.ParseInt(f[1], 10, 32)
		if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
			return "", fmt.Errorf("%w: %s %q: want two ports, low first", ErrParse, name, data)
		}
		return strconv.FormatInt(lo, 10) + " " + strconv.FormatInt(hi, 10), nil
	}
	if len(f) != 1 {
		return "", fmt.Errorf("%w: %s %q: want one integer", ErrParse, name, data)
	}
	if _, err := parseInt(f[0]); err != nil {
		return "", fmt.Errorf("%w: %s %q: %v", ErrParse, name, data, err)
	}
	return f[0], nil
}

// parseInt reads a non-negative integer; fs.file-max may print the
// largest unsigned long, which is read as the largest int64.
func parseInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		if n < 0 {
			return 0, errors.New("negative")
		}
		return n, nil
	}
	if u, uerr := strconv.ParseUint(s, 10, 64); uerr == nil && u > math.MaxInt64 {
		return math.MaxInt64, nil
	}
	return 0, err
}

// Values maps settings to their normalised values (ParseValue).
type Values map[string]string

// Int is a single-integer setting's value; ok is false when it was not
// read.
func (v Values) Int(name string) (int64, bool) {
	s, ok := v[name]
	if !ok || name == PortRange {
		return 0, false
	}
	n, err := parseInt(s)
	return n, err == nil
}

// Ports is the ephemeral port range.
func (v Values) Ports() (lo, hi int64, ok bool) {
	s, have := v[PortRange]
	if !have {
		return 0, 0, false
	}
	a, b, _ := strings.Cut(s, " ")
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}
