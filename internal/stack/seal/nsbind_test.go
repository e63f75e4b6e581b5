package seal

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnshareBoundInsideAMountNamespace: inside a mount namespace made on
// the last CPU (as under a container or test/realserver.sh), binding a new
// mount namespace to a file fails with EINVAL on a CPU whose namespace ids
// are behind (Linux 6.18's per-CPU ids); unshareBound finds the CPU where
// it takes, every time. Two site tests of the real-server tier failed on this.
func TestUnshareBoundInsideAMountNamespace(t *testing.T) {
	if os.Getenv("PHPTUNE_NSBIND_CHILD") == "1" {
		nsBindChild(t)
		return
	}
	needRoot(t)
	cpus := allowedCPUs()
	if len(cpus) == 0 {
		t.Skip("no CPU affinity to read")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The outer namespace is made on each CPU in turn: on one of them the
	// child's plain unshare is behind.
	for _, cpu := range cpus {
		// Only the namespace is made on cpu; the test runs on them all.
		cmd := exec.Command(tool("taskset"), "--cpu-list", strconv.Itoa(cpu), tool("unshare"), "--mount", "--propagation", "private", "--",
			tool("taskset"), "--cpu-list", cpuList(cpus), exe, "-test.run", "^TestUnshareBoundInsideAMountNamespace$", "-test.v")
		cmd.Env = append(os.Environ(), "PHPTUNE_NSBIND_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "6 of 6 bound") {
			t.Errorf("outer namespace made on CPU %d: %v\n%s", cpu, err, out)
		}
	}
}

// nsBindChild binds six new mount namespaces, one after the other, each
// from a thread that may run on any CPU.
func nsBindChild(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mnt")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	undo := func() { _ = unix.Unmount(file, unix.MNT_DETACH) }
	bound := 0
	for i := 0; i < 6; i++ {
		err := unshareBound(context.Background(), func() io.Reader { return strings.NewReader("") }, undo,
			"--mount="+file, "--propagation", "private", "--", tool("true"))
		if err != nil {
			t.Errorf("try %d: %v", i, err)
			continue
		}
		bound++
		undo()
	}
	t.Logf("%d of 6 bound", bound)
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
