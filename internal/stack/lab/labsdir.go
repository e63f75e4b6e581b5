package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// labsDir is the labs directory held open: phptune's home is checked
// (for root, every parent is root's and not writable by others), opened
// without following a link, and labs/ opened below that descriptor, never
// by its path again. Whatever happens to the names Home() or Root() after
// that — a parent renamed, labs/ swapped for a link — the removal of a
// lab acts on the directory that was checked, and a lab's name is
// resolved in it one component at a time (os.Root), so removing a lab
// whose directory became a link removes the link alone.
type labsDir struct {
	root *os.Root
	path string // Root(), for messages
}

// testHookLabsOpened runs after the labs directory is opened and checked,
// before anything is removed through it (tests swap names there).
var testHookLabsOpened func(name string)

// openLabs opens the labs directory. A missing home or labs directory is
// an error that wraps os.ErrNotExist.
func openLabs() (*labsDir, error) {
	home := Home()
	if os.Geteuid() == 0 {
		if err := checkHomeParents(home); err != nil {
			return nil, err
		}
	}
	hfd, err := openCheckedDir(unix.AT_FDCWD, home, home)
	if err != nil {
		return nil, err
	}
	defer unix.Close(hfd)
	lfd, err := openCheckedDir(hfd, "labs", filepath.Join(home, "labs"))
	if err != nil {
		return nil, err
	}
	defer unix.Close(lfd)
	// os.Root cannot be made from a descriptor: open it by the same names
	// and keep it only when it is the very directory checked above.
	hr, err := os.OpenRoot(home)
	if err != nil {
		return nil, err
	}
	defer hr.Close()
	if err := sameDir(hr, ".", hfd, home); err != nil {
		return nil, err
	}
	lr, err := hr.OpenRoot("labs")
	if err != nil {
		return nil, err
	}
	if err := sameDir(lr, ".", lfd, filepath.Join(home, "labs")); err != nil {
		lr.Close()
		return nil, err
	}
	return &labsDir{root: lr, path: filepath.Join(home, "labs")}, nil
}

// openCheckedDir opens name below dirfd as a directory, not following a
// link at its last component, and checks that it belongs to the user
// running phptune and that no group or other account can write it.
func openCheckedDir(dirfd int, name, shown string) (int, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return -1, fmt.Errorf("%s: %w", shown, os.ErrNotExist)
	}
	if err != nil {
		return -1, fmt.Errorf("phptune's state directory %s: %v (it must be a real directory, not a link); set PHPTUNE_HOME to a directory of your own", shown, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	switch {
	case int(st.Uid) != os.Geteuid():
		unix.Close(fd)
		return -1, fmt.Errorf("phptune's state directory %s belongs to uid %d, not to the user running phptune (uid %d): that account could swap what is in it; make it yours (chown %d %s) or set PHPTUNE_HOME to a directory of your own", shown, st.Uid, os.Geteuid(), os.Geteuid(), shown)
	case st.Mode&0o022 != 0:
		unix.Close(fd)
		return -1, fmt.Errorf("phptune's state directory %s (mode %04o) is writable by others: they could swap a lab's directory for a link; chmod go-w %s", shown, st.Mode&0o7777, shown)
	}
	return fd, nil
}

// sameDir checks that name in r is the directory open as fd.
func sameDir(r *os.Root, name string, fd int, shown string) error {
	fi, err := r.Stat(name)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || uint64(sys.Dev) != uint64(st.Dev) || sys.Ino != st.Ino {
		return fmt.Errorf("phptune's state directory %s changed while it was being opened; nothing was removed, try again", shown)
	}
	return nil
}

// Close releases the held directory.
func (d *labsDir) Close() error { return d.root.Close() }

// dir is the lab called name's directory as a path, for messages, the
// lock and the processes that name it; nothing is removed by it.
func (d *labsDir) dir(name string) string { return filepath.Join(d.path, name) }

// check makes sure labs/name is a real directory (not a link).
func (d *labsDir) check(name string) error {
	st, err := d.root.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w %q (looked in %s); list labs with: phptune lab status", ErrNoLab, name, d.path)
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory (mode %v): phptune does not touch it; remove it by hand if it is yours", d.dir(name), st.Mode())
	}
	return nil
}

// remove removes labs/name through the held directory: a link there is
// unlinked, never followed, and so is any link below it.
func (d *labsDir) remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if testHookLabsOpened != nil {
		testHookLabsOpened(name)
	}
	return d.root.RemoveAll(name)
}
