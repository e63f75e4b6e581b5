package sysctl

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/model/results"
)

// A process's RLIMIT_NOFILE bounds its open files, sockets included: the
// generator's connections, an nginx worker's client and upstream
// connections. /proc/PID/limits shows any process's limits (prlimit(2)
// would need privileges over it); the lab's servers inherit phptune's own
// limits when they start (internal/stack/lab runs them without changing any).

// ParseNoFile reads the "Max open files" line of /proc/PID/limits:
//
//	Max open files            1024                 524288               files
//
// "unlimited" is -1.
func ParseNoFile(data []byte) (soft, hard int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Max open files")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			break
		}
		if soft, err = limit(f[0]); err == nil {
			hard, err = limit(f[1])
		}
		if err != nil || (hard >= 0 && (soft < 0 || soft > hard)) {
			return 0, 0, fmt.Errorf("%w: Max open files %q", ErrParse, rest)
		}
		return soft, hard, nil
	}
	return 0, 0, fmt.Errorf("%w: no \"Max open files\" line", ErrParse)
}

func limit(s string) (int64, error) {
	if s == "unlimited" {
		return -1, nil
	}
	return parseInt(s)
}

// NoFile reads a process's RLIMIT_NOFILE; pid 0 is the reading process
// (/proc/self).
func (fs FS) NoFile(pid int) (soft, hard int64, err error) {
	p := "self"
	if pid != 0 {
		p = strconv.Itoa(pid)
	}
	data, err := saferead.Read(filepath.Join(fs.root, p, "limits"), 8192, saferead.AnyOwner)
	if err != nil {
		return 0, 0, err
	}
	return ParseNoFile(data)
}

// StartTime is a process's start time in clock ticks since boot (field 22
// of /proc/PID/stat): with the pid it names one process, never a later
// one that reused the pid.
func (fs FS) StartTime(pid int) (uint64, error) {
	data, err := saferead.Read(filepath.Join(fs.root, strconv.Itoa(pid), "stat"), 4096, saferead.AnyOwner)
	if err != nil {
		return 0, err
	}
	return ParseStartTime(data)
}

// ParseStartTime reads field 22 of /proc/PID/stat. The command name
// (field 2) may hold spaces and parentheses, so fields are counted from
// its last ')'.
func ParseStartTime(data []byte) (uint64, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("%w: stat without a command name", ErrParse)
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("%w: stat with %d fields after the command", ErrParse, len(f))
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: stat start time %q", ErrParse, f[19])
	}
	return n, nil
}

// Process names a process whose open-file limit is recorded.
type Process struct {
	Name string // "nginx", "php-fpm"
	PID  int
}

// Collect reads every setting and the open-file limits of phptune itself
// and of procs. What cannot be read is left out and said in Errors.
func (fs FS) Collect(procs []Process) *results.KernelLimits {
	v, errs := fs.Read()
	k := &results.KernelLimits{Sysctl: v}
	for _, err := range errs {
		k.Errors = append(k.Errors, err.Error())
	}
	all := append([]Process{{Name: "phptune"}}, procs...)
	for _, p := range all {
		soft, hard, err := fs.NoFile(p.PID)
		if err != nil {
			k.Errors = append(k.Errors, fmt.Sprintf("open-file limit of %s: %v", p.Name, err))
			continue
		}
		k.NoFile = append(k.NoFile, results.NoFileLimit{Process: p.Name, PID: p.PID, Soft: soft, Hard: hard})
	}
	return k
}
