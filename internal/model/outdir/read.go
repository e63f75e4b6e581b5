package outdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MaxRead is the most ReadTrusted reads of one file.
const MaxRead = 64 << 20

// ReadTrusted reads a file phptune wrote and reads back to act on (a
// tune's recommended.knobs and result.json, a knob file). Running as root
// it reads only what no other account could have written: the file is
// opened without following a link and must be a regular file owned by a
// trusted account (root, the effective user, SUDO_UID's) and not writable
// by group or others; its directory likewise, or root's and sticky (as
// /tmp: nobody else can replace a file of root's there). A missing file
// is an error that errors.Is(err, os.ErrNotExist) recognises.
func ReadTrusted(path string) ([]byte, error) {
	f, err := OpenTrusted(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxRead+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxRead {
		return nil, fmt.Errorf("%s is larger than %d MiB: not a file phptune wrote", path, MaxRead>>20)
	}
	return b, nil
}

// OpenTrusted opens a file for reading with ReadTrusted's checks, without
// a limit on its size (a database dump the user made, fed to a lab).
func OpenTrusted(path string) (*os.File, error) {
	root := os.Geteuid() == 0
	dirPath := filepath.Dir(filepath.Clean(path))
	if abs, err := filepath.Abs(dirPath); err == nil && root {
		dirPath = abs // its directories above are checked too
	}
	openDir := func(p string) (int, error) {
		return unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if root {
		// The directories above too, as written and as resolved: one
		// another account can write could have its entry swapped for a
		// link to a directory of root's holding a file of that name. What
		// is opened is the resolved directory with no link followed, the
		// one checked.
		real, err := filepath.EvalSymlinks(dirPath)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		for _, p := range []string{dirPath, real} {
			if err := trustedAncestors(path, filepath.Dir(p)); err != nil {
				return nil, err
			}
		}
		dirPath = real
		openDir = func(p string) (int, error) {
			return unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
				Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
				Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
			})
		}
	}
	dfd, err := openDir(dirPath)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(dfd)
	if root {
		var st unix.Stat_t
		if err := unix.Fstat(dfd, &st); err != nil {
			return nil, &os.PathError{Op: "stat", Path: dirPath, Err: err}
		}
		sticky := st.Mode&unix.S_ISVTX != 0 && st.Uid == 0
		if !trusted(int(st.Uid)) {
			return nil, untrusted(path, dirPath, fmt.Sprintf("is owned by %s", account(int(st.Uid))))
		}
		if st.Mode&0o022 != 0 && !sticky {
			return nil, untrusted(path, dirPath, fmt.Sprintf("is writable by group or others (mode %04o)", st.Mode&0o7777))
		}
	}
	fd, err := unix.Openat(dfd, filepath.Base(path), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, untrusted(path, path, "is a symbolic link")
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, untrusted(path, path, "is not a regular file")
	}
	if root {
		if uid := ownerOf(st); !trusted(uid) {
			f.Close()
			return nil, untrusted(path, path, "is owned by "+account(uid))
		}
		if st.Mode().Perm()&0o022 != 0 {
			f.Close()
			return nil, untrusted(path, path, fmt.Sprintf("is writable by group or others (mode %04o)", st.Mode().Perm()))
		}
	}
	return f, nil
}

// trustedAncestors checks dir and each directory above it, up to /:
// owned by a trusted account and writable by no other (root's sticky
// directories, as /tmp, pass). A link on the way must be a trusted
// account's (its directory, checked in turn, keeps others from
// replacing it).
func trustedAncestors(path, dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return &os.PathError{Op: "lstat", Path: d, Err: err}
		}
		if !trusted(int(st.Uid)) {
			return untrusted(path, d, fmt.Sprintf("is owned by %s", account(int(st.Uid))))
		}
		link := st.Mode&unix.S_IFMT == unix.S_IFLNK
		sticky := st.Mode&unix.S_ISVTX != 0 && st.Uid == 0
		if !link && st.Mode&0o022 != 0 && !sticky {
			return untrusted(path, d, fmt.Sprintf("is writable by group or others (mode %04o)", st.Mode&0o7777))
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

// untrusted is the refusal of a file root will not read: what is wrong
// with which path, and the fix.
func untrusted(path, what, problem string) error {
	fix := "chown root and chmod go-w it, or run the tune again"
	if what != path {
		problem = "is in " + what + ", which " + problem
	}
	return &RefusedError{Path: path, Problem: problem + ": root acts only on files no other account could have written", Fix: fix}
}
