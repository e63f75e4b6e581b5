package testhome

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAbandoned(t *testing.T) {
	now := time.Now()
	home := func(t *testing.T) string { return t.TempDir() }
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		want   bool
		reason string
		err    string
	}{
		{"this process", func(t *testing.T, dir string) {
			if err := Stamp(dir); err != nil {
				t.Fatal(err)
			}
		}, false, "", ""},
		{"a process that exited", func(t *testing.T, dir string) {
			c := exec.Command("sleep", "30")
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			if err := StampFor(dir, c.Process.Pid); err != nil {
				t.Fatal(err)
			}
			c.Process.Kill()
			c.Wait()
		}, true, "is gone", ""},
		{"a PID now of another process", func(t *testing.T, dir string) {
			write(t, dir, fmt.Sprintf("%d 1 %s\n", os.Getpid(), myNS(t)))
		}, true, "now names another process", ""},
		{"another PID namespace", func(t *testing.T, dir string) {
			write(t, dir, "999999 1 pid:[1]\n")
		}, false, "", ""},
		{"no stamp, recent", func(t *testing.T, dir string) {}, false, "", ""},
		{"no stamp, old", func(t *testing.T, dir string) {
			old := now.Add(-UnstampedAge - time.Minute)
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
		}, true, "no owner stamp", ""},
		{"a garbled stamp", func(t *testing.T, dir string) { write(t, dir, "x\n") }, false, "", "is not"},
		{"a bad PID", func(t *testing.T, dir string) { write(t, dir, "-4 1 pid:[1]\n") }, false, "", "has PID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := home(t)
			c.setup(t, dir)
			got, why, err := Abandoned(dir, now)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want || !strings.Contains(why, c.reason) {
				t.Fatalf("Abandoned = %v %q %v, want %v %q", got, why, err, c.want, c.reason)
			}
		})
	}
}

func write(t *testing.T, dir, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func myNS(t *testing.T) string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}
