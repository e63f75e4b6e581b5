package phpbuild

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openTreeFile opens base/rel for reading, where base is a directory root
// made (a build's work directory) and everything under it may belong to
// the build account, which ran the build's code and can plant links
// anywhere in the tree. The walk starts from base's descriptor and opens
// every directory of rel with openat(O_NOFOLLOW|O_DIRECTORY), the file
// itself with O_NOFOLLOW, and accepts only a regular file: a link at any
// level (sapi/, modules/, the tree's own directory) is refused with its
// name, so root never copies a file from somewhere the link points.
func openTreeFile(base, rel string) (*os.File, error) {
	parts, err := treePath(rel)
	if err != nil {
		return nil, err
	}
	dir, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the build's work directory %s: %v", base, err)
	}
	at := base
	for i, name := range parts {
		last := i == len(parts)-1
		// O_NONBLOCK: a FIFO planted in the file's place does not hang
		// the open.
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
		if !last {
			flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_DIRECTORY
		}
		fd, err := unix.Openat(dir, name, flags, 0)
		if err != nil {
			err = treeOpenError(dir, at, name, err)
			unix.Close(dir)
			return nil, err
		}
		unix.Close(dir)
		dir, at = fd, filepath.Join(at, name)
	}
	f := os.NewFile(uintptr(dir), at)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is a %s, not a regular file: refused (the build's binaries are copied only from regular files)", at, fileKind(st.Mode()))
	}
	return f, nil
}

// treePath splits rel into its names, refusing an absolute path and any
// "." or ".." (the walk never leaves base).
func treePath(rel string) ([]string, error) {
	if rel == "" || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("build file %q: want a path inside the build's work directory", rel)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, fmt.Errorf("build file %q: want a path inside the build's work directory, without . or ..", rel)
		}
	}
	return parts, nil
}

// treeOpenError explains why name in the directory dir (at) did not open,
// naming a link when there is one.
func treeOpenError(dir int, at, name string, err error) error {
	p := filepath.Join(at, name)
	var st unix.Stat_t
	if serr := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return fmt.Errorf("%s is a symbolic link: refused; phptune copies a build's files only through real directories, never through a link the build account could have planted", p)
		}
		if errors.Is(err, unix.ENOTDIR) {
			return fmt.Errorf("%s is not a directory: refused (the build made no usable %s)", p, name)
		}
	}
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("the build made no %s (%s is missing)", filepath.Base(p), p)
	}
	return fmt.Errorf("opening %s: %v", p, err)
}

// fileKind names a non-regular file's type for a message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
