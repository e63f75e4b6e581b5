// Package saferead reads small files that another account may have
// planted or swapped: never through a link as the last component, only a
// regular file (a FIFO or a device would block or never end), never more
// than a bound, and, when asked, only a file of the caller's own account
// that nobody else can write. It is the one reader of its kind: state and
// secrets of a lab, build records, server configurations, /proc and
// /proc/sys files.
package saferead

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Rule says whose file is accepted.
type Rule int

const (
	// AnyOwner accepts a regular file whoever owns it (a server's
	// configuration, a /proc file).
	AnyOwner Rule = iota
	// Mine accepts a file owned by the effective uid only.
	Mine
	// MineAlone accepts a file owned by the effective uid that no group
	// or other account can write.
	MineAlone
)

// ErrTooLarge is Whole's answer to a file over its bound.
var ErrTooLarge = errors.New("larger than the bound")

// Read returns at most limit bytes of path, the rest cut.
func Read(path string, limit int64, rule Rule) ([]byte, error) {
	f, err := Open(path, rule)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// Whole returns path whole, or an error wrapping ErrTooLarge when it is
// over limit bytes (a configuration read in part would be misread).
func Whole(path string, limit int64, rule Rule) ([]byte, error) {
	f, err := Open(path, rule)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w of %d bytes", path, ErrTooLarge, limit)
	}
	return b, nil
}

// Open opens path for reading under rule's checks, made on the open file
// (not on the name, which another account could swap between a check and
// the open).
func Open(path string, rule Rule) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: refused (name the file it points to): %w", path, err)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if err := check(f, path, rule); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func check(f *os.File, path string, rule Rule) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%s is not a regular file: refused", path)
	}
	if rule == AnyOwner {
		return nil
	}
	if me := os.Geteuid(); int(st.Uid) != me {
		return fmt.Errorf("%s is owned by uid %d, not by uid %d that reads it: not trusted", path, st.Uid, me)
	}
	if rule == MineAlone && st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o): not trusted", path, st.Mode&0o7777)
	}
	return nil
}
