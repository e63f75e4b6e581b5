package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Home is phptune's state directory: $PHPTUNE_HOME when set; for root
// /var/lib/phptune; otherwise $XDG_STATE_HOME/phptune or
// ~/.local/state/phptune. It holds the labs, the results database and
// the version cache.
func Home() string {
	if h := os.Getenv("PHPTUNE_HOME"); h != "" {
		return h
	}
	if os.Geteuid() == 0 {
		return "/var/lib/phptune"
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "phptune")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "phptune")
	}
	return filepath.Join(home, ".local", "state", "phptune")
}

// Root is the directory that holds all labs: Home()/labs.
func Root() string { return filepath.Join(Home(), "labs") }

// EnsureHome creates Home and its labs directory if needed and makes them
// private: owned by the user running phptune, mode 0700; run as root, owned
// by root with the stack account's group and mode 0710, so lab processes can
// traverse to their own lab but cannot list, create or rename anything in
// it. A home that is a symlink, or owned by another account, is refused:
// root never builds its state inside a directory someone else controls.
func EnsureHome() (string, error) {
	home := Home()
	gid := -1
	mode := os.FileMode(0o700)
	if os.Geteuid() == 0 {
		if err := checkHomeParents(home); err != nil {
			return "", err
		}
		acct, err := stackAccount()
		if err != nil {
			return "", err
		}
		gid, mode = int(acct.GID), 0o710
	}
	for _, d := range []string{home, filepath.Join(home, "labs")} {
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			return "", fmt.Errorf("creating %s: %v", filepath.Dir(d), err)
		}
		if err := os.Mkdir(d, mode); err != nil && !os.IsExist(err) {
			return "", fmt.Errorf("creating phptune's state directory %s: %v", d, err)
		}
		if err := ownPrivateDir(d, gid, mode); err != nil {
			return "", err
		}
	}
	return home, nil
}

// ownPrivateDir checks that d is a real directory owned by the current user
// (not a symlink) and sets its group and mode.
func ownPrivateDir(d string, gid int, mode os.FileMode) error {
	fd, err := syscall.Open(d, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("phptune's state directory %s: %v (it must be a real directory, not a symlink); set PHPTUNE_HOME to another directory", d, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("phptune's state directory %s belongs to uid %d, not to the user running phptune (uid %d); set PHPTUNE_HOME to a directory of your own", d, st.Uid, os.Geteuid())
	}
	if gid >= 0 && int(st.Gid) != gid {
		if err := syscall.Fchown(fd, -1, gid); err != nil {
			return fmt.Errorf("setting the group of %s: %v", d, err)
		}
	}
	// o+x alone may stay: a pool of another account (--user) passes through.
	if perm := os.FileMode(st.Mode).Perm(); perm != mode && perm != mode|0o001 {
		if err := syscall.Fchmod(fd, uint32(mode)); err != nil {
			return fmt.Errorf("making %s private: %v", d, err)
		}
	}
	return nil
}

// checkHomeParents refuses, for root, a home whose parent directories
// another account could change (as sshd's StrictModes does): every one up
// to /, both as written and with its links resolved, must be root's and
// not writable by group or others — a root-owned sticky directory such as
// /tmp excepted, where no one else can rename or remove root's entries.
// Otherwise that account could swap the home (or its labs directory) for
// a link between phptune's checks and its use, and root would create or
// remove files elsewhere.
func checkHomeParents(home string) error {
	abs, err := filepath.Abs(home)
	if err != nil {
		return err
	}
	// The deepest parent that exists: EnsureHome creates the rest, as
	// root's, below it.
	parent := filepath.Dir(filepath.Clean(abs))
	for {
		if _, err := os.Lstat(parent); err == nil || parent == "/" {
			break
		}
		parent = filepath.Dir(parent)
	}
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return fmt.Errorf("phptune's state directory %s: %v", home, err)
	}
	for _, start := range []string{parent, real} {
		for p := start; ; p = filepath.Dir(p) {
			if err := checkRootOnly(p, home); err != nil {
				return err
			}
			if p == "/" || p == "." {
				break
			}
		}
	}
	return nil
}

// checkRootOnly checks one parent of home (not following a link at p).
func checkRootOnly(p, home string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("phptune's state directory %s: %s: %v", home, p, err)
	}
	mode := os.FileMode(st.Mode & 0o7777)
	sticky := st.Mode&syscall.S_ISVTX != 0
	switch {
	case st.Uid != 0:
		return fmt.Errorf("phptune's state directory %s lies under %s, which belongs to uid %d: that account could swap the directory for a link to one root would then write or remove; make it root's (chown root %s) or set PHPTUNE_HOME to a directory under root's own", home, p, st.Uid, p)
	case st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
		return nil // a link of root's in a directory checked in turn
	case mode&0o022 != 0 && !sticky:
		return fmt.Errorf("phptune's state directory %s lies under %s (mode %04o), which others can write: they could swap the directory for a link; chmod go-w %s, or set PHPTUNE_HOME to a directory under root's own", home, p, mode, p)
	}
	return nil
}
