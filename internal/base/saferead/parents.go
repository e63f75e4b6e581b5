package saferead

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// UnsafeParent is a directory above a path through which an account
// other than root could swap the path (or a directory on its way) for
// another or for a link: not a real directory, not root's, or writable by
// others without the sticky bit.
type UnsafeParent struct {
	Dir  string
	Mode os.FileMode // the directory's (its type, when it is not one)
	UID  uint32
	Err  error // Lstat's, when the directory could not be looked at
}

// Error says what is wrong with the directory, in words any caller can
// print.
func (u *UnsafeParent) Error() string {
	switch {
	case u.Err != nil:
		return fmt.Sprintf("checking %s: %v", u.Dir, u.Err)
	case !u.Mode.IsDir():
		return fmt.Sprintf("%s is not a directory (a link is not followed)", u.Dir)
	case u.UID != 0:
		return fmt.Sprintf("the directory %s is not root's (uid %d)", u.Dir, u.UID)
	default:
		return fmt.Sprintf("the directory %s can be written by others than root (mode %04o)", u.Dir, u.Mode.Perm())
	}
}

// RootOnlyParents returns the first directory above p, from p's own
// directory up to /, that is not a real directory owned by root and
// writable by no one else (root's sticky directories, as /tmp, pass: no
// other account can rename or remove root's entries there); nil when
// every one is.
func RootOnlyParents(p string) *UnsafeParent {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		st, err := os.Lstat(d)
		if err != nil {
			return &UnsafeParent{Dir: d, Err: err}
		}
		uid := st.Sys().(*syscall.Stat_t).Uid
		if !st.IsDir() || uid != 0 || st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0 {
			return &UnsafeParent{Dir: d, Mode: st.Mode(), UID: uid}
		}
		if d == "/" {
			return nil
		}
	}
}
