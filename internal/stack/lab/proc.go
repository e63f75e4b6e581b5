package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// alive reports whether pid runs and is not a zombie. kill(pid, 0) alone
// would count zombies, which a test process may hold until it reaps them.
func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != "Z" && st.state != "X"
}

// procStat is what the lab needs of /proc/PID/stat and the process's owner.
type procStat struct {
	state string
	ppid  int
	pgrp  int
	start uint64 // field 22: start time in clock ticks after boot
	uid   int    // owner of /proc/PID: the process's real uid
}

func readStat(pid int) (procStat, bool) {
	if pid <= 0 {
		return procStat{}, false
	}
	dir := "/proc/" + strconv.Itoa(pid)
	data, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return procStat{}, false
	}
	st, ok := statFields(data)
	if !ok {
		return st, false
	}
	var s syscall.Stat_t
	if err := syscall.Stat(dir, &s); err != nil {
		return st, false
	}
	st.uid = int(s.Uid)
	return st, true
}

// statFields parses /proc/PID/stat; the command name may hold spaces and
// parentheses, so fields are counted after the last ')'.
func statFields(data []byte) (procStat, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procStat{state: f[0], ppid: ppid, pgrp: pgrp, start: start}, true
}

// bootID is the kernel's id of this boot; "" when it cannot be read.
func bootID() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// startTime is pid's start time, 0 when it cannot be read.
func startTime(pid int) uint64 {
	st, _ := readStat(pid)
	return st.start
}

// owner is a lab's identity as far as signalling goes: its directory, its
// account and the boot its pids belong to.
type owner struct {
	dir    string  // "" scans recorded groups only
	uids   []int   // the lab's accounts; only their processes are ever signalled
	bootID string  // "" for a lab whose boot is unknown: no recorded pid is trusted
	limits *Limits // its cgroup is removed with the lab
}

func (o owner) ownedBy(uid int) bool {
	for _, u := range o.uids {
		if u == uid {
			return true
		}
	}
	return false
}

func (l *Lab) owner() owner {
	uids := []int{l.UID}
	if l.DBUser != "" {
		uids = append(uids, l.DBUID)
	}
	return owner{dir: l.Dir, uids: uids, bootID: l.BootID, limits: &l.Limits}
}

// verified reports whether p still is the process that was recorded: same
// boot, same start time, the lab's account.
func (o owner) verified(p Process) bool {
	if o.bootID == "" || o.bootID != bootID() || p.StartTime == 0 {
		return false
	}
	st, ok := readStat(p.PID)
	return ok && st.start == p.StartTime && o.ownedBy(st.uid) && st.state != "Z"
}

// LiveProcesses are the lab's recorded processes that are still the ones
// that were recorded (same boot, start time and account): what an
// observer may read, never a later process that got a recorded pid.
func (l *Lab) LiveProcesses() []Process {
	o := l.owner()
	var out []Process
	for _, p := range l.Processes {
		if o.verified(p) {
			out = append(out, p)
		}
	}
	return out
}

// procRef is a process as a scan found it: its pid and start time.
type procRef struct {
	pid   int
	start uint64
}

// labRefs finds every live process that belongs to the lab: members of
// a recorded process group whose leader is verified (or, the leader gone,
// that started after it in the same boot), and processes whose command line
// names the lab directory (a master started just before phptune was killed,
// whose pid was never recorded). Only processes of the lab's account count;
// phptune itself and its parents never do.
func labRefs(o owner, procs []Process) []procRef {
	skip := ancestors()
	sameBoot := o.bootID != "" && o.bootID == bootID()
	groups := map[int]uint64{} // pgid -> earliest start of a member
	for _, p := range procs {
		if p.PID <= 0 || !sameBoot || p.StartTime == 0 {
			continue
		}
		if st, ok := readStat(p.PID); ok && st.start != p.StartTime {
			continue // the pid now belongs to a later process
		}
		groups[p.PID] = p.StartTime
	}
	entries, _ := os.ReadDir("/proc")
	var out []procRef
	marker := []byte(o.dir + "/")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.state == "Z" || !o.ownedBy(st.uid) {
			continue
		}
		start, inGroup := groups[st.pgrp]
		match := inGroup && st.start >= start
		if !match && o.dir != "" {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			match = bytes.Contains(cmd, marker)
		}
		if match {
			out = append(out, procRef{pid, st.start})
		}
	}
	return out
}

// ancestors returns this process and its parents, which a scan by command
// line must never kill (a shell script may well name the lab directory).
func ancestors() map[int]bool {
	out := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !out[pid]; {
		out[pid] = true
		st, ok := readStat(pid)
		if !ok {
			break
		}
		pid = st.ppid
	}
	return out
}

// killAll stops every process of the lab: SIGTERM, then SIGKILL for
// whatever is still there after the grace period, and reports what survived
// (nothing, unless the kernel refuses).
func killAll(o owner, procs []Process, grace time.Duration) []int {
	refs := labRefs(o, procs)
	if len(refs) == 0 {
		return nil
	}
	for _, p := range procs {
		// A server whose SIGTERM waits for its clients (see stopSignals)
		// gets its own signal first.
		if sig, ok := stopSignals[p.Component]; ok {
			for _, r := range refs {
				if r.pid == p.PID {
					signalAll(o, []procRef{r}, sig)
				}
			}
		}
	}
	signalAll(o, refs, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if refs = labRefs(o, procs); len(refs) == 0 {
			return nil
		}
	}
	signalAll(o, refs, syscall.SIGKILL)
	for i := 0; i < 40; i++ {
		time.Sleep(50 * time.Millisecond)
		if refs = labRefs(o, procs); len(refs) == 0 {
			return nil
		}
	}
	out := make([]int, len(refs))
	for i, r := range refs {
		out[i] = r.pid
	}
	return out
}

// signalAll signals each process found by labRefs, and the group of each
// that leads one, so workers forked after the scan die with it. Each is
// held by a pidfd and checked again (start time, account) before the
// signal goes through that pidfd: a pid reused between the scan and the
// signal is never hit.
func signalAll(o owner, refs []procRef, sig syscall.Signal) {
	for _, r := range refs {
		fd, err := unix.PidfdOpen(r.pid, 0)
		if err != nil {
			continue // gone
		}
		st, ok := readStat(r.pid)
		if ok && st.start == r.start && o.ownedBy(st.uid) {
			if st.pgrp == r.pid {
				// A group id is not reused while any member lives; the
				// window between this check and the kill is the one
				// left (the pidfd covers the process itself).
				_ = syscall.Kill(-r.pid, sig)
			}
			_ = unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		unix.Close(fd)
	}
}
