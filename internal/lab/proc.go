package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// alive reports whether pid runs and is not a zombie. kill(pid, 0) alone
// would count zombies, which a test process may hold until it reaps them.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, ok := statFields(data)
	return ok && st.state != "Z" && st.state != "X"
}

type procStat struct {
	state string
	ppid  int
	pgrp  int
}

// statFields parses /proc/PID/stat; the command name may hold spaces and
// parentheses, so fields are counted after the last ')'.
func statFields(data []byte) (procStat, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 3 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return procStat{state: f[0], ppid: ppid, pgrp: pgrp}, true
}

// labProcesses finds every live process that belongs to the lab in dir: the
// members of the recorded process groups, and any process whose command line
// names the lab directory (a master started just before phptune was killed,
// whose pid was never recorded). An empty dir scans the groups only.
func labProcesses(dir string, groups []int) []int {
	skip := ancestors()
	want := map[int]bool{}
	for _, g := range groups {
		if g > 0 {
			want[g] = true
		}
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	seen := map[int]bool{}
	marker := []byte(dir + "/")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		st, ok := statFields(data)
		if !ok || st.state == "Z" {
			continue
		}
		match := want[st.pgrp]
		if !match && dir != "" {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			match = bytes.Contains(cmd, marker)
		}
		if match && !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
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
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			break
		}
		st, ok := statFields(data)
		if !ok {
			break
		}
		pid = st.ppid
	}
	return out
}

// killAll stops every process of the lab: SIGTERM to each process group,
// then SIGKILL for whatever is still there after the grace period, and
// reports what survived (nothing, unless the kernel refuses).
func killAll(dir string, groups []int, grace time.Duration) []int {
	pids := labProcesses(dir, groups)
	if len(pids) == 0 {
		return nil
	}
	signalAll(pids, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if pids = labProcesses(dir, groups); len(pids) == 0 {
			return nil
		}
	}
	signalAll(pids, syscall.SIGKILL)
	for i := 0; i < 40; i++ {
		time.Sleep(50 * time.Millisecond)
		if pids = labProcesses(dir, groups); len(pids) == 0 {
			return nil
		}
	}
	return pids
}

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		// The group first: workers forked after the scan die with it.
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			_ = syscall.Kill(-pid, sig)
		}
		_ = syscall.Kill(pid, sig)
	}
}
