package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/phptune/phptune/internal/base/safewrite"
)

// Files a root phptune touches fall in two kinds, and this file holds the
// only ways the lab package touches either:
//
//   - Root-owned files (configs, state, secrets, snapshot, marker) live in
//     directories the lab account cannot write, so nobody can swap them for a
//     link; they are still written with O_NOFOLLOW and renamed into place.
//   - Lab-writable files (the servers' logs) are read with openLabFile only:
//     O_NOFOLLOW on the last component under a directory opened with
//     O_NOFOLLOW, a regular file owned by the lab account, with at most one
//     link, read up to a limit. Root never writes, chowns or runs them.

// writeOwned writes data to path atomically (package safewrite:
// temporary file created with O_EXCL|O_NOFOLLOW, fsync, rename) with the
// given mode and group (-1 keeps root's group).
func writeOwned(path string, data []byte, mode os.FileMode, gid int) error {
	return safewrite.Write(path, data, mode, -1, gid)
}

// mkdirOwned creates dir, or takes the real directory (not a link) already
// there, and gives it uid:gid (-1 keeps either) and mode. Call it only in a
// directory the lab cannot write: it does not check who made an existing
// directory.
func mkdirOwned(dir string, uid, gid int, mode os.FileMode) error {
	if err := os.Mkdir(dir, mode.Perm()); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %v (want a real directory)", dir, err)
	}
	defer syscall.Close(fd)
	if os.Geteuid() == 0 && (uid >= 0 || gid >= 0) {
		if err := syscall.Fchown(fd, uid, gid); err != nil {
			return err
		}
	}
	return syscall.Fchmod(fd, uint32(mode.Perm()))
}

// errNotLabFile marks a lab-writable file that root refuses to read.
var errNotLabFile = errors.New("not a regular file of the lab account")

// openLabFile opens name inside dir, both possibly writable by the lab
// account, for reading, without following a link at either level, and
// checks that it is a regular file owned by uid (when phptune runs as root)
// with a single link, so a hard link to a root file is refused too.
func openLabFile(dir, name string, uid int) (*os.File, error) {
	dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(dfd)
	fd, err := openat(dfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: %w (a symlink)", filepath.Join(dir, name), errNotLabFile)
		}
		return nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, name))
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink > 1 || (os.Geteuid() == 0 && int(st.Uid) != uid) {
		f.Close()
		return nil, fmt.Errorf("%s: %w (mode %o, owner uid %d, %d links)", f.Name(), errNotLabFile, st.Mode, st.Uid, st.Nlink)
	}
	return f, nil
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// readTail returns at most limit bytes from the end of f.
func readTail(f *os.File, limit int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := st.Size() - limit
	if off < 0 {
		off = 0
	}
	return io.ReadAll(io.NewSectionReader(f, off, limit))
}
