package livehost

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFPMService: systemctl reloads only the master a service runs as its
// main process, on the host itself under systemd.
func TestFPMService(t *testing.T) {
	cases := []struct {
		name    string
		root    string
		systemd bool
		unit    string
		mainPID int
		want    string
	}{
		{"the service's master", "/", true, "php8.2-fpm", 100, "php8.2-fpm"},
		{"a copy under --root", "/srv/copy", true, "php8.2-fpm", 100, ""},
		{"no systemd", "/", false, "php8.2-fpm", 100, ""},
		{"started by hand, in a session", "/", true, "", 0, ""},
		{"--fpm-config of another master while the unit runs", "/", true, "php8.2-fpm", 42, ""},
		{"a child of another service", "/", true, "gitlab-runner", 7, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FPMService(c.root, c.systemd, c.unit, c.mainPID, 100); got != c.want {
				t.Errorf("FPMService = %q, want %q", got, c.want)
			}
		})
	}
}

// TestSystemdUnitFromCgroup reads the unit from a master's cgroup file.
func TestSystemdUnitFromCgroup(t *testing.T) {
	cases := map[string]string{
		"0::/system.slice/php8.2-fpm.service\n":                 "php8.2-fpm",
		"0::/user.slice/user-0.slice/session-3.scope\n":         "",
		"12:pids:/system.slice/nginx.service\n0::/init.scope\n": "nginx",
	}
	for cgroup, want := range cases {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "100"), 0o755)
		os.WriteFile(filepath.Join(dir, "100", "cgroup"), []byte(cgroup), 0o644)
		if got := SystemdUnit(dir, 100); got != want {
			t.Errorf("%q: unit %q, want %q", cgroup, got, want)
		}
	}
}
