package lab

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestReadPerfMapRefusesPlants: a perf map in /tmp is the lab account's
// file; a link planted at its name, or a file of another account, is
// refused without being read.
func TestReadPerfMapRefusesPlants(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("ownership checks are root's")
	}
	pid := 4000000 + os.Getpid()%100000 // above pid_max: no process writes this name
	name := fmt.Sprintf("/tmp/perf-%d.map", pid)
	t.Cleanup(func() { os.Remove(name) })
	l := &Lab{UID: 12345}
	if b, err := l.ReadPerfMap(pid); err != nil || b != nil {
		t.Fatalf("no map: %q, %v; want nothing and no error", b, err)
	}
	if err := os.Symlink("/etc/shadow", name); err != nil {
		t.Fatal(err)
	}
	if b, err := l.ReadPerfMap(pid); err == nil || len(b) > 0 {
		t.Fatalf("a link was followed: %q, %v", b, err)
	}
	os.Remove(name)
	if err := os.WriteFile(name, []byte("7f00 10 JIT$x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReadPerfMap(pid); err == nil || !strings.Contains(err.Error(), "owner uid 0") {
		t.Fatalf("root's file read as the lab's: %v", err)
	}
	if err := os.Chown(name, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	if b, err := l.ReadPerfMap(pid); err != nil || string(b) != "7f00 10 JIT$x\n" {
		t.Fatalf("the lab's own map: %q, %v", b, err)
	}
}
