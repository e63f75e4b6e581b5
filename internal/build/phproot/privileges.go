package phproot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dropPrivileges takes from every file of the tree at root what would let
// it run with more rights than its caller's: the setuid and setgid bits
// (Debian 13's su, mount, umount, unix_chkpwd are setuid root) and file
// capabilities (security.capability). A PHP root only serves php-fpm and
// php as the lab's account; left as Debian installs them, those programs
// would lie on this host, outside its own updates, runnable by any local
// user who can reach phptune's home. Links are not followed (WalkDir does
// not, and Lremovexattr acts on the link itself).
func dropPrivileges(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 || !(d.Type().IsRegular() || d.IsDir()) {
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if m := st.Mode(); m&(fs.ModeSetuid|fs.ModeSetgid) != 0 && m.IsRegular() {
			if err := os.Chmod(p, m.Perm()); err != nil {
				return fmt.Errorf("dropping the setuid/setgid bit of %s: %w", p, err)
			}
		}
		if err := unix.Lremovexattr(p, "security.capability"); err != nil && !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
			return fmt.Errorf("dropping the file capabilities of %s: %w", p, err)
		}
		return nil
	})
}

// privileged lists the files of the tree at root that still carry a
// setuid or setgid bit (for the checks and the tests).
func privileged(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		st, err := os.Lstat(p)
		if err == nil && st.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			out = append(out, p)
		}
		return err
	})
	return out, err
}
