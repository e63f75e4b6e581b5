package site

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxAppConf bounds an application configuration file read.
const maxAppConf = 1 << 20

// openDir opens a directory for reads beneath it, following no link on
// the way: the site's account may own a directory of the path and swap
// it for a link (to another site's configuration) after readDocRoot
// checked it. A path through links (a deployment's "current", as nginx
// follows it) is opened at its real path, when every link on it lies in a
// directory only root can write (trustedLinks), again with no link
// followed: a link swapped in since fails, it never leads elsewhere.
func openDir(dir string) (int, error) {
	how := &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, how)
	if errors.Is(err, unix.ELOOP) {
		real, rerr := trustedLinks(dir)
		if rerr != nil {
			return -1, rerr
		}
		fd, err = unix.Openat2(unix.AT_FDCWD, real, how)
	}
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// readBeneath reads the regular file rel below the directory dir
// without following any link on the way (the lab's account can write
// the docroot: a link there could point at any of root's files) and
// without leaving dir, at most limit bytes.
func readBeneath(dir, rel string, limit int) ([]byte, error) {
	dfd, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	path := filepath.Join(dir, rel)
	fd, err := unix.Openat2(dfd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
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
	if err := notLinkedIn(dfd, dir, st, path); err != nil {
		return nil, err
	}
	if st.Size() > int64(limit) {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a configuration file phptune reads", path, limit)
	}
	b := make([]byte, limit+1)
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	if n > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a configuration file phptune reads", path, limit)
	}
	return b[:n], nil
}

// notLinkedIn refuses a file with more than one name whose owner is not
// the owner of the directory dfd: a hard link the site's account made to
// another account's file (another site's configuration, where the
// kernel allows links to files one cannot write: fs.protected_hardlinks
// off). A deployment's releases hard-linked to each other keep their
// owner and pass.
func notLinkedIn(dfd int, dir string, st os.FileInfo, path string) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || sys.Nlink <= 1 {
		return nil
	}
	var dst unix.Stat_t
	if err := unix.Fstat(dfd, &dst); err != nil {
		return &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if sys.Uid != dst.Uid {
		return fmt.Errorf("%s has %d names (a hard link) and is uid %d's, not the owner's of %s (uid %d): not read, it can be another account's file linked here; copy it instead of linking it", path, sys.Nlink, sys.Uid, dir, dst.Uid)
	}
	return nil
}

// existsBeneath reports whether rel exists below dir (as a regular file
// or directory, no link followed).
func existsBeneath(dir, rel string) bool {
	dfd, err := openDir(dir)
	if err != nil {
		return false
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat2(dfd, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return false
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	return err == nil && (st.Mode&unix.S_IFMT == unix.S_IFREG || st.Mode&unix.S_IFMT == unix.S_IFDIR)
}

// errNotFound is whether err is a file that does not exist.
func errNotFound(err error) bool { return errors.Is(err, os.ErrNotExist) }
