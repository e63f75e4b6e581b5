package seal

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckCode: a site's include_path directory or prepend file outside
// its app's root is bound only when it holds no socket, FIFO or device,
// every directory in it is root's and writable only by root, and it
// neither lies in nor holds a refused directory.
func TestCheckCode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the sources must be root's: run as root")
	}
	base := filepath.Join(t.TempDir(), "opt") // /tmp/TestX/001: /tmp is refused by CheckCodeSource, not by checkCode below
	home := filepath.Join(base, "phptune")
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.WriteFile(p, []byte("<?php\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	os.Chmod(filepath.Dir(base), 0o755)
	mk("", 0o755)
	mk("phptune/labs/other", 0o755)
	lib := mk("lib/php", 0o755)
	mk("lib/php/Net", 0o755)
	write("lib/php/Net/Client.php")
	prepend := write("lib/prepend.php")
	withSock := mk("sock/php", 0o755)
	ln, err := net.Listen("unix", filepath.Join(withSock, "redis.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	withFIFO := mk("fifo/php", 0o755)
	if err := syscall.Mkfifo(filepath.Join(withFIFO, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	writable := mk("writable/php", 0o755)
	mk("writable/php/cache", 0o777)
	foreign := mk("foreign/php", 0o755)
	mk("foreign/php/up", 0o755)
	os.Chown(filepath.Join(foreign, "up"), 33, 33)
	link := filepath.Join(base, "link")
	os.Symlink(lib, link)

	refused := append(append([]string{}, codeRefused[:2]...), home, "/var/lib/mysql")
	for _, c := range []struct {
		path, says string // says "" when it may be bound
	}{
		{lib, ""},
		{prepend, ""},
		{withSock, "holds a unix socket"},
		{withFIFO, "holds a FIFO"},
		{writable, "which an account other than root can write"},
		{foreign, "owner uid 33"},
		{link, "symbolic link"},
		{filepath.Join(home, "labs", "other"), "lies in " + home},
		{base, "holds " + home},
		{"/var/lib", "holds /var/lib/mysql"},
		{"/run/php", "lies in /run"},
		{"/usr/local", "is not a directory of the site's own code"},
		{filepath.Join(base, "missing"), "no such file"},
		{"relative/dir", "not an absolute"},
	} {
		err := checkCode(c.path, refused)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("checkCode(%s) = %v, want it allowed", c.path, err)
		case c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)):
			t.Errorf("checkCode(%s) = %v, want an error saying %q", c.path, err, c.says)
		}
	}
	if err := CheckCodeSource(lib); err == nil || !strings.Contains(err.Error(), "lies in /tmp") {
		t.Errorf("CheckCodeSource(%s) = %v, want it refused under /tmp (the seal replaces /tmp)", lib, err)
	}
}

// TestCodeBindInSeal: a Code bind of a clean directory shows it read-only
// at its own path inside; Create refuses one that holds a unix socket
// (the lab could connect() through the read-only bind), naming it.
func TestCodeBindInSeal(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)
	lib := filepath.Join(dir, "pear", "php")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "pear"), 0o755)
	if err := os.WriteFile(filepath.Join(lib, "Lib.php"), []byte("<?php // PEAR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := create(t, Spec{Dir: filepath.Join(dir, "seal"), Refuse: []string{"/var/lib/phptune"},
		Binds: []Bind{{Source: lib, Target: lib, ReadOnly: true, Code: true}}})
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", "cat "+lib+"/Lib.php; echo x > "+lib+"/w 2>/dev/null && echo WROTE || echo 'write refused'")
	if err != nil || !strings.Contains(out, "PEAR") || !strings.Contains(out, "write refused") {
		t.Errorf("inside: %v\n%s", err, out)
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("unix", filepath.Join(lib, "cache.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s2, err := Create(context.Background(), Spec{Dir: filepath.Join(dir, "seal2"), Binds: []Bind{{Source: lib, Target: lib, ReadOnly: true, Code: true}}})
	if err == nil {
		s2.Destroy()
		t.Fatal("Create bound a directory of code holding a unix socket")
	}
	if !strings.Contains(err.Error(), "holds a unix socket, "+filepath.Join(lib, "cache.sock")) {
		t.Errorf("Create: %v, want it to name the socket", err)
	}
}
