// Package hosttest makes "a host in a directory" for tests: Debian's own
// php-fpm configuration (/etc/php/VERSION/fpm: php-fpm.conf, pool.d/www.conf,
// conf.d) copied under a temporary root with its paths moved into it, the
// status page turned on, and its master started for real, as root with the
// pool running as www-data, as on a Debian host.
package hosttest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/servers/phpfpm"
)

// Host is a started copy.
type Host struct {
	Root    string
	Version string // "8.2"
	Conf    string // ROOT/etc/php/VERSION/fpm/php-fpm.conf
	PoolDir string // ROOT/etc/php/VERSION/fpm/pool.d
	IniDir  string // ROOT/etc/php/VERSION/fpm/conf.d
	PidFile string
	Socket  string // the www pool's socket
	Binary  string
	// Files holds every file of the copy as it was before the test, to
	// check it is byte-identical afterwards.
	Files Files
	nginx *NginxHost // when Nginx copied and started nginx
}

// Debian copies the installed php-fpm's configuration under a temporary
// root and starts its master. It skips the test without root or php-fpm,
// and stops every process of the copy when the test ends.
//
// edits, when given, change www.conf's text before the master starts.
func Debian(t testing.TB, edits ...func(www string) string) *Host {
	t.Helper()
	if testing.Short() {
		t.Skip("starts php-fpm; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("a host's php-fpm master runs as root")
	}
	bin, err := phpfpm.Find()
	if err != nil {
		t.Skip(err)
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	v := bin.Version
	etc := filepath.Join(root, "etc", "php", v, "fpm")
	h := &Host{Root: root, Version: v, Conf: filepath.Join(etc, "php-fpm.conf"), PoolDir: filepath.Join(etc, "pool.d"),
		IniDir: filepath.Join(etc, "conf.d"), PidFile: filepath.Join(root, "run", "php", "php"+v+"-fpm.pid"),
		Socket: filepath.Join(root, "run", "php", "php"+v+"-fpm.sock"), Binary: bin.Path, Files: map[string][]byte{}}
	for _, d := range []string{h.PoolDir, h.IniDir, filepath.Dir(h.PidFile), filepath.Join(root, "var", "log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := "/etc/php/" + v + "/fpm"
	move := func(b []byte) []byte {
		s := strings.ReplaceAll(string(b), "/run/php/", root+"/run/php/")
		s = strings.ReplaceAll(s, "/var/log/", root+"/var/log/")
		s = strings.ReplaceAll(s, src+"/", etc+"/")
		return []byte(s)
	}
	conf, err := os.ReadFile(filepath.Join(src, "php-fpm.conf"))
	if err != nil {
		t.Skip(err)
	}
	www, err := os.ReadFile(filepath.Join(src, "pool.d", "www.conf"))
	if err != nil {
		t.Skip(err)
	}
	www = bytes.Replace(move(www), []byte(";pm.status_path = /status"), []byte("pm.status_path = /status"), 1)
	for _, edit := range edits {
		www = []byte(edit(string(www)))
	}
	h.Files.write(t, h.Conf, move(conf))
	h.Files.write(t, filepath.Join(h.PoolDir, "www.conf"), www)
	// conf.d holds links to mods-available: the copy holds their content.
	inis, _ := filepath.Glob(filepath.Join(src, "conf.d", "*.ini"))
	for _, ini := range inis {
		b, err := os.ReadFile(ini)
		if err != nil {
			t.Fatal(err)
		}
		h.Files.write(t, filepath.Join(h.IniDir, filepath.Base(ini)), b)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	return h
}

// Env is the master's environment beyond the inherited one: the copy's
// conf.d instead of the compiled-in one.
func (h *Host) Env() []string { return []string{"PHP_INI_SCAN_DIR=" + h.IniDir} }

// Start starts the master (it daemonizes, as Debian's does without
// systemd) and waits for its socket.
func (h *Host) Start() error {
	cmd := exec.Command(h.Binary, "-y", h.Conf)
	cmd.Env = append(os.Environ(), h.Env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("starting php-fpm: %v: %s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(h.Socket); err == nil && h.hasWorker() {
			return nil
		}
	}
	return fmt.Errorf("php-fpm made no socket %s or no worker within 10s", h.Socket)
}

// hasWorker reports whether a worker of the copy's master runs with its
// pool's title: a test reading the pool right after the socket appears
// could otherwise find the master alone (it forks the workers after it
// listens), or a child that still has the master's title.
func (h *Host) hasWorker() bool {
	title := []byte("php-fpm: master process (" + h.Conf + ")")
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		dir := filepath.Dir(st)
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if !bytes.HasPrefix(cmd, []byte("php-fpm: pool ")) {
			continue
		}
		b, _ := os.ReadFile(st)
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		parent, _ := os.ReadFile("/proc/" + f[1] + "/cmdline")
		if bytes.HasPrefix(parent, title) {
			return true
		}
	}
	return false
}

// Stop ends every master of the copy's configuration, and with them
// their workers.
func (h *Host) Stop() { StopMasters(h.Conf) }

// StopMasters ends every php-fpm master started with conf (found by its
// title in /proc, not only by a pid file a failed reload can leave stale)
// and, with them, their workers.
func StopMasters(conf string) {
	title := []byte("php-fpm: master process (" + conf + ")")
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		b, _ := os.ReadFile(c)
		if !bytes.HasPrefix(b, title) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		syscall.Kill(pid, syscall.SIGQUIT)
		for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Unchanged reports the first file of the copy that is not byte-identical
// to what it was, and the first file added to pool.d or conf.d (php's,
// and nginx's when it runs).
func (h *Host) Unchanged() error {
	dirs := []string{h.PoolDir, h.IniDir}
	if h.nginx != nil {
		dirs = append(dirs, h.nginx.ConfDir)
	}
	return h.Files.unchanged(dirs...)
}
