package livehost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/watch/proc"
)

func TestStatusUIDs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want [4]int
		ok   bool
	}{
		{"Name:\tnginx\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n", [4]int{0, 0, 0, 0}, true},
		{"Uid:\t65534\t0\t0\t0\n", [4]int{65534, 0, 0, 0}, true},
		{"Uid:\t0\t0\t0\n", [4]int{}, false},
		{"Uid:\t0\t0\tx\t0\n", [4]int{}, false},
		{"Uid:\t-1\t0\t0\t0\n", [4]int{}, false},
		{"Name:\tnginx\n", [4]int{}, false},
	} {
		got, err := statusUIDs([]byte(tt.in))
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("statusUIDs(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzStatusUIDs(f *testing.F) {
	f.Add([]byte("Name:\tnginx\nUid:\t0\t0\t0\t0\n"))
	f.Add([]byte("Uid:\t33\t33\t33\t33\nUid:\t0\t0\t0\t0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		uids, err := statusUIDs(b)
		if err != nil {
			return
		}
		for _, u := range uids {
			if u < 0 {
				t.Fatalf("negative uid %v from %q", uids, b)
			}
		}
	})
}

// TestSameMountNamespace: a server in another mount namespace (a
// container's, a sealed lab's) is not this host's; a plain child is.
func TestSameMountNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a mount namespace needs root")
	}
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv  []string
		other bool
	}{
		{[]string{"sleep", "5"}, false},
		{[]string{"unshare", "--mount", "--propagation", "private", "sleep", "5"}, true},
	} {
		cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
		if err := cmd.Start(); err != nil {
			t.Skip(err)
		}
		// unshare execs sleep once the namespace exists.
		var err error
		for i := 0; i < 100; i++ {
			if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "comm")); strings.TrimSpace(string(b)) == "sleep" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		err = sameMountNamespace(fs, cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		if (err != nil) != tc.other {
			t.Errorf("%v: %v", tc.argv, err)
		}
	}
}
