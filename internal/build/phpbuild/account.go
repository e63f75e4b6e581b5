package phpbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
)

// BuildUser is the system account every build step runs as when phptune
// runs as root. It owns only the work trees of builds.
const BuildUser = lab.BuildUser

// Account is a user processes run as.
type Account struct {
	Name     string
	UID, GID uint32
	// drop is true when phptune runs as root and must switch to the
	// account; run by anyone else, everything runs as that user.
	drop bool
}

// lookupOrCreate finds name, creating it as a system account (no home, no
// shell, its own group) when root and it does not exist yet.
func lookupOrCreate(name string) (*Account, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return nil, err
		}
		return &Account{Name: u.Username, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		out, cerr := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", "--user-group", name).CombinedOutput()
		if cerr != nil {
			return nil, fmt.Errorf("creating the unprivileged account %q: %v: %s", name, cerr, out)
		}
		if u, err = user.Lookup(name); err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if uid == 0 || gid == 0 {
		return nil, fmt.Errorf("account %q has uid %d, gid %d: builds never run as root", name, uid, gid)
	}
	return &Account{Name: u.Username, UID: uint32(uid), GID: uint32(gid), drop: true}, nil
}

// BuildAccount is the account builds run as (BuildUser for root).
func BuildAccount() (*Account, error) { return lookupOrCreate(BuildUser) }

// LabAccount is the account labs run as (lab.StackUser for root); the
// instrumented php-fpm trains as it.
func LabAccount() (*Account, error) { return lookupOrCreate(lab.StackUser) }

// ids are the owner of directories the account must write (-1: unchanged).
func (a *Account) ids() (int, int) {
	if !a.drop {
		return -1, -1
	}
	return int(a.UID), int(a.GID)
}

const buildPath = "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

// lowPriority is the wrapper every build step runs under: the lowest nice
// value and the idle scheduling class, so a build only takes CPU nobody
// else wants (labs and measurements on the same machine keep theirs).
func lowPriority(bin string, args []string) (string, []string) {
	pre := []string{}
	if p, err := exec.LookPath("chrt"); err == nil {
		pre = append(pre, p, "--idle", "0")
	}
	if p, err := exec.LookPath("nice"); err == nil {
		pre = append(pre, p, "-n", "19")
	}
	if len(pre) == 0 {
		return bin, args
	}
	return pre[0], append(append(pre[1:], bin), args...)
}

// lowerAutogroup gives the scheduler autogroup of a step's new session the
// lowest weight (nice 19). With autogroups on (Debian's default,
// kernel.sched_autogroup_enabled=1) the CPU is shared between sessions
// first and only then between the tasks of each: SCHED_IDLE and nice 19
// inside the build's session did not stop it from taking a session's fair
// share beside a tune started from another one — a WordPress tune measured
// the compilers at 0.73 of its 2 cores while 9 of its tasks waited to run.
// Best effort: without autogroups the file is absent, and in a cpu cgroup
// other than the root one autogroups do not apply; nothing is needed then.
func lowerAutogroup(pid int) {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/autogroup", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	_, _ = f.WriteString("19")
	f.Close()
}

// step is one command of a build: the account it runs as, its directory,
// environment (on top of PATH, HOME, LANG=C) and where its output goes.
type step struct {
	acct *Account
	dir  string
	env  []string
	out  io.Writer
	// stdin, when set, feeds the command.
	stdin io.Reader
	// onStart, when set, gets the process group id as soon as it exists.
	onStart func(pgid int)
}

// run runs bin as the step's account, in a process group of its own (so
// Ctrl-C or a timeout kills make and every compiler under it at once),
// with the lowest CPU priority. Cancelling ctx sends SIGTERM to the group,
// then SIGKILL after grace, and waits until the group is empty.
func (s step) run(ctx context.Context, bin string, args ...string) error {
	name, argv := lowPriority(bin, args)
	cmd := exec.Command(name, argv...)
	cmd.Dir = s.dir
	home := s.dir
	if home == "" {
		home = "/nonexistent"
	}
	cmd.Env = append([]string{buildPath, "HOME=" + home, "LANG=C", "LC_ALL=C", "TMPDIR=" + filepath.Join(home, ".tmp")}, s.env...)
	if s.dir == "" {
		cmd.Env[4] = "TMPDIR=/tmp"
	} else {
		_ = os.MkdirAll(filepath.Join(home, ".tmp"), 0o700)
		if uid, gid := s.acct.ids(); uid >= 0 {
			_ = os.Lchown(filepath.Join(home, ".tmp"), uid, gid)
		}
	}
	cmd.Stdout, cmd.Stderr, cmd.Stdin = s.out, s.out, s.stdin
	// A session of its own (and so a process group: Ctrl-C kills the
	// whole step), whose scheduler autogroup then gets the lowest weight.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if s.acct.drop {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: s.acct.UID, Gid: s.acct.GID, Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %v", filepath.Base(bin), err)
	}
	pgid := cmd.Process.Pid
	lowerAutogroup(pgid)
	if s.onStart != nil {
		s.onStart(pgid)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		killGroup(pgid, 0) // a daemon a step left behind
		if err != nil {
			return fmt.Errorf("%s %s: %v", filepath.Base(bin), strings.Join(firstN(args, 3), " "), err)
		}
		return nil
	case <-ctx.Done():
		killGroup(pgid, 5*time.Second)
		<-done
		return ctx.Err()
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// killGroup sends SIGTERM to process group pgid and SIGKILL to what is
// left after grace, then waits (up to 10 s) until the group is empty.
func killGroup(pgid int, grace time.Duration) {
	if pgid <= 1 {
		return
	}
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && groupAlive(pgid) {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for i := 0; i < 200 && groupAlive(pgid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
}

// groupAlive reports whether any process of group pgid is left (zombies
// count until reaped).
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}

// reapAccount kills every process of uid (SIGKILL) and waits for them to
// go. Only called for the build account while holding its machine-wide
// lock (lockAccount): no build is running anywhere on the machine, so
// whatever runs as it is left from an interrupted one.
func reapAccount(uid uint32) int {
	n := 0
	for i := 0; i < 3; i++ {
		pids := pidsOf(uid)
		if len(pids) == 0 {
			return n
		}
		for _, p := range pids {
			if syscall.Kill(p, syscall.SIGKILL) == nil {
				n++
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return n
}

// pidsOf lists the processes whose real uid is uid.
func pidsOf(uid uint32) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+e.Name(), &st) == nil && st.Uid == uid {
			out = append(out, pid)
		}
	}
	return out
}

// accountLockPath is the machine-wide lock of the build account. The
// account is the machine's, not one build cache's: a build in another
// PHPTUNE_HOME (a test's) runs as the same account, so the cache's own lock
// cannot say whether its processes are an interrupted build's (to reap) or
// a running one's. /run is root's alone, so nobody else can plant it.
const accountLockPath = "/run/phptune-build.lock"

// lockAccount takes the build account's machine-wide lock, failing at once
// when another build holds it. Only root builds as the account.
func lockAccount() (func(), error) {
	f, err := os.OpenFile(accountLockPath, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the build account's lock %s: %v", accountLockPath, err)
	}
	if st, err := f.Stat(); err != nil || st.Sys().(*syscall.Stat_t).Uid != 0 || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("the build account's lock %s is not a regular file of root's: refused", accountLockPath)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another phptune build is running on this machine (its account %s is busy; lock %s); builds run one at a time", BuildUser, accountLockPath)
	}
	return func() { f.Close() }, nil
}
