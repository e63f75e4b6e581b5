package livehost

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/watch/proc"
)

// verified is what processAccount checked of a server's process: the
// account it runs as and the binary it runs ("" when the binary could
// not be read without root; see processAccount).
type verified struct {
	uid int
	exe string
}

// processAccount is phptune's one trust rule for a server process found
// in /proc (php-fpm, nginx, Apache, MariaDB): it verifies that pid, found
// by the title it shows, is a server of the expected kind run by one
// account, and returns that account and its binary (the exe link's
// target as the kernel shows it, " (deleted)" included). Any process can
// set its title, and the owner of /proc/PID is only its effective uid:
// a set-uid program (su, run by anyone) shows uid 0 there while its real
// uid is its caller's. So the process's real,
// effective, saved and filesystem uids must all be the same account,
// accepted by accept, and the binary it runs (/proc/PID/exe) a regular
// file owned by root (or by this process's user, for tests run without
// root) that nobody else can write, whose name starts with one of names
// ("nginx", "php-fpm", "mariadbd", "apache2"). A process in another
// mount namespace is refused (sameMountNamespace).
func processAccount(fs *proc.FS, pid int, names []string, accept func(uid int) bool) (verified, error) {
	dir := filepath.Join(fs.Root(), strconv.Itoa(pid))
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return verified{}, err
	}
	uids, err := statusUIDs(status)
	if err != nil {
		return verified{}, fmt.Errorf("process %d: %v", pid, err)
	}
	uid := uids[0]
	for _, u := range uids[1:] {
		if u != uid {
			return verified{}, fmt.Errorf("process %d runs with uids %v (real, effective, saved, filesystem): not one account, as a set-uid program's are", pid, uids)
		}
	}
	if !accept(uid) {
		return verified{}, fmt.Errorf("process %d runs as uid %d", pid, uid)
	}
	if err := sameMountNamespace(fs, pid); err != nil {
		return verified{}, err
	}
	exe := filepath.Join(dir, "exe")
	st, err := os.Stat(exe)
	if err != nil && errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
		// advise run as a pool's user cannot read a root process's
		// binary; it only reads, with its own rights, and signals
		// nothing: its uids are what it can check.
		return verified{uid: uid}, nil
	}
	if err != nil {
		return verified{}, fmt.Errorf("process %d: its binary: %v", pid, err)
	}
	owner := int(st.Sys().(*syscall.Stat_t).Uid)
	if !st.Mode().IsRegular() || (owner != 0 && owner != os.Geteuid()) || st.Mode().Perm()&0o022 != 0 {
		return verified{}, fmt.Errorf("process %d runs a binary owned by uid %d, mode %v: not a root-owned binary only root can write", pid, owner, st.Mode().Perm())
	}
	target, err := os.Readlink(exe)
	if err != nil {
		return verified{}, fmt.Errorf("process %d: its binary: %v", pid, err)
	}
	base := filepath.Base(strings.TrimSuffix(target, " (deleted)"))
	for _, n := range names {
		if strings.HasPrefix(base, n) {
			return verified{uid: uid, exe: target}, nil
		}
	}
	return verified{}, fmt.Errorf("process %d runs %s, not %s", pid, target, strings.Join(names, " or "))
}

// statusUIDs reads the Uid line of /proc/PID/status: real, effective,
// saved and filesystem uids.
func statusUIDs(status []byte) ([4]int, error) {
	var out [4]int
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Uid:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 4 {
			return out, fmt.Errorf("its status has %d uids, want 4", len(f))
		}
		for i, s := range f {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return out, fmt.Errorf("its status has uid %q", s)
			}
			out[i] = n
		}
		return out, nil
	}
	return out, fmt.Errorf("its status has no Uid line")
}

// rootOrMe accepts root, and this process's own user (tests run without
// root start their servers as themselves).
func rootOrMe(uid int) bool { return uid == 0 || uid == os.Geteuid() }

// sameMountNamespace refuses a process whose mount namespace is not
// this process's (a container's, a sealed lab's): the paths in its
// command line and configuration name files of another tree, so it is
// not this host's server to read or change. A process whose namespace
// cannot be read without root (advise run as a pool's user) is judged by
// the rest of processAccount.
func sameMountNamespace(fs *proc.FS, pid int) error {
	mine, err := os.Readlink(filepath.Join(fs.Root(), "self", "ns", "mnt"))
	if err != nil {
		return nil
	}
	theirs, err := os.Readlink(filepath.Join(fs.Root(), strconv.Itoa(pid), "ns", "mnt"))
	if err != nil {
		if errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
			return nil
		}
		return fmt.Errorf("process %d: its mount namespace: %v", pid, err)
	}
	if theirs != mine {
		return fmt.Errorf("process %d runs in another mount namespace (%s, this process's is %s): a container's or a sealed lab's, not this host's", pid, theirs, mine)
	}
	return nil
}
