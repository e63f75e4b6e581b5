package livehost

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/watch/proc"
)

// TestOneTrustRule: every kind of server phptune finds in /proc (php-fpm,
// nginx, Apache, MariaDB) is trusted by the same rule. A process of uid 0
// titled as the server is refused when its binary is not the server's
// (a copy of cat named cat) and when it runs in another mount namespace
// (a copy of cat named as the server, in a namespace of its own); the
// same copy in this namespace is found, so the finder can find one.
func TestOneTrustRule(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the processes run as uid 0, one in a mount namespace of its own")
	}
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "server.conf")
	kinds := []struct {
		kind  string
		bin   string // the copy of cat's name: the server's binary's
		title string // argv[0]: the title the finder looks for
		found func() ([]int, error)
	}{
		{"php-fpm", "php-fpm-trust", "php-fpm: master process (" + conf + ")", func() ([]int, error) {
			ms, err := Masters(fs)
			var pids []int
			for _, m := range ms {
				pids = append(pids, m.PID)
			}
			return pids, err
		}},
		{"nginx", "nginx-trust", "nginx: master process /usr/sbin/nginx -c " + conf, func() ([]int, error) {
			ms, err := NginxMasters(fs)
			var pids []int
			for _, m := range ms {
				pids = append(pids, m.PID)
			}
			return pids, err
		}},
		{"apache", "apache2-trust", "/usr/sbin/apache2", func() ([]int, error) { return ApacheMasters(fs) }},
		{"mariadb", "mariadbd-trust", "/usr/sbin/mariadbd", func() ([]int, error) {
			ss, err := MariaDBServers(fs, "/")
			var pids []int
			for _, s := range ss {
				pids = append(pids, s.PID)
			}
			return pids, err
		}},
	}
	cat, err := os.ReadFile("/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "trust-rule-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(bin, title string, attr *syscall.SysProcAttr) int {
		cmd := &exec.Cmd{Path: bin, Args: []string{title}, SysProcAttr: attr}
		if _, err := cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			bin := filepath.Join(dir, k.bin)
			if err := os.WriteFile(bin, cat, 0o755); err != nil {
				t.Fatal(err)
			}
			refused := map[string]int{
				"a binary that is not the server's": start("/bin/cat", k.title, nil),
				"another mount namespace":           start(bin, k.title, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}),
			}
			trusted := start(bin, k.title, nil)
			var pids []int
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if pids, err = k.found(); err == nil && slices.Contains(pids, trusted) {
					break
				}
			}
			if !slices.Contains(pids, trusted) {
				t.Fatalf("the copy named %s run as root in this namespace was not found (%v, %v): the finder must be able to find one", k.bin, pids, err)
			}
			for why, pid := range refused {
				if slices.Contains(pids, pid) {
					t.Errorf("a uid-0 process titled %q with %s (pid %d) was trusted", k.title, why, pid)
				}
			}
		})
	}
}
