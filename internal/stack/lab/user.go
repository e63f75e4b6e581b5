package lab

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// StackUser is the account every process of a lab runs as. Run by root,
// phptune uses a dedicated system account (created on first use) so that no
// lab process holds root; run by anyone else, the stack runs as that user.
const StackUser = "phptune"

type account struct {
	Name     string
	UID, GID uint32
	root     bool // phptune itself runs as root and must drop privileges
}

func stackAccount() (*account, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return nil, err
		}
		return &account{Name: u.Username, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}, nil
	}
	u, err := user.Lookup(StackUser)
	if err != nil {
		out, cerr := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", "--user-group", StackUser).CombinedOutput()
		if cerr != nil {
			return nil, fmt.Errorf("creating the unprivileged account %q for lab processes: %v: %s", StackUser, cerr, out)
		}
		if u, err = user.Lookup(StackUser); err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &account{Name: u.Username, UID: uint32(uid), GID: uint32(gid), root: true}, nil
}

// DBUser is the account a site lab's MariaDB runs as: a system account
// phptune creates on first use, which runs nothing but the lab servers'
// mariadbd and the MariaDB tools that act as their root. It is neither
// the site's account (whose code is the hostile party: it must not read
// the datadir, or signal, prlimit or ptrace the server) nor production's
// "mysql" (whose server, datadir and processes on the host would then be
// one uid with every lab's: a lab's server could signal production's, and
// production's files would be writable by the lab's).
const DBUser = "phptune-db"

// dbAccount is DBUser's account, created when missing (root only).
func dbAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("a site lab's MariaDB runs as %s, an account only root can create and use; run phptune as root", DBUser)
	}
	u, err := user.Lookup(DBUser)
	if err != nil {
		out, cerr := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", "--user-group", DBUser).CombinedOutput()
		if cerr != nil {
			return nil, fmt.Errorf("creating the account %q for site labs' MariaDB: %v: %s", DBUser, cerr, out)
		}
		if u, err = user.Lookup(DBUser); err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if uid == 0 || gid == 0 {
		return nil, fmt.Errorf("the account %s has uid %d, gid %d: a lab's MariaDB never runs as root; remove the account (userdel %s) and phptune makes it again", DBUser, uid, gid, DBUser)
	}
	return &account{Name: u.Username, UID: uint32(uid), GID: uint32(gid), root: true}, nil
}

// dbAccount is the account a lab's MariaDB runs as: a site lab's
// DBUser, checked against the ids recorded when it started; any other
// lab's own account.
func (l *Lab) dbAccount() (*account, error) {
	if l.DBUser == "" {
		return l.account()
	}
	a, err := dbAccount()
	if err != nil {
		return nil, err
	}
	if int(a.UID) != l.DBUID || int(a.GID) != l.DBGID {
		return nil, fmt.Errorf("lab %s runs MariaDB as %s (uid %d, gid %d), which is now uid %d, gid %d; take the lab down and up again", l.Name, l.DBUser, l.DBUID, l.DBGID, a.UID, a.GID)
	}
	return a, nil
}

// sysProcAttr starts a process as the stack account in a new session, so it
// is the leader of its own process group (killed as one) and does not get
// the terminal's Ctrl-C after `lab up` has returned.
func (a *account) sysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true}
	if a.root {
		attr.Credential = &syscall.Credential{Uid: a.UID, Gid: a.GID, Groups: []uint32{}}
	}
	return attr
}

// labAccount is the account a new lab runs as: phptune's own, or with
// --user the app's (root only, never root), which then runs the whole lab —
// nginx, php-fpm, MariaDB — with its rights, so that no process of another
// lab (all of which share phptune's account) can reach it.
func labAccount(name string) (*account, error) {
	stack, err := stackAccount()
	if err != nil || name == "" || name == stack.Name {
		return stack, err
	}
	return userAccount(stack.root, name)
}

func userAccount(asRoot bool, name string) (*account, error) {
	if !asRoot {
		return nil, fmt.Errorf("--user %s: only root can run a lab as another account; run phptune as root, or leave --user out to run it as yourself", name)
	}
	if err := checkAccountName(name); err != nil {
		return nil, err
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("--user %s: no such account on this machine (%v); give the account that owns the app's files, e.g. www-data", name, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if uid == 0 || gid == 0 {
		return nil, fmt.Errorf("--user %s: a lab never runs as root (uid %d, gid %d): PHP code in it could then act as root; give the app's own account, e.g. www-data", name, uid, gid)
	}
	return &account{Name: u.Username, UID: uint32(uid), GID: uint32(gid), root: true}, nil
}

// CheckUser refuses a --user value before anything starts: only root may
// give one, and the account must exist and pass CheckAccount for the
// lab's docroot ("" for a built-in app).
func CheckUser(name, docroot string) error {
	if name == "" || name == StackUser {
		return nil
	}
	a, err := userAccount(os.Geteuid() == 0, name)
	if err != nil {
		return err
	}
	return CheckAccount(gatherAccountFacts(a, docroot))
}

// newLabAccount is labAccount for a lab about to start: a --user account
// must also pass CheckAccount. A running lab keeps the account it was
// checked with (l.account does not judge it again).
func newLabAccount(name, docroot string) (*account, error) {
	a, err := labAccount(name)
	if err != nil {
		return nil, err
	}
	if a.root && a.Name != StackUser {
		if err := CheckAccount(gatherAccountFacts(a, docroot)); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// account is the lab's account, checked against the ids recorded when it
// started (an account removed and made again is refused).
func (l *Lab) account() (*account, error) {
	if os.Geteuid() != 0 {
		return stackAccount()
	}
	a, err := labAccount(l.User)
	if err != nil {
		return nil, err
	}
	if int(a.UID) != l.UID || int(a.GID) != l.GID {
		return nil, fmt.Errorf("lab %s runs as %s (uid %d, gid %d), which is now uid %d, gid %d; take the lab down and up again", l.Name, l.User, l.UID, l.GID, a.UID, a.GID)
	}
	return a, nil
}

// allowTraverse adds o+x to one of phptune's own directories, so a lab of
// another account (--user) can pass through it to its own directory.
func allowTraverse(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o001 != 0 {
		return nil
	}
	return mkdirOwned(dir, -1, -1, st.Mode().Perm()|0o001)
}

// ids returns the uid and gid that lab-writable directories get: the stack
// account's when phptune runs as root, -1 (unchanged) otherwise.
func (a *account) ids() (uid, gid int) {
	if !a.root {
		return -1, -1
	}
	return int(a.UID), int(a.GID)
}

// group is the gid root-owned files the stack must read get (-1 otherwise).
func (a *account) group() int {
	if !a.root {
		return -1
	}
	return int(a.GID)
}

// readDirMode and readFileMode are the modes of root-owned directories and
// files the stack reads through its group; run by anyone else, where the
// stack is that user, group access is not needed and not given.
func (a *account) readDirMode() os.FileMode {
	if a.root {
		return 0o750
	}
	return 0o700
}

func (a *account) readFileMode() os.FileMode {
	if a.root {
		return 0o640
	}
	return 0o600
}

// checkReachable makes sure the stack account can traverse every directory
// above dir; otherwise nginx and php-fpm fail later with a vague EACCES.
func (a *account) checkReachable(dir string) error {
	if !a.root {
		return nil
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		sys, _ := st.Sys().(*syscall.Stat_t)
		perm := st.Mode().Perm()
		ok := perm&0o001 != 0
		if sys != nil && sys.Gid == a.GID && perm&0o010 != 0 {
			ok = true
		}
		if sys != nil && sys.Uid == a.UID && perm&0o100 != 0 {
			ok = true
		}
		if !ok {
			return fmt.Errorf("the lab's unprivileged user %q cannot reach %s (mode %v); run: chmod o+x %s, or set PHPTUNE_HOME to a directory it can reach", a.Name, d, perm, d)
		}
		if d == "/" {
			return nil
		}
	}
}
