package liveapply

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/phptune/phptune/internal/saferead"
	"github.com/phptune/phptune/internal/safewrite"
)

// checkTrusted refuses a path whose directories someone other than this
// process's user (root, on a live host) could change: the file's own
// directory must belong to this user and be writable by it alone; every
// directory above must belong to this user or root and be writable by no
// one else, or be sticky (as /tmp is: others cannot rename what is ours).
// The directories are checked twice: as the path names them (a directory
// holding a link must be one nobody else can write, or the link could be
// re-pointed between this check and the write) and with the links
// resolved. So nobody else can swap a file, a directory or a link between
// this check and the write. It runs when a transaction is prepared, again
// before each write, and before undo puts a file back.
func checkTrusted(path string) error {
	if err := checkWrittenPath(path); err != nil {
		return err
	}
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

// checkWrittenPath checks the directories above path as written, links
// not followed: each must belong to this user or root and be writable by
// no one else (sticky ones excepted); a link found on the way is not
// followed here (checkTrusted checks where it leads), only the directory
// holding it, which is the next one up.
func checkWrittenPath(path string) error {
	me := os.Geteuid()
	for d, first := filepath.Dir(filepath.Clean(path)), true; ; d, first = filepath.Dir(d), false {
		st, err := os.Lstat(d)
		if err != nil {
			return err
		}
		// The file's own directory, when not a link, is checked more
		// strictly after the links are resolved.
		if st.Mode()&os.ModeSymlink == 0 && !first {
			sys, ok := st.Sys().(*syscall.Stat_t)
			if !ok || !st.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
			owner := int(sys.Uid)
			switch {
			case owner != me && owner != 0:
				return fmt.Errorf("%s (on the path to %s) belongs to uid %d: whoever owns it could replace what is below it, a link included; phptune writes only below directories of root's", d, path, owner)
			case st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0:
				return fmt.Errorf("%s (on the path to %s) is writable by others (mode %v): they could replace what is below it, a link included; chmod go-w %s", d, path, st.Mode().Perm(), d)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// writeFileAtomic writes data to path with package safewrite (temporary
// file refusing links, mode and owner, fsync, rename, directory fsync),
// making its directory first. uid/gid -1 keep this process's.
func writeFileAtomic(path string, data []byte, mode os.FileMode, uid, gid int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return safewrite.Write(path, data, mode, uid, gid)
}

// removeFile removes path (a missing file is not an error) and syncs its
// directory.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return safewrite.SyncDir(filepath.Dir(path))
}

// readRegular reads a regular file without following a link at its last
// component, up to limit bytes (more is an error).
func readRegular(path string, limit int64) ([]byte, error) {
	return saferead.Whole(path, limit, saferead.AnyOwner)
}

// sameContent reports whether path holds exactly data.
func sameContent(path string, data []byte) bool {
	b, err := readRegular(path, int64(len(data))+1)
	return err == nil && bytes.Equal(b, data)
}
