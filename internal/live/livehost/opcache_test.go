package livehost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/watch/proc"
)

func TestOpcacheRefusal(t *testing.T) {
	sock := "unix:/run/php/php8.2-fpm.sock"
	for _, c := range []struct {
		name     string
		listen   string
		settings map[string]string
		want     string // "" for allowed
	}{
		{"plain", sock, map[string]string{}, ""},
		{"limit_extensions with .php", sock, map[string]string{"security.limit_extensions": ".php .php8"}, ""},
		{"limit_extensions without .php", sock, map[string]string{"security.limit_extensions": ".phtml"}, "security.limit_extensions = .phtml does not allow .php"},
		{"chroot", sock, map[string]string{"chroot": "/srv/site"}, "runs chrooted to /srv/site"},
		{"open_basedir including the dir", sock, map[string]string{"php_admin_value[open_basedir]": "/srv/site:/run/phptune"}, ""},
		{"open_basedir with a slash", sock, map[string]string{"php_admin_value[open_basedir]": "/run/phptune/"}, ""},
		{"open_basedir excluding the dir", sock, map[string]string{"php_admin_value[open_basedir]": "/srv/site:/tmp"}, "php_admin_value[open_basedir] = /srv/site:/tmp excludes /run/phptune"},
		// PHP's open_basedir is a prefix, not a directory, unless it ends in a slash.
		{"open_basedir a prefix", sock, map[string]string{"php_value[open_basedir]": "/run/php"}, ""},
		{"open_basedir a directory", sock, map[string]string{"php_value[open_basedir]": "/run/php/"}, "excludes /run/phptune"},
		{"disable_functions", sock, map[string]string{"php_admin_value[disable_functions]": "exec, OPCACHE_GET_STATUS,system"}, "disables opcache_get_status"},
		{"disable_functions unrelated", sock, map[string]string{"php_admin_value[disable_functions]": "exec,system"}, ""},
		{"tcp", "tcp:127.0.0.1:9000", map[string]string{}, "listens on tcp:127.0.0.1:9000"},
	} {
		got := OpcacheRefusal(Pool{Name: "www", File: "/etc/php/8.2/fpm/pool.d/www.conf", Listen: c.listen, Settings: c.settings}, "/run/phptune")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTrustedDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("ownership checks need root")
	}
	d := t.TempDir()
	os.Chmod(d, 0o755)
	if err := trustedDir(d); err != nil {
		t.Errorf("a root-owned 0755 directory under /tmp: %v", err)
	}
	open := filepath.Join(d, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	link := filepath.Join(d, "link")
	os.Symlink(d, link)
	other := filepath.Join(d, "other")
	os.Mkdir(other, 0o755)
	os.Chown(other, 33, 33)
	for dir, want := range map[string]string{open: "can be written by other accounts", link: "symbolic link", other: "belongs to uid 33",
		filepath.Join(other, "x"): "no such file", "relative": "absolute"} {
		if err := trustedDir(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
	}
}

// TestReadOpcacheHostCopy reads opcache through the Debian copy's pool,
// leaves nothing behind, and refuses a listener that is not the master.
func TestReadOpcacheHostCopy(t *testing.T) {
	h := hosttest.Debian(t)
	parent := t.TempDir()
	os.Chmod(filepath.Dir(parent), 0o755) // the test's own directory: the pool's account must reach the script
	os.Chmod(parent, 0o755)
	fs, _ := proc.Default()
	ms, err := Masters(fs)
	if err != nil {
		t.Fatal(err)
	}
	var m Master
	for _, x := range ms {
		if x.Conf == h.Conf {
			m = x
		}
	}
	fpm, err := ReadFPM(h.Conf, "")
	if err != nil || m.PID == 0 {
		t.Fatalf("master %+v: %v", m, err)
	}
	o, err := ReadOpcache(context.Background(), m, fpm.Pools[0], parent)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Loaded || !o.Enable || o.Status == nil || o.Status.Misses < 1 || !o.HasJIT || o.MemoryConsumptionB != 128<<20 || !strings.HasPrefix(o.PHPVersion, h.Version) || len(o.Problems) > 0 {
		t.Errorf("reading %+v status %+v", o, o.Status)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("the script's directory was left behind: %v", entries)
	}
	wrong := m
	wrong.PID++
	if _, err := ReadOpcache(context.Background(), wrong, fpm.Pools[0], parent); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "not by php-fpm's master") {
		t.Errorf("a listener that is not the master: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a refused read left its directory behind: %v", entries)
	}
}

// TestReadOpcacheInterrupted: while the request is in flight the script
// sits in a private directory (0755, the file 0644, both this user's) and
// SCRIPT_FILENAME names it; when the context is cancelled (Ctrl-C) the
// directory is removed. The listener is this test, which SO_PEERCRED
// shows as the "master"; it never answers. A directory a killed advise
// left behind is removed by the next read.
func TestReadOpcacheInterrupted(t *testing.T) {
	parent := t.TempDir()
	sock := filepath.Join(t.TempDir(), "pool.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stale := filepath.Join(parent, scriptDirPrefix+"killed")
	os.Mkdir(stale, 0o755)
	os.Chtimes(stale, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	fresh := filepath.Join(parent, scriptDirPrefix+"running")
	os.Mkdir(fresh, 0o755)

	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 4096)
		n, _ := c.Read(b)
		req := string(b[:n])
		script := regexp.MustCompile(regexp.QuoteMeta(parent) + `/` + scriptDirPrefix + `[0-9]+/` + regexp.QuoteMeta(OpcacheScriptName)).FindString(req)
		st, err1 := os.Stat(script)
		dst, err2 := os.Stat(filepath.Dir(script))
		if err1 != nil || err2 != nil || st.Mode().Perm() != 0o644 || dst.Mode().Perm() != 0o755 || filepath.Base(script) != OpcacheScriptName {
			seen <- fmt.Sprintf("bad script %q: %v %v %v %v", script, err1, err2, st, dst)
		} else {
			seen <- script
		}
		cancel() // Ctrl-C while the request waits for its answer
		c.Read(b)
	}()
	m := Master{PID: os.Getpid(), UID: os.Geteuid()}
	_, err = ReadOpcache(ctx, m, Pool{Name: "www", Listen: "unix:" + sock, Settings: map[string]string{}}, parent)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: %v", err)
	}
	script := <-seen
	if !strings.HasPrefix(script, parent) {
		t.Fatal(script)
	}
	if _, err := os.Stat(filepath.Dir(script)); !os.IsNotExist(err) {
		t.Errorf("the script's directory outlived the cancelled read: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a directory left by a killed advise was kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("another advise's directory in use was removed: %v", err)
	}
}
