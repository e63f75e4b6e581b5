package seal

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Destroy kills every process in the seal's namespaces (its init with
// them: the kernel then kills whatever is left in its pid namespace,
// wherever else it went), unmounts the namespace files (the mount
// namespace, and every mount made inside it, goes with its last
// reference) and removes what Create made in the
// directory: the namespace files, the hosts file and the overlay's layers
// with whatever the lab wrote there. The directory itself is removed when
// nothing else is left in it. Destroying a seal that is gone, or half
// made, does what remains and succeeds.
func (s *Seal) Destroy() error {
	var errs []error
	if err := s.killAll(5 * time.Second); err != nil {
		errs = append(errs, err)
	}
	for _, f := range []string{s.netFile(), s.mntFile(), s.ipcFile(), s.pidFile(), s.nsDir()} {
		if err := unmount(f); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		// Removing files under a mount that is still there would
		// remove the wrong files.
		return errors.Join(errs...)
	}
	for _, p := range []string{s.nsDir(), s.hostsPath(), s.overlayDir()} {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %v", p, err))
		}
	}
	if err := os.Remove(s.Dir); err != nil && !os.IsNotExist(err) && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
		errs = append(errs, fmt.Errorf("removing %s: %v", s.Dir, err))
	}
	return errors.Join(errs...)
}

// unmount unmounts p if something is mounted there, detaching it when it
// is busy; a path that is gone or not a mount point is fine.
func unmount(p string) error {
	for {
		err := unix.Unmount(p, unix.UMOUNT_NOFOLLOW)
		switch {
		case err == nil:
			continue // a path can be mounted more than once
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
			return nil
		case errors.Is(err, unix.EBUSY):
			if err := unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
				return fmt.Errorf("unmounting %s: %v", p, err)
			}
		default:
			return fmt.Errorf("unmounting %s: %v; unmount it by hand (umount %s)", p, err, p)
		}
	}
}

// nsInode is the inode of the namespace bound to file, 0 when none is
// (the file is gone, or no namespace is mounted on it).
func nsInode(file string) uint64 {
	var st unix.Statfs_t
	if err := unix.Statfs(file, &st); err != nil || st.Type != unix.NSFS_MAGIC {
		return 0
	}
	fi, err := os.Stat(file)
	if err != nil {
		return 0
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// Processes are the host pids of the processes in the seal's network,
// mount or pid namespace now (the seal's init among them).
func (s *Seal) Processes() []int {
	ns := s.inodes()
	if ns == (nsInodes{}) {
		return nil
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == os.Getpid() {
			continue
		}
		if ns.holds(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// nsInodes are the inodes of the seal's bound namespaces (0: none bound).
type nsInodes struct{ net, mnt, pid uint64 }

func (s *Seal) inodes() nsInodes {
	return nsInodes{net: nsInode(s.netFile()), mnt: nsInode(s.mntFile()), pid: nsInode(s.pidFile())}
}

// holds reports whether pid's network, mount or pid namespace is the
// seal's (an inode of 0 matches nothing).
func (ns nsInodes) holds(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/ns/"
	return (ns.net != 0 && linkInode(dir+"net", "net") == ns.net) ||
		(ns.mnt != 0 && linkInode(dir+"mnt", "mnt") == ns.mnt) ||
		(ns.pid != 0 && linkInode(dir+"pid", "pid") == ns.pid)
}

// linkInode reads a /proc/PID/ns link, "net:[4026532281]", as its inode.
func linkInode(link, kind string) uint64 {
	target, err := os.Readlink(link)
	if err != nil {
		return 0
	}
	rest, ok := strings.CutPrefix(target, kind+":[")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return n
}

// killAll sends SIGKILL to every process in the seal's namespaces until
// none is left, or fails after limit. Each process is signalled through a
// pidfd opened before its namespaces are checked: if the pid was reused
// meanwhile, the pidfd names the process that exited and the signal goes
// nowhere.
func (s *Seal) killAll(limit time.Duration) error {
	ns := s.inodes()
	deadline := time.Now().Add(limit)
	for {
		pids := s.Processes()
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v are still in the seal %s after %v of SIGKILL; find what holds them (ps -o pid,stat,wchan -p %d) and run phptune lab down again", pids, s.Dir, limit, pids[0])
		}
		for _, pid := range pids {
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue // gone already
			}
			if ns.holds(pid) {
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			}
			unix.Close(fd)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
