package liveapply

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// heldParent is the directory holding a file phptune writes, reached
// from / one name at a time with openat(O_NOFOLLOW|O_DIRECTORY), every
// directory on the way (and every directory holding a link on the way)
// checked on its open descriptor, as sshd's StrictModes checks a user's
// files: root's or this user's, and writable by no one else (a sticky
// directory such as /tmp excepted: no one else can rename or remove what
// is ours in it, and what they may add there is refused by its owner).
// A link on the way is followed by phptune itself, only when it is root's
// or this user's in a directory already checked. The file is then read,
// written, renamed and removed relative to the held descriptor, never by
// its path again: a directory or link re-pointed after the check cannot
// send the write anywhere else.
type heldParent struct {
	fd   int
	dir  string // the directory as resolved, for messages
	name string // the file's name in it
	path string // the file's path as the plan names it
}

// maxLinks bounds the links followed on one path, as the kernel's ELOOP.
const maxLinks = 40

// testHookHeld runs once a file's directory is held and checked, before
// anything is read or written through it (tests re-point links there).
var testHookHeld func(path string)

// openParent opens and checks the directory of path (clean, absolute).
func openParent(path string) (*heldParent, error) {
	h, err := walkParent(path)
	if err != nil {
		return nil, err
	}
	if testHookHeld != nil {
		testHookHeld(path)
	}
	return h, nil
}

// walkParent is openParent without the test hook.
func walkParent(path string) (*heldParent, error) {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || path == "/" {
		return nil, fmt.Errorf("liveapply: %q is not a clean absolute path", path)
	}
	me := os.Geteuid()
	type level struct {
		fd   int
		path string
	}
	var stack []level
	closeAll := func() {
		for _, l := range stack {
			unix.Close(l.fd)
		}
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	stack = append(stack, level{fd, "/"})
	if err := checkHeldDir(fd, "/", path, me, false); err != nil {
		closeAll()
		return nil, err
	}
	todo := strings.Split(strings.TrimPrefix(filepath.Dir(path), "/"), "/")
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		cur := stack[len(stack)-1]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 1 {
				unix.Close(cur.fd)
				stack = stack[:len(stack)-1]
			}
			continue
		}
		shown := filepath.Join(cur.path, c)
		fd, err := unix.Openat(cur.fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			stack = append(stack, level{fd, shown})
			// The file's own directory gets the stricter check below.
			if len(todo) == 0 {
				continue
			}
			if err := checkHeldDir(fd, shown, path, me, false); err != nil {
				closeAll()
				return nil, err
			}
			continue
		}
		if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
			closeAll()
			return nil, fmt.Errorf("%s (on the path to %s): %v", shown, path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstatat(cur.fd, c, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			closeAll()
			return nil, fmt.Errorf("%s (on the path to %s): %v", shown, path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			closeAll()
			return nil, fmt.Errorf("%s (on the path to %s) is not a directory", shown, path)
		}
		if int(st.Uid) != me && st.Uid != 0 {
			closeAll()
			return nil, fmt.Errorf("the link %s (on the path to %s) belongs to uid %d: phptune follows only links of root's; replace it with root's own (ln -sfn) or write to the real path", shown, path, st.Uid)
		}
		if links++; links > maxLinks {
			closeAll()
			return nil, fmt.Errorf("%s: too many links on the path", path)
		}
		target, err := readlinkat(cur.fd, c)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("%s (on the path to %s): %v", shown, path, err)
		}
		if strings.HasPrefix(target, "/") {
			// Back to / (held at the bottom of the stack).
			for _, l := range stack[1:] {
				unix.Close(l.fd)
			}
			stack = stack[:1]
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	top := stack[len(stack)-1]
	if err := checkHeldDir(top.fd, top.path, path, me, true); err != nil {
		closeAll()
		return nil, err
	}
	for _, l := range stack[:len(stack)-1] {
		unix.Close(l.fd)
	}
	return &heldParent{fd: top.fd, dir: top.path, name: filepath.Base(path), path: path}, nil
}

// checkHeldDir checks one directory on the path to file, by its open
// descriptor. own is the file's own directory: this user's, writable by
// it alone. Every other: this user's or root's, writable by no one else
// unless sticky.
func checkHeldDir(fd int, dir, file string, me int, own bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %v", dir, err)
	}
	owner := int(st.Uid)
	mode := os.FileMode(st.Mode & 0o777)
	others := st.Mode&0o022 != 0
	sticky := st.Mode&unix.S_ISVTX != 0
	switch {
	case own && (owner != me || others):
		return fmt.Errorf("%s (holding %s) belongs to uid %d with mode %v: phptune writes only into a directory that its own user (uid %d) alone can write; fix its owner and mode (chown root: %s; chmod go-w %s)", dir, filepath.Base(file), owner, mode, me, dir, dir)
	case !own && owner != me && owner != 0:
		return fmt.Errorf("%s (on the path to %s) belongs to uid %d: whoever owns it could replace what is below it, a link included; phptune writes only below directories of root's (chown root: %s)", dir, file, owner, dir)
	case !own && others && !sticky:
		return fmt.Errorf("%s (on the path to %s) is writable by others (mode %v): they could replace what is below it, a link included; chmod go-w %s", dir, file, mode, dir)
	}
	return nil
}

func readlinkat(dirfd int, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	if n >= len(buf) {
		return "", errors.New("link target too long")
	}
	return string(buf[:n]), nil
}

// Close releases the held directory.
func (h *heldParent) Close() error { return unix.Close(h.fd) }

// lstat describes the file in the held directory, not following a link.
func (h *heldParent) lstat() (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(h.fd, h.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("%s: %w", h.path, os.ErrNotExist)
		}
		return nil, fmt.Errorf("%s: %v", h.path, err)
	}
	return &st, nil
}

// read reads the file, a regular file (no link followed), up to limit
// bytes (more is an error).
func (h *heldParent) read(limit int64) ([]byte, error) {
	fd, err := unix.Openat(h.fd, h.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("%s: %w", h.path, os.ErrNotExist)
		}
		return nil, fmt.Errorf("reading %s: %v (phptune reads only a regular file, never through a link)", h.path, err)
	}
	f := os.NewFile(uintptr(fd), h.path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", h.path, st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %v", h.path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", h.path, limit)
	}
	return b, nil
}

// same reports whether the file holds exactly data.
func (h *heldParent) same(data []byte) bool {
	b, err := h.read(int64(len(data)) + 1)
	return err == nil && bytes.Equal(b, data)
}

// write replaces the file with data, mode and (as root) owner uid:gid
// (-1 keeps the writer's): a temporary file created in the held directory
// with O_EXCL|O_NOFOLLOW, given its owner and mode, written, fsynced,
// renamed over the file there, and the directory fsynced.
func (h *heldParent) write(data []byte, mode os.FileMode, uid, gid int) error {
	tmp := h.name + ".phptune-tmp"
	_ = unix.Unlinkat(h.fd, tmp, 0)
	fd, err := unix.Openat(h.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return fmt.Errorf("writing %s: %v", h.path, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(h.dir, tmp))
	done := false
	defer func() {
		if !done {
			f.Close()
			unix.Unlinkat(h.fd, tmp, 0)
		}
	}()
	if (uid >= 0 || gid >= 0) && os.Geteuid() == 0 {
		if err := f.Chown(uid, gid); err != nil {
			return fmt.Errorf("writing %s: %v", h.path, err)
		}
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		return fmt.Errorf("writing %s: %v", h.path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %v", h.path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %v", h.path, err)
	}
	if err := f.Close(); err != nil {
		done = true
		unix.Unlinkat(h.fd, tmp, 0)
		return fmt.Errorf("writing %s: %v", h.path, err)
	}
	done = true
	if err := unix.Renameat(h.fd, tmp, h.fd, h.name); err != nil {
		unix.Unlinkat(h.fd, tmp, 0)
		return fmt.Errorf("writing %s: %v", h.path, err)
	}
	return h.sync()
}

// remove removes the file (a missing file is not an error; a link is
// unlinked, never followed) and syncs the directory.
func (h *heldParent) remove() error {
	if err := unix.Unlinkat(h.fd, h.name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s: %v", h.path, err)
	}
	return h.sync()
}

func (h *heldParent) sync() error {
	if err := unix.Fsync(h.fd); err != nil {
		return fmt.Errorf("syncing %s: %v", h.dir, err)
	}
	return nil
}

// modeType is the os.FileMode type bits of a stat mode, for messages.
func modeType(m uint32) os.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFLNK:
		return os.ModeSymlink
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	}
	return 0
}
