package lab

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/base/cpulist"
)

// Labs beside production: an operator may run a lab on the machine that
// serves their site. --cpus and --memory-max cap every process of the lab.
//
//   - --cpus pins each process with CPU affinity, inherited by everything
//     it forks; on cgroup v2 the lab's cgroup also gets cpuset.cpus, which
//     the lab's code cannot widen (with affinity alone a hostile process
//     could widen its own, and phptune says so).
//   - --memory-max puts the lab in a cgroup of its own with memory.max (v2)
//     or memory.limit_in_bytes (v1's memory controller); without either,
//     the cap is refused with the reason rather than silently not applied.
//
// Every process is started already inside the cgroup (v2: clone into it;
// v1: the forking thread joins it for the fork and leaves right after), so
// none runs uncapped for a moment. Run as root, every lab gets such a
// cgroup even without caps: nothing forked in a lab can leave it (the lab's
// account cannot write cgroup files), so `lab down` finds and kills every
// process the lab ever started, even one that renamed itself and left its
// session.

// Limits are a lab's caps; the zero value caps nothing.
type Limits struct {
	CPUs       string `json:"cpus,omitempty"` // "0-1,3"
	MemoryMaxB int64  `json:"memory_max_bytes,omitempty"`
	// Enforced says how: "cgroup v2", "cgroup v1 memory", "cpu affinity".
	Enforced []string `json:"enforced,omitempty"`
	// Cgroup is the lab's cgroup directory, removed with the lab; Track
	// asks for one without caps (every root lab where cgroups exist).
	Cgroup string `json:"cgroup,omitempty"`
	Track  bool   `json:"track,omitempty"`
}

// CPUSet reads a lab's --cpus ("0", "0-1,3") with cpulist.Parse and checks
// every CPU is online.
func CPUSet(s string) (unix.CPUSet, error) {
	var set unix.CPUSet
	cpus, err := cpulist.Parse(s)
	if err != nil {
		return set, fmt.Errorf("--cpus: %w", err)
	}
	online, text, onlineErr := cpulist.Online()
	for _, c := range cpus {
		if onlineErr == nil && !slices.Contains(online, c) {
			return set, fmt.Errorf("--cpus %q: CPU %d is not online here (online: %s)", s, c, text)
		}
		set.Set(c)
	}
	return set, nil
}

// cgroup layouts found on the machine.
const (
	cgroupV2Root = "/sys/fs/cgroup"
	cgroupV1Mem  = "/sys/fs/cgroup/memory"
)

func cgroupV2() bool {
	data, err := os.ReadFile(filepath.Join(cgroupV2Root, "cgroup.controllers"))
	return err == nil && strings.Contains(" "+string(data)+" ", " memory ")
}

// ownCgroupV1 is this process's path in v1's memory hierarchy.
func ownCgroupV1() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 {
			for _, c := range strings.Split(parts[1], ",") {
				if c == "memory" {
					return parts[2], nil
				}
			}
		}
	}
	return "", errors.New("no memory controller in /proc/self/cgroup")
}

// planLimits checks that the caps asked for can be enforced here, before
// anything starts: a cap that would not hold is refused with the reason.
func planLimits(cpus string, memMax int64, root bool) (Limits, error) {
	lim := Limits{CPUs: cpus, MemoryMaxB: memMax}
	if cpus != "" {
		if _, err := CPUSet(cpus); err != nil {
			return lim, err
		}
	}
	if memMax != 0 && memMax < 64<<20 {
		return lim, fmt.Errorf("--memory-max %d bytes: give at least 64M (nginx, php-fpm and MariaDB need more to start)", memMax)
	}
	if root {
		_, v1err := os.Stat(filepath.Join(cgroupV1Mem, "memory.limit_in_bytes"))
		lim.Track = cgroupV2() || v1err == nil
	}
	if memMax == 0 && cpus == "" {
		return lim, nil
	}
	if memMax != 0 && !root {
		return lim, errors.New("--memory-max needs root (phptune makes a cgroup for the lab); run as root, or leave --memory-max out")
	}
	switch {
	case root && cgroupV2():
		lim.Enforced = []string{"cgroup v2"}
	case memMax != 0:
		if _, err := os.Stat(filepath.Join(cgroupV1Mem, "memory.limit_in_bytes")); err != nil {
			return lim, errors.New("--memory-max: this machine has neither cgroup v2's memory controller nor v1's (/sys/fs/cgroup/memory); the cap could not be enforced, so it is refused; leave --memory-max out")
		}
		lim.Enforced = []string{"cgroup v1 memory"}
	}
	if cpus != "" && (len(lim.Enforced) == 0 || lim.Enforced[0] != "cgroup v2") {
		lim.Enforced = append(lim.Enforced, "cpu affinity")
	}
	return lim, nil
}

// makeCgroup creates the lab's cgroup and writes its caps. A cgroup only
// for tracking that cannot be made (a read-only cgroup tree in a
// container) is done without: the scans by group and command line remain.
func (lim *Limits) makeCgroup(name string) error {
	err := lim.makeCgroupOrFail(name)
	if err != nil && lim.MemoryMaxB == 0 && lim.CPUs == "" {
		lim.Cgroup, lim.Track = "", false
		return nil
	}
	return err
}

func (lim *Limits) makeCgroupOrFail(name string) error {
	if !lim.Track && lim.MemoryMaxB == 0 && (lim.CPUs == "" || !contains(lim.Enforced, "cgroup v2")) {
		return nil
	}
	if cgroupV2() {
		parent := filepath.Join(cgroupV2Root, "phptune")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("making the labs' cgroup: %v", err)
		}
		for _, d := range []string{cgroupV2Root, parent} {
			for _, c := range []string{"+memory", "+cpuset"} {
				_ = os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte(c), 0)
			}
		}
		lim.Cgroup = filepath.Join(parent, name)
		if err := freshCgroup(lim.Cgroup); err != nil {
			return err
		}
		if lim.MemoryMaxB > 0 {
			if err := os.WriteFile(filepath.Join(lim.Cgroup, "memory.max"), []byte(strconv.FormatInt(lim.MemoryMaxB, 10)), 0); err != nil {
				return fmt.Errorf("setting memory.max: %v", err)
			}
			_ = os.WriteFile(filepath.Join(lim.Cgroup, "memory.swap.max"), []byte("0"), 0)
		}
		if lim.CPUs != "" && contains(lim.Enforced, "cgroup v2") {
			if err := os.WriteFile(filepath.Join(lim.Cgroup, "cpuset.cpus"), []byte(lim.CPUs), 0); err != nil {
				return fmt.Errorf("setting cpuset.cpus: %v", err)
			}
		}
		return nil
	}
	own, err := ownCgroupV1()
	if err != nil {
		return err
	}
	lim.Cgroup = filepath.Join(cgroupV1Mem, own, "phptune-"+name)
	if err := freshCgroup(lim.Cgroup); err != nil {
		return err
	}
	if lim.MemoryMaxB == 0 {
		return nil
	}
	if err := os.WriteFile(filepath.Join(lim.Cgroup, "memory.limit_in_bytes"), []byte(strconv.FormatInt(lim.MemoryMaxB, 10)), 0); err != nil {
		return fmt.Errorf("setting memory.limit_in_bytes: %v", err)
	}
	// Without swap accounting memsw may be absent; with it, no swapping
	// around the cap.
	_ = os.WriteFile(filepath.Join(lim.Cgroup, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(lim.MemoryMaxB, 10)), 0)
	return nil
}

// cgroupName names a lab's cgroup: its name and a digest of its directory,
// so labs of the same name in two phptune homes (PHPTUNE_HOME) never share
// one — a fresh lab empties a cgroup of its name, which would kill the
// other home's lab.
func cgroupName(name, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// freshCgroup makes the lab's cgroup; one left by an earlier lab of the
// same name is emptied (its processes killed) and reused.
func freshCgroup(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		if !os.IsExist(err) {
			return fmt.Errorf("making the lab's cgroup %s: %v", dir, err)
		}
		if left := killCgroup(dir); len(left) > 0 {
			return fmt.Errorf("the cgroup %s of an earlier lab of this name still holds processes %v that would not die", dir, left)
		}
	}
	return nil
}

// cgroupProcs lists the processes in a cgroup.
func cgroupProcs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// killCgroup kills every process in the cgroup (cgroup.kill on v2, else
// SIGKILL to each listed process, again until none is left) and returns
// what survived two seconds of it.
func killCgroup(dir string) []int {
	if dir == "" {
		return nil
	}
	// phptune itself is never in a lab's cgroup but for the instant a
	// thread forks into it (v1); should it be listed, it is spared.
	self := ancestors()
	if len(cgroupProcs(dir)) > 0 && !containsAny(cgroupProcs(dir), self) {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	}
	for i := 0; i < 40; i++ {
		var pids []int
		for _, pid := range cgroupProcs(dir) {
			if !self[pid] {
				pids = append(pids, pid)
			}
		}
		if len(pids) == 0 {
			return nil
		}
		killListed(dir, pids)
		time.Sleep(50 * time.Millisecond)
	}
	return cgroupProcs(dir)
}

// killListed sends SIGKILL to each of pids still in the cgroup dir, by
// pidfd: each is opened first, then the cgroup's list read again, so a
// number the kernel gave to another process since the first read is
// never signalled (the pidfd of a process gone fails instead).
func killListed(dir string, pids []int) {
	fds := map[int]int{}
	for _, pid := range pids {
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			fds[pid] = fd
		}
	}
	still := map[int]bool{}
	for _, pid := range cgroupProcs(dir) {
		still[pid] = true
	}
	for pid, fd := range fds {
		if still[pid] {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
		unix.Close(fd)
	}
}

func containsAny(pids []int, set map[int]bool) bool {
	for _, p := range pids {
		if set[p] {
			return true
		}
	}
	return false
}

// ours says whether dir is a cgroup phptune makes for labs.
func ours(dir string) bool {
	return strings.HasPrefix(dir, cgroupV2Root+"/phptune/") || (strings.HasPrefix(dir, cgroupV1Mem+"/") && strings.HasPrefix(filepath.Base(dir), "phptune-"))
}

// stopCgroup kills whatever is still in the lab's cgroup — a process that
// escaped the scans by leaving its session and renaming itself — and
// removes the cgroup; it returns the processes that survived.
func (lim *Limits) stopCgroup() []int {
	if lim.Cgroup == "" || !ours(lim.Cgroup) {
		return nil
	}
	if left := killCgroup(lim.Cgroup); len(left) > 0 {
		return left
	}
	_ = syscall.Rmdir(lim.Cgroup)
	return nil
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// startCapped starts cmd inside the lab's caps.
func (lim *Limits) startCapped(cmd *exec.Cmd) error {
	if lim.CPUs == "" && lim.Cgroup == "" {
		return cmd.Start()
	}
	if lim.Cgroup != "" && strings.HasPrefix(lim.Cgroup, cgroupV2Root+"/phptune/") {
		fd, err := syscall.Open(lim.Cgroup, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the lab's cgroup: %v", err)
		}
		defer syscall.Close(fd)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		return cmd.Start()
	}
	// The fork happens on this locked thread: give it the lab's affinity
	// and (v1) memory cgroup for the fork, then take both back.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	if lim.CPUs != "" {
		set, err := CPUSet(lim.CPUs)
		if err != nil {
			return err
		}
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			return err
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pinning to CPUs %s: %v", lim.CPUs, err)
		}
		defer unix.SchedSetaffinity(0, &old)
	}
	if lim.Cgroup != "" {
		own, err := ownCgroupV1()
		if err != nil {
			return err
		}
		back := filepath.Join(cgroupV1Mem, own, "tasks")
		if err := os.WriteFile(filepath.Join(lim.Cgroup, "tasks"), []byte(strconv.Itoa(tid)), 0); err != nil {
			return fmt.Errorf("joining the lab's memory cgroup: %v", err)
		}
		defer os.WriteFile(back, []byte(strconv.Itoa(tid)), 0)
	}
	return cmd.Start()
}
