// Package safewrite replaces a file atomically in a directory that only
// its caller can write: a temporary file beside it, created with
// O_EXCL|O_NOFOLLOW (a planted file or link there is refused, never
// followed), given its owner and mode, written, fsynced, renamed over the
// file, and the directory fsynced, so a crash leaves the old file or the
// new one, never half of either.
package safewrite

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/phptune/phptune/internal/base/saferead"
)

// Write replaces path with data, mode and, when running as root, owner
// uid:gid (-1 keeps the writer's).
func Write(path string, data []byte, mode os.FileMode, uid, gid int) error {
	tmp := path + ".phptune-tmp"
	_ = os.Remove(tmp)
	fd, err := syscall.Open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if (uid >= 0 || gid >= 0) && os.Geteuid() == 0 {
		if err := f.Chown(uid, gid); err != nil {
			return fmt.Errorf("writing %s: %v", path, err)
		}
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	ok = true
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %v", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, so that a rename or removal in it survives
// a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// OpenRegular opens path for reading without following a link at its
// last component (O_NOFOLLOW) and only when it is a regular file (a FIFO
// or device opened by mistake is not read: O_NONBLOCK keeps the open
// from waiting on one). The caller closes the file.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := saferead.Open(path, saferead.AnyOwner)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}
