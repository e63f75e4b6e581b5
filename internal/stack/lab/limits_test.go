package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCPUSet(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  string
	}{
		{"0", []int{0}, ""},
		{"0-1", []int{0, 1}, ""},
		{" 0 ", []int{0}, ""},
		{"", nil, "give a CPU list"},
		{"1-0", nil, "not a CPU number or range"},
		{"x", nil, "not a CPU number or range"},
		{"4096", nil, "not a CPU number or range"},
		{"999", nil, "not online"},
	} {
		set, err := CPUSet(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("CPUSet(%q) = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("CPUSet(%q): %v", c.in, err)
			continue
		}
		for _, cpu := range c.want {
			if !set.IsSet(cpu) {
				t.Errorf("CPUSet(%q) lacks CPU %d", c.in, cpu)
			}
		}
		if set.Count() != len(c.want) {
			t.Errorf("CPUSet(%q) has %d CPUs, want %d", c.in, set.Count(), len(c.want))
		}
	}
}

// TestCapsHoldForEveryProcess: --cpus and --memory-max reach every process
// of the lab (including the workers forked later), and the cgroup goes with
// the lab.
func TestCapsHoldForEveryProcess(t *testing.T) {
	rootOnly(t)
	testHome(t)
	if _, err := Up(context.Background(), Options{Name: "tiny", App: "hello", MemoryMax: 1 << 20}); err == nil || !strings.Contains(err.Error(), "at least 64M") {
		t.Fatalf("a 1 MiB cap: %v", err)
	}
	l, err := Up(context.Background(), Options{Name: "capped", App: "io", CPUs: "0", MemoryMax: 512 << 20, Set: []string{"pm=static", "pm.max_children=3"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("enforced by %v in %s", l.Limits.Enforced, l.Limits.Cgroup)
	if l.Limits.Cgroup == "" {
		t.Fatal("no cgroup for a memory cap")
	}
	limitFile := "memory.max"
	if !strings.HasSuffix(filepath.Dir(l.Limits.Cgroup), "/phptune") {
		limitFile = "memory.limit_in_bytes"
	}
	if data, err := os.ReadFile(filepath.Join(l.Limits.Cgroup, limitFile)); err != nil || strings.TrimSpace(string(data)) != "536870912" {
		t.Errorf("%s = %q (%v)", limitFile, data, err)
	}
	pids := labProcesses(l.owner(), l.Processes)
	if len(pids) < 6 { // nginx master + workers, fpm master + 3, mariadbd
		t.Fatalf("only %d lab processes", len(pids))
	}
	cgName := filepath.Base(l.Limits.Cgroup)
	for _, pid := range pids {
		status, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "status"))
		if !strings.Contains(string(status), "Cpus_allowed_list:\t0\n") {
			t.Errorf("pid %d is not pinned to CPU 0", pid)
		}
		cg, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "cgroup"))
		if !strings.Contains(string(cg), cgName) {
			t.Errorf("pid %d is not in the lab's cgroup %s: %s", pid, cgName, cg)
		}
	}
	// phptune itself left the cgroup and the pinning behind.
	if cg, _ := os.ReadFile("/proc/self/cgroup"); strings.Contains(string(cg), cgName) {
		t.Error("phptune stayed in the lab's cgroup")
	}
	if code, _ := get(t, l.URL+"/"); code != 200 {
		t.Errorf("capped lab GET / = %d", code)
	}
	if err := Down(l.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Limits.Cgroup); !os.IsNotExist(err) {
		t.Errorf("the lab's cgroup %s is still there: %v", l.Limits.Cgroup, err)
	}
}

// TestNeighboursSeesAServerOutsideLabs starts a php-fpm-named process
// outside any lab and a lab beside it: only the former is a neighbour.
func TestNeighboursSeesAServerOutsideLabs(t *testing.T) {
	testHome(t)
	l, err := Up(context.Background(), Options{Name: "nb", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	// A "system" nginx: sleep under that name, outside the labs.
	bin := filepath.Join(t.TempDir(), "nginx")
	data, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Skip(err)
	}
	os.WriteFile(bin, data, 0o755)
	sys := exec.Command(bin, "60")
	if err := sys.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sys.Process.Kill(); sys.Wait() }()
	want := fmt.Sprintf("nginx (pid %d, 1 process)", sys.Process.Pid)
	found := false
	for _, n := range Neighbours() {
		found = found || n == want
		if strings.HasPrefix(n, "nginx") || strings.HasPrefix(n, "php-fpm") {
			// Only a system server may be listed; the lab's never.
			for _, p := range l.Processes {
				if strings.Contains(n, "pid "+itoa(p.PID)+",") {
					t.Errorf("the lab's own %s listed as a neighbour: %s", p.Component, n)
				}
			}
		}
	}
	if !found {
		t.Errorf("Neighbours() = %v, want it to list %s", Neighbours(), want)
	}
}

// Two homes may each hold a lab of the same name: their cgroups differ, so
// starting one never empties the other's.
func TestCgroupNameIsPerDirectory(t *testing.T) {
	a, b := cgroupName("demo", "/var/lib/phptune/labs/demo"), cgroupName("demo", "/tmp/phptune-test-1/labs/demo")
	if a == b || !strings.HasPrefix(a, "demo-") || cgroupName("demo", "/var/lib/phptune/labs/demo") != a {
		t.Errorf("cgroupName: %q and %q", a, b)
	}
}

// TestKillListedSignalsOnlyWhatTheCgroupStillLists: a pid the first read
// of cgroup.procs listed but the second does not (the process left, its
// number perhaps given to another) is not signalled; one still listed is
// killed. The cgroup is a directory holding a cgroup.procs file, as
// cgroupProcs reads it.
func TestKillListedSignalsOnlyWhatTheCgroupStillLists(t *testing.T) {
	dir := t.TempDir()
	in, out := exec.Command("sleep", "30"), exec.Command("sleep", "30")
	for _, c := range []*exec.Cmd{in, out} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer c.Process.Kill()
	}
	os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(itoa(in.Process.Pid)+"\n"), 0o644)
	killListed(dir, []int{in.Process.Pid, out.Process.Pid})
	if err := in.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the listed process: %v, want killed", err)
	}
	if err := out.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process no longer listed was signalled: %v", err)
	}
}
