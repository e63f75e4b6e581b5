package sockq

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestNetNSHelper is the listener of TestReaderInNetNS, run by it in a
// network namespace of its own; without SOCKQ_NETNS_LISTEN it does nothing.
func TestNetNSHelper(t *testing.T) {
	path := os.Getenv("SOCKQ_NETNS_LISTEN")
	if path == "" {
		return
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Stdout.WriteString("ready\n")
	// Until the test closes stdin.
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// TestReaderInNetNS: a unix listener made in another network namespace
// (as a sealed lab's servers make theirs) is absent from this namespace's
// table and found, with its queue, by a Reader given that namespace; and
// reading there leaves none of this process's threads in it.
func TestReaderInNetNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("entering a network namespace needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare (util-linux)")
	}
	path := filepath.Join(t.TempDir(), "ns.sock")
	cmd := exec.Command(unshare, "--net", os.Args[0], "-test.run=^TestNetNSHelper$")
	cmd.Env = append(os.Environ(), "SOCKQ_NETNS_LISTEN="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the listener in its namespace said %q, %v", line, err)
	}
	ns, err := os.Open(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "ns", "net"))
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	fill(t, "unix", path, 3)
	a := Addr{Network: "unix", Address: path}

	if ls, err := Unix(); err != nil || len(FindAll(ls, a)) != 0 {
		t.Fatalf("this namespace's table: %v, %v; want no %s", FindAll(ls, a), err, path)
	}
	r := Reader{NetNS: ns}
	l := waitQueued(t, func() ([]Listener, error) { return r.Listeners(true, true) }, a, 3)
	if l.Backlog <= 0 {
		t.Errorf("backlog %d, want > 0", l.Backlog)
	}
	for range 20 {
		if _, err := r.Listeners(true, true); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond) // the entering threads end with their goroutines
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		n, err := os.Readlink(filepath.Join("/proc/self/task", task.Name(), "ns", "net"))
		if err == nil && n != own {
			t.Errorf("thread %s is in %s, not this process's %s", task.Name(), n, own)
		}
	}
}
