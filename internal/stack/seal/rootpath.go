package seal

import (
	"fmt"
	"github.com/phptune/phptune/internal/base/saferead"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// rootOwnedParents checks that every directory above p is a real directory
// (not a symbolic link) owned by root that no one else can write, or can
// write only under the sticky bit (as /var/tmp): then no other account can
// swap p, or a directory on its way, for a link while root mounts it.
func rootOwnedParents(p string) error {
	u := saferead.RootOnlyParents(p)
	switch {
	case u == nil:
		return nil
	case u.Err != nil:
		return fmt.Errorf("checking %s (above %s): %v", u.Dir, p, u.Err)
	case !u.Mode.IsDir():
		return fmt.Errorf("%s (above %s) is not a directory but %v; the seal follows no link root did not make: name the real path", u.Dir, p, u.Mode.Type())
	case u.UID != 0:
		return fmt.Errorf("%s (above %s) is owned by uid %d, not root: its owner could swap what root mounts; move the directory under one only root controls", u.Dir, p, u.UID)
	default:
		return fmt.Errorf("%s (above %s) is writable by others (mode %v): anyone could swap what root mounts; chmod go-w it", u.Dir, p, u.Mode.Perm())
	}
}

// ensureRootDir makes dir root's with mode, or accepts an existing one
// that is a real directory, root's and writable only by root.
func ensureRootDir(dir string, mode os.FileMode) error {
	if err := os.Mkdir(dir, mode); err == nil {
		return os.Chmod(dir, mode)
	} else if !os.IsExist(err) {
		return fmt.Errorf("creating the seal's directory %s: %v", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the seal's directory %s: %v", dir, err)
	}
	if sys := st.Sys().(*syscall.Stat_t); !st.IsDir() || sys.Uid != 0 || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("the seal's directory %s exists but is not a directory owned and writable only by root (mode %v); remove it or name another", dir, st.Mode())
	}
	return nil
}

// writeRootFile writes a new root-owned file readable by all, refusing to
// follow or reuse anything already at path.
func writeRootFile(path, content string) error {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %v", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %v", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %v", path, err)
	}
	return f.Close()
}
