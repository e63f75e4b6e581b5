// Package outdir creates the directories and files phptune writes for its
// user (a tune's, a profile's, a servers run's, a report, an Ansible role)
// so that no other account can steer where they go: a new directory is
// made with mkdir, an existing one is taken only when it is empty, a real
// directory (not a link), owned by a trusted account and not writable by
// group or others; it is then held open, and every file goes in through
// its descriptor: a temporary file created with O_EXCL|O_NOFOLLOW and
// renamed within the directory, so a link planted under a file's name is
// replaced, never followed.
//
// The trusted accounts are the effective user, root and, when phptune
// runs as root under sudo, the account in SUDO_UID (it could run anything
// as root already).
package outdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// RefusedError says why a path was refused and how to do without it.
type RefusedError struct {
	Path    string // the path as given
	Problem string // what is wrong with it
	Fix     string // what to do instead
}

func (e *RefusedError) Error() string {
	return e.Path + " " + e.Problem + ": " + e.Fix
}

// Dir is an output directory phptune made or verified, held open.
type Dir struct {
	f      *os.File // the directory itself (O_DIRECTORY|O_NOFOLLOW)
	parent *os.File // its parent, for Discard; nil for a Sub
	name   string   // its name in parent
	path   string   // as given
}

// Path is the directory's path as given to Create, Reopen or Sub.
func (d *Dir) Path() string { return d.path }

// Close releases the directory's descriptors.
func (d *Dir) Close() error {
	if d.parent != nil {
		d.parent.Close()
	}
	return d.f.Close()
}

const dirMode = 0o755

// fixCreate is the fix for a refused output directory.
const fixCreate = "give -o a new directory (phptune creates it), or run phptune in a directory only you can write"

// Check refuses, before a long run, an output directory Create would
// refuse: an existing path that is not an empty directory of a trusted
// account only it can write, or a missing one whose parent cannot be
// written. It changes nothing.
func Check(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		parent := filepath.Dir(filepath.Clean(path))
		for {
			pst, err := os.Stat(parent)
			if errors.Is(err, os.ErrNotExist) && filepath.Dir(parent) != parent {
				parent = filepath.Dir(parent)
				continue
			}
			if err != nil {
				return &RefusedError{Path: path, Problem: "cannot be created: " + err.Error(), Fix: fixCreate}
			}
			if !pst.IsDir() {
				return &RefusedError{Path: path, Problem: "cannot be created: " + parent + " is not a directory", Fix: fixCreate}
			}
			if err := unix.Access(parent, unix.W_OK|unix.X_OK); err != nil {
				return &RefusedError{Path: path, Problem: "cannot be created: " + parent + " is not writable", Fix: fixCreate}
			}
			return nil
		}
	}
	if err != nil {
		return &RefusedError{Path: path, Problem: "cannot be used: " + err.Error(), Fix: fixCreate}
	}
	if err := checkDirInfo(path, st); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return &RefusedError{Path: path, Problem: "cannot be read: " + err.Error(), Fix: fixCreate}
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return &RefusedError{Path: path, Problem: "exists and is not empty", Fix: "give -o a new or empty directory; nothing in another run's directory is overwritten"}
	}
	return nil
}

// checkDirInfo refuses a path that is not a directory of a trusted
// account that only it can write (st from Lstat or Fstat).
func checkDirInfo(path string, st os.FileInfo) error {
	if st.Mode()&os.ModeSymlink != 0 {
		return &RefusedError{Path: path, Problem: "is a symbolic link", Fix: fixCreate}
	}
	if !st.IsDir() {
		return &RefusedError{Path: path, Problem: "exists and is not a directory", Fix: fixCreate}
	}
	uid := ownerOf(st)
	if !trusted(uid) {
		return &RefusedError{Path: path, Problem: "exists and is owned by " + account(uid) + ", not you", Fix: fixCreate}
	}
	if st.Mode().Perm()&0o022 != 0 {
		return &RefusedError{Path: path, Problem: fmt.Sprintf("exists and is writable by group or others (mode %04o)", st.Mode().Perm()),
			Fix: "chmod go-w " + path + ", or " + fixCreate}
	}
	return nil
}

// Create makes path a new directory (mode 0755; missing parents too) or
// takes an existing empty one that Check accepts, and returns it open.
// The last component is never followed: it is opened with O_NOFOLLOW and
// checked through the open descriptor, so a directory or link swapped in
// after mkdir is refused.
func Create(path string) (*Dir, error) {
	return open(path, true)
}

// Reopen opens an existing output directory to add to it (a resumed
// tune's): it must be a directory of a trusted account only it can write;
// it may hold files, which WriteFile replaces.
func Reopen(path string) (*Dir, error) {
	return open(path, false)
}

func open(path string, create bool) (*Dir, error) {
	clean := filepath.Clean(path)
	parentPath, name := filepath.Dir(clean), filepath.Base(clean)
	if name == "." || name == ".." || name == "/" {
		return nil, &RefusedError{Path: path, Problem: "names no new directory", Fix: fixCreate}
	}
	if create {
		if _, err := os.Stat(parentPath); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(parentPath, dirMode); err != nil {
				return nil, &RefusedError{Path: path, Problem: "cannot be created: " + err.Error(), Fix: fixCreate}
			}
		}
	}
	pfd, err := unix.Open(parentPath, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &RefusedError{Path: path, Problem: "cannot be opened: " + parentPath + ": " + err.Error(), Fix: fixCreate}
	}
	parent := os.NewFile(uintptr(pfd), parentPath)
	made := false
	if create {
		switch err := unix.Mkdirat(pfd, name, dirMode); {
		case err == nil:
			made = true
		case errors.Is(err, unix.EEXIST):
		default:
			parent.Close()
			return nil, &RefusedError{Path: path, Problem: "cannot be created: " + err.Error(), Fix: fixCreate}
		}
	}
	f, err := openDirAt(pfd, name, path)
	if err != nil {
		parent.Close()
		return nil, err
	}
	d := &Dir{f: f, parent: parent, name: name, path: path}
	if err := checkOpen(d, create && !made); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// openDirAt opens name in the directory dirfd without following a link.
func openDirAt(dirfd int, name, path string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, &RefusedError{Path: path, Problem: "is a symbolic link", Fix: fixCreate}
	case errors.Is(err, unix.ENOTDIR):
		// Linux says ENOTDIR for a link opened with O_DIRECTORY|O_NOFOLLOW.
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return nil, &RefusedError{Path: path, Problem: "is a symbolic link", Fix: fixCreate}
		}
		return nil, &RefusedError{Path: path, Problem: "exists and is not a directory", Fix: fixCreate}
	case err != nil:
		return nil, &RefusedError{Path: path, Problem: "cannot be opened: " + err.Error(), Fix: fixCreate}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// checkOpen checks an opened directory through its descriptor: owner and
// mode, and, when mustBeEmpty, that it holds nothing.
func checkOpen(d *Dir, mustBeEmpty bool) error {
	st, err := d.f.Stat()
	if err != nil {
		return err
	}
	if err := checkDirInfo(d.path, st); err != nil {
		return err
	}
	if mustBeEmpty {
		names, err := d.f.Readdirnames(1)
		if err != nil && err != io.EOF {
			return &RefusedError{Path: d.path, Problem: "cannot be read: " + err.Error(), Fix: fixCreate}
		}
		if len(names) > 0 {
			return &RefusedError{Path: d.path, Problem: "exists and is not empty", Fix: "give -o a new or empty directory; nothing in another run's directory is overwritten"}
		}
	}
	return nil
}

// CloseRemovingIfEmpty closes d and removes the directory when it is
// still empty (a run that failed before writing anything); a directory
// holding anything is left.
func (d *Dir) CloseRemovingIfEmpty() {
	if d.parent != nil {
		_ = unix.Unlinkat(int(d.parent.Fd()), d.name, unix.AT_REMOVEDIR)
	}
	d.Close()
}

// Sub makes (or, in a reopened directory, opens) the subdirectory name
// of d, with the same checks as Create, and returns it open.
func (d *Dir) Sub(name string) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := filepath.Join(d.path, name)
	if err := unix.Mkdirat(int(d.f.Fd()), name, dirMode); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	f, err := openDirAt(int(d.f.Fd()), name, path)
	if err != nil {
		return nil, err
	}
	s := &Dir{f: f, name: name, path: path}
	if err := checkOpen(s, false); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// checkName refuses a name that is not one component.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%q is not a file name", name)
	}
	return nil
}

// WriteFile writes data (mode 0644) to rel, a slash-separated path under
// d; the directories on the way are made or opened without following a
// link. An existing file of that name is replaced atomically.
func (d *Dir) WriteFile(rel string, data []byte) error {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if err := checkName(p); err != nil {
			return fmt.Errorf("writing %s in %s: %w", rel, d.path, err)
		}
	}
	dir := d
	for _, p := range parts[:len(parts)-1] {
		s, err := dir.Sub(p)
		if dir != d {
			dir.Close()
		}
		if err != nil {
			return err
		}
		dir = s
	}
	if dir != d {
		defer dir.Close()
	}
	if err := writeAt(int(dir.f.Fd()), parts[len(parts)-1], data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(d.path, filepath.FromSlash(rel)), err)
	}
	return nil
}

// writeAt writes data to name in dirfd: a temporary file created there
// with O_EXCL|O_NOFOLLOW, written, fsynced and renamed over name.
func writeAt(dirfd int, name string, data []byte, mode uint32) error {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := "." + name + ".phptune-" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	if err := f.Chmod(os.FileMode(mode)); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		ok = true
		return err
	}
	ok = true
	return nil
}

// WriteFile writes data (mode 0644) to path, a single output file (a
// report): path's directory is opened, and a temporary file created in it
// with O_EXCL|O_NOFOLLOW is renamed over the name, so a link planted
// there is replaced, never followed. An existing entry of that name is
// replaced only when it is a regular file of a trusted account.
func WriteFile(path string, data []byte) error {
	clean := filepath.Clean(path)
	parentPath, name := filepath.Dir(clean), filepath.Base(clean)
	if checkName(name) != nil {
		return &RefusedError{Path: path, Problem: "names no file", Fix: "give -o a file name"}
	}
	pfd, err := unix.Open(parentPath, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &RefusedError{Path: path, Problem: "cannot be written: " + parentPath + ": " + err.Error(), Fix: "give -o a file in an existing directory you can write"}
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	switch err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return &RefusedError{Path: path, Problem: "cannot be written: " + err.Error(), Fix: "give -o another file"}
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return &RefusedError{Path: path, Problem: "exists and is a symbolic link", Fix: "give -o another file, or remove the link"}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return &RefusedError{Path: path, Problem: "exists and is not a regular file", Fix: "give -o another file"}
	case !trusted(int(st.Uid)):
		return &RefusedError{Path: path, Problem: "exists and is owned by " + account(int(st.Uid)) + ", not you", Fix: "give -o another file, or remove it"}
	}
	if err := writeAt(pfd, name, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ReopenOrCreate opens a resumed run's output directory again (Reopen),
// or creates it (Create) when it is gone.
func ReopenOrCreate(path string) (*Dir, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return Create(path)
	}
	return Reopen(path)
}

// CheckWorkingDir says whether the working directory can take a new
// output directory: nil when this process may write and search it.
func CheckWorkingDir() error {
	return unix.Access(".", unix.W_OK|unix.X_OK)
}

// ParentIsDir says whether the directory a file would be written into
// exists (and is a directory, links followed).
func ParentIsDir(path string) bool {
	st, err := os.Stat(filepath.Dir(path))
	return err == nil && st.IsDir()
}
