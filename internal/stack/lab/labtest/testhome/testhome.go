// Package testhome marks the phptune homes that tests make with the test
// process that made them, so that a later run can tell a home whose test
// was killed (its labs' servers still running, nobody left to take them
// down) from one whose test is still running.
package testhome

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/watch/proc"
)

// Prefix begins the name of every home a test makes under its parent
// directory (labtest.TempParent).
const Prefix = "phptune-test-"

// ownerFile holds "PID STARTTIME PIDNS" of the test process.
const ownerFile = ".test-owner"

// UnstampedAge is how old a home without a stamp (made before stamps, or
// by a test killed between mkdir and stamp) must be to count as
// abandoned: longer than any test binary may run (make test's -timeout).
const UnstampedAge = 3 * time.Hour

// Stamp records the calling process as dir's owner.
func Stamp(dir string) error { return StampFor(dir, os.Getpid()) }

// StampFor records process pid as dir's owner.
func StampFor(dir string, pid int) error {
	st, ns, err := identity(pid)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ownerFile), fmt.Appendf(nil, "%d %d %s\n", pid, st, ns), 0o600)
}

// Abandoned tells whether the process that made dir is gone, with why.
// A home whose stamp names a live process (the same PID and start time)
// or another PID namespace (its PIDs mean nothing here) is not.
func Abandoned(dir string, now time.Time) (bool, string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if errors.Is(err, os.ErrNotExist) {
		fi, err := os.Stat(dir)
		if err != nil {
			return false, "", err
		}
		if age := now.Sub(fi.ModTime()); age > UnstampedAge {
			return true, fmt.Sprintf("no owner stamp and untouched for %s", age.Round(time.Minute)), nil
		}
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return false, "", fmt.Errorf("%s: owner stamp %q is not \"PID STARTTIME PIDNS\"", dir, bytes.TrimSpace(b))
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false, "", fmt.Errorf("%s: owner stamp has PID %q", dir, f[0])
	}
	_, myNS, err := identity(os.Getpid())
	if err != nil {
		return false, "", err
	}
	if f[2] != myNS {
		return false, "", nil
	}
	st, _, err := identity(pid)
	if err != nil {
		return true, fmt.Sprintf("test process %d is gone", pid), nil
	}
	if strconv.FormatUint(st, 10) != f[1] {
		return true, fmt.Sprintf("test process %d is gone (its PID now names another process)", pid), nil
	}
	return false, "", nil
}

// identity is a process's start time (ticks since boot) and the PID
// namespace it lives in.
func identity(pid int) (uint64, string, error) {
	fs, err := proc.Default()
	if err != nil {
		return 0, "", err
	}
	st, err := fs.ReadStat(pid)
	if err != nil {
		return 0, "", err
	}
	ns, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "pid"))
	if err != nil {
		return 0, "", err
	}
	return st.StartTime, ns, nil
}
