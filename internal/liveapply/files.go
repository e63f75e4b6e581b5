package liveapply

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// checkTrusted refuses a path whose directories someone other than this
// process's user (root, on a live host) could change: the file's own
// directory must belong to this user and be writable by it alone; every
// directory above must belong to this user or root and be writable by no
// one else, or be sticky (as /tmp is: others cannot rename what is ours).
// Links in the path are resolved first and the real directories checked.
// So nobody else can swap a file or directory for a link between this
// check and the write.
func checkTrusted(path string) error {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Dir(path), err)
	}
	me := os.Geteuid()
	for d, first := dir, true; ; d, first = filepath.Dir(d), false {
		st, err := os.Lstat(d)
		if err != nil {
			return err
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok || !st.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
		owner := int(sys.Uid)
		others := st.Mode().Perm()&0o022 != 0
		switch {
		case first && (owner != me || others):
			return fmt.Errorf("%s belongs to uid %d with mode %v: phptune writes only into a directory that its own user (uid %d) alone can write; fix its owner and mode (chown root: %s; chmod go-w %s)", d, owner, st.Mode().Perm(), me, d, d)
		case !first && owner != me && owner != 0:
			return fmt.Errorf("%s (above %s) belongs to uid %d: whoever owns it could replace what is below it; phptune writes only below directories of root's", d, dir, owner)
		case !first && others && st.Mode()&os.ModeSticky == 0:
			return fmt.Errorf("%s (above %s) is writable by others (mode %v): they could replace what is below it; chmod go-w %s", d, dir, st.Mode().Perm(), d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// writeFileAtomic writes data to path: a temporary file beside it
// (O_EXCL|O_NOFOLLOW, so a planted file or link is refused, not
// followed), the mode and owner set, fsync, rename over path, fsync of the
// directory. uid/gid -1 keep this process's.
func writeFileAtomic(path string, data []byte, mode os.FileMode, uid, gid int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
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
	return syncDir(filepath.Dir(path))
}

// removeFile removes path (a missing file is not an error) and syncs its
// directory.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readRegular reads a regular file without following a link at its last
// component, up to limit bytes (more is an error).
func readRegular(path string, limit int64) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// sameContent reports whether path holds exactly data.
func sameContent(path string, data []byte) bool {
	b, err := readRegular(path, int64(len(data))+1)
	return err == nil && bytes.Equal(b, data)
}
