package seal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/phptune/phptune/internal/base/peercred"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needRoot skips a test that makes real namespaces and mounts: under
// -short, without root, or without the tools a seal runs.
func needRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("makes namespaces and mounts; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, name := range []string{"unshare", "nsenter", "setpriv", "mount", "ip", "nft", "sysctl"} {
		if tool(name) == name {
			t.Skipf("%s is not installed (apt-get install util-linux iproute2 nftables procps)", name)
		}
	}
}

// account is the unprivileged account the tests run processes as:
// phptune's own, else nobody.
func account(t testing.TB) (uid, gid int) {
	t.Helper()
	for _, name := range []string{"phptune", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		return uid, gid
	}
	t.Skip("no unprivileged account (phptune or nobody)")
	return 0, 0
}

// base is a root-owned directory for one test, outside /tmp (which the
// seal replaces): the lab's accounts can traverse it, not list it.
func base(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "phptune-seal-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// create makes a seal destroyed when the test ends.
func create(t testing.TB, spec Spec) *Seal {
	t.Helper()
	s, err := Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Destroy(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// inside runs a command in the seal as uid/gid and returns its output.
func inside(t testing.TB, s *Seal, uid, gid int, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := s.Command(uid, gid, bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	return run0(s, cmd)
}

// run0 starts cmd in the seal and returns its combined output when it
// ends.
func run0(s *Seal, cmd *exec.Cmd) (string, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.Start(cmd); err != nil {
		return "", err
	}
	err := cmd.Wait()
	return out.String(), err
}

// mounted reports whether anything is mounted at or under dir in this
// process's mount namespace, from /proc/self/mountinfo.
func mounted(t testing.TB, dir string) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && under(f[4], dir) {
			return true
		}
	}
	return false
}

// TestNothingLeaves: a process of the lab's account inside the seal tries
// the host's MariaDB port, an outside address, a TCP listener and a unix
// socket the test opens on the host, and the lab's own (idle) listener:
// every attempt fails at once, nothing reaches the host's listeners, and
// Attempts counts each TCP destination but the lab's own.
func TestNothingLeaves(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)

	hostTCP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hostTCP.Close()
	hostPort := hostTCP.Addr().(*net.TCPAddr).Port
	sockPath := filepath.Join("/run", fmt.Sprintf("phptune-test-%d.sock", os.Getpid()))
	hostUnix, err := net.Listen("unix", sockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer hostUnix.Close()
	os.Chmod(sockPath, 0o666) // only the seal should keep the account out
	reached := make(chan string, 10)
	for _, ln := range []net.Listener{hostTCP, hostUnix} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				reached <- ln.Addr().String()
				c.Close()
			}
		}()
	}

	s := create(t, Spec{Dir: filepath.Join(dir, "seal"), Own: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:80")}})
	dests := []string{"127.0.0.1/3306", "10.255.255.1/80", "127.0.0.1/" + strconv.Itoa(hostPort), "127.0.0.1/80"}
	var script strings.Builder
	for _, d := range dests {
		fmt.Fprintf(&script, "if timeout 5 bash -c 'exec 3<>/dev/tcp/%s' 2>/dev/null; then echo '%s connected'; else echo '%s failed'; fi\n", d, d, d)
	}
	fmt.Fprintf(&script, "if curl -sS --max-time 5 --unix-socket %s http://x/ >/dev/null 2>&1; then echo 'unix connected'; else echo 'unix failed'; fi\n", sockPath)
	start := time.Now()
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", script.String())
	took := time.Since(start)
	if err != nil {
		t.Fatalf("the attempts script: %v: %s", err, out)
	}
	t.Logf("inside, in %v:\n%s", took, out)
	if strings.Contains(out, "connected") {
		t.Errorf("a connection left the seal:\n%s", out)
	}
	if took > 3*time.Second {
		t.Errorf("the attempts took %v: they must fail at once, not time out", took)
	}
	select {
	case a := <-reached:
		t.Errorf("the host's listener %s was reached from inside", a)
	default:
	}

	got, err := s.Attempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("attempts: %v", got)
	counted := map[string]uint64{}
	for _, a := range got {
		counted[a.String()] = a.Count
	}
	for _, want := range []string{"tcp 127.0.0.1:3306", "tcp 10.255.255.1:80", "tcp 127.0.0.1:" + strconv.Itoa(hostPort)} {
		if counted[want] != 1 {
			t.Errorf("attempts to %s counted %d times, want 1 (all: %v)", want, counted[want], got)
		}
	}
	if n, ok := counted["tcp 127.0.0.1:80"]; ok {
		t.Errorf("the lab's own listener 127.0.0.1:80 was counted %d times as a way out", n)
	}
}

// TestCommandRefusesRoot: root never runs inside a seal.
func TestCommandRefusesRoot(t *testing.T) {
	s := &Seal{Dir: "/var/lib/phptune/labs/x/seal"}
	if err := s.Command(0, 0, "/bin/true").Start(); err == nil || !strings.Contains(err.Error(), "root never runs inside") {
		t.Fatalf("Command(0, 0) started: %v", err)
	}
	if err := s.CommandIn("rel", 1000, 1000, "/bin/true").Start(); err == nil || !strings.Contains(err.Error(), "not an absolute") {
		t.Fatalf("CommandIn(relative dir) started: %v", err)
	}
}

// sums is the sha256 of every file under dir, and the mode and owner of
// every entry, by path.
func sums(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		v := fmt.Sprintf("%v %d:%d", info.Mode(), st.Uid, st.Gid)
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(data)
			v += " " + hex.EncodeToString(h[:])
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// docroot makes a small site owned by uid/gid.
func docroot(t testing.TB, dir string, uid, gid int) string {
	t.Helper()
	root := filepath.Join(dir, "site")
	files := map[string]string{"index.html": "<title>The sealed site</title>\n", "wp-config.php": "<?php define('DB_HOST', 'localhost');\n", "sub/a.txt": "a\n"}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{root, filepath.Join(root, "sub"), filepath.Join(root, "index.html"), filepath.Join(root, "wp-config.php"), filepath.Join(root, "sub", "a.txt")} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestOverlayDocroot: inside, the site's account writes, appends, deletes
// and makes a directory in its docroot at the docroot's real path; the
// changes are visible inside and land in the upper layer, the real
// docroot's files are byte-identical, and after Destroy nothing stays
// mounted and the upper layer is gone.
func TestOverlayDocroot(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)
	root := docroot(t, dir, uid, gid)
	before := sums(t, root)

	s, err := Create(context.Background(), Spec{Dir: filepath.Join(dir, "seal"), Docroot: root})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	script := fmt.Sprintf("set -e; cd %[1]s; echo new > new.txt; echo more >> index.html; rm sub/a.txt; mkdir -p wp-content/uploads/2026/11; echo img > wp-content/uploads/2026/11/a.jpg; cat new.txt index.html; ls sub | wc -l", root)
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", script)
	if err != nil {
		t.Fatalf("writing inside: %v: %s", err, out)
	}
	if want := "new\n<title>The sealed site</title>\nmore\n0\n"; out != want {
		t.Errorf("inside, the docroot reads %q, want %q", out, want)
	}
	// The working directory of CommandIn is the overlay, not the real
	// directory.
	if out, err := func() (string, error) {
		return run0(s, s.CommandIn(root, uid, gid, "/usr/bin/bash", "-c", "echo cwd > cwd.txt && cat cwd.txt"))
	}(); err != nil || out != "cwd\n" {
		t.Errorf("a write in CommandIn's directory: %q, %v", out, err)
	}
	if after := sums(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the real docroot changed:\nbefore %v\nafter  %v", before, after)
	}
	for _, name := range []string{"new.txt", "index.html", "cwd.txt", "wp-content/uploads/2026/11/a.jpg"} {
		if _, err := os.Stat(filepath.Join(s.UpperDir(), name)); err != nil {
			t.Errorf("the upper layer lacks %s: %v", name, err)
		}
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	if mounted(t, dir) || mounted(t, root) {
		t.Errorf("something is still mounted under %s after Destroy", dir)
	}
	if _, err := os.Stat(s.UpperDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the upper layer outlived Destroy: %v", err)
	}
	if after := sums(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the real docroot changed after Destroy:\nbefore %v\nafter  %v", before, after)
	}
}

// TestCreateRefusesUnsafePaths: a docroot reached through a link, or whose
// parent another account can write, is not mounted; the failed Create
// leaves nothing behind.
func TestCreateRefusesUnsafePaths(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)
	root := docroot(t, dir, uid, gid)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	inOpen := docroot(t, open, uid, gid)
	for _, c := range []struct{ docroot, want string }{
		{link, "not a directory"},
		{inOpen, "writable by others"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		sealDir := filepath.Join(dir, "seal")
		_, err := Create(context.Background(), Spec{Dir: sealDir, Docroot: c.docroot})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(docroot %s) = %v, want an error containing %q", c.docroot, err, c.want)
		}
		if mounted(t, sealDir) {
			t.Errorf("a failed Create left mounts under %s", sealDir)
		}
		if _, err := os.Stat(sealDir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a failed Create left %s: %v", sealDir, err)
		}
	}
}

// nginx starts nginx as uid/gid serving www with the given listen
// directives, inside the seal when s is set, and stops it when the test
// ends. It returns the process.
func nginx(t testing.TB, s *Seal, dir string, uid, gid int, www string, listens ...string) *exec.Cmd {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
		t.Skip("nginx is not installed")
	}
	prefix := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	var l strings.Builder
	for _, a := range listens {
		fmt.Fprintf(&l, "\t\tlisten %s;\n", a)
	}
	conf := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	server {
%[2]s		server_name site.test;
		root %[3]s;
	}
}
`, prefix, l.String(), www)
	if err := os.WriteFile(filepath.Join(prefix, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(prefix, uid, gid); err != nil {
		t.Fatal(err)
	}
	args := []string{"-p", prefix, "-c", filepath.Join(prefix, "nginx.conf"), "-e", filepath.Join(prefix, "error.log"), "-g", "daemon off;"}
	var cmd *exec.Cmd
	if s != nil {
		cmd = s.Command(uid, gid, "/usr/sbin/nginx", args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd = exec.Command("/usr/sbin/nginx", args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	}
	out, err := os.Create(filepath.Join(dir, "nginx.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	start := cmd.Start
	if s != nil {
		start = func() error { return s.Start(cmd) }
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-waited
	})
	return cmd
}

// unixClient is an HTTP client whose every connection goes to path.
func unixClient(path string) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
}

// get fetches url with c, retrying while the server starts, and returns
// the status and body.
func get(t testing.TB, c *http.Client, url, host string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest("GET", url, nil)
		req.Host = host
		resp, err := c.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sealedSite is a seal with the site's name, its docroot as an overlay
// and nginx inside listening on 127.0.0.1:80 and on a unix socket in the
// lab's directory.
func sealedSite(t testing.TB) (s *Seal, sock, root string, cmd *exec.Cmd) {
	uid, gid := account(t)
	dir := base(t)
	root = docroot(t, dir, uid, gid)
	sockDir := filepath.Join(dir, "sock")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sockDir, uid, gid); err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(sockDir, "www.sock")
	prefix := filepath.Join(dir, "nginx")
	if err := os.Mkdir(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	s = create(t, Spec{Dir: filepath.Join(dir, "seal"), Hosts: []string{"site.test"}, Docroot: root,
		Own:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:80")},
		Binds: []Bind{{Source: sockDir, Target: sockDir}, {Source: prefix, Target: prefix}}})
	cmd = nginx(t, s, dir, uid, gid, root, "127.0.0.1:80", "unix:"+sock)
	return s, sock, root, cmd
}

// TestHostsResolveToLab: inside, the site's name resolves to the loopback
// address and a request to http://site.test/ reaches the lab's own nginx
// on 127.0.0.1:80, which no one counts as a way out.
func TestHostsResolveToLab(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	s, _, _, _ := sealedSite(t)
	out, err := inside(t, s, uid, gid, "/usr/bin/getent", "hosts", "site.test")
	if err != nil || !strings.HasPrefix(out, "127.0.0.1") && !strings.HasPrefix(out, "::1") {
		t.Fatalf("inside, site.test resolves to %q (%v), want the loopback address", out, err)
	}
	script := "for i in $(seq 100); do curl -sS --max-time 2 http://site.test/ && exit 0; sleep 0.05; done; exit 1"
	out, err = inside(t, s, uid, gid, "/usr/bin/bash", "-c", script)
	if err != nil || !strings.Contains(out, "<title>The sealed site</title>") {
		t.Fatalf("inside, http://site.test/ answered %q (%v), want the site's page", out, err)
	}
	got, err := s.Attempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range got {
		if a.Dest.Port() == 80 {
			t.Errorf("a request to the lab's own web server was counted as a way out: %v", got)
		}
	}
}

// TestReachFromHost: the nginx inside listens on a unix socket in the
// lab's directory; the host reaches it directly and through Forward's
// loopback TCP listener, with the site's Host.
func TestReachFromHost(t *testing.T) {
	needRoot(t)
	_, sock, _, _ := sealedSite(t)
	code, body := get(t, unixClient(sock), "http://site.test/", "site.test")
	if code != 200 || !strings.Contains(body, "The sealed site") {
		t.Fatalf("through the unix socket: %d %q, want the site's 200 page", code, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Forward(ctx, "127.0.0.1:0", sock, peercred.Any)
	if err != nil {
		t.Fatal(err)
	}
	code, body = get(t, &http.Client{Timeout: 5 * time.Second}, "http://"+addr.String()+"/", "site.test")
	if code != 200 || !strings.Contains(body, "The sealed site") {
		t.Fatalf("through Forward: %d %q, want the site's 200 page", code, body)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr.String(), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("Forward still listens after its context ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := Forward(context.Background(), "0.0.0.0:0", sock, peercred.Any); err == nil {
		t.Error("Forward listened on every address; it must take a loopback one only")
	}
}

// TestDestroyLeavesNothing: nginx and processes that fork and start their
// own session inside are all gone after Destroy, nothing stays mounted,
// the namespace files are removed, and a second Destroy (or one through
// Open) succeeds.
func TestDestroyLeavesNothing(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	s, sock, root, ngx := sealedSite(t)
	get(t, unixClient(sock), "http://site.test/", "site.test")
	escapee := s.Command(uid, gid, "/usr/bin/bash", "-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & sleep 1000 & exec sleep 1000")
	if err := s.Start(escapee); err != nil {
		t.Fatal(err)
	}
	go escapee.Wait()
	deadline := time.Now().Add(5 * time.Second)
	var pids []int
	for {
		pids = s.Processes()
		if len(pids) >= 5 || time.Now().After(deadline) { // nginx master and worker, three sleeps
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) < 5 {
		t.Fatalf("processes in the seal: %v, want nginx's two and three sleeps", pids)
	}
	if !contains(pids, ngx.Process.Pid) || !contains(pids, escapee.Process.Pid) {
		t.Errorf("Processes() = %v lacks the started nginx %d or bash %d: Command must start the program itself", pids, ngx.Process.Pid, escapee.Process.Pid)
	}
	dir := filepath.Dir(s.Dir)
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	for _, pid := range pids {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !zombie(st) {
			t.Errorf("process %d outlived Destroy: %s", pid, st)
		}
	}
	if mounted(t, dir) || mounted(t, root) {
		t.Errorf("something is still mounted under %s or %s after Destroy", dir, root)
	}
	if _, err := os.Stat(s.nsDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the namespace files outlived Destroy: %v", err)
	}
	again, err := Open(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Destroy(); err != nil {
		t.Errorf("a second Destroy: %v", err)
	}
}

func contains(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// zombie reports whether a /proc/PID/stat is a zombie's (dead, waiting to
// be reaped by its parent).
func zombie(stat []byte) bool {
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// TestBinds: what the caller binds is what the seal's paths show: the
// lab's socket directory at /run/mysqld (its socket answers there, the
// host's /run/mysqld is not reached), a file read-only in the fresh /tmp.
func TestBinds(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)
	sockDir := filepath.Join(dir, "mysqld")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(sockDir, "mysqld.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(filepath.Join(sockDir, "mysqld.sock"), 0o666)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the lab's database") }))
	conf := filepath.Join(dir, "lab.cnf")
	if err := os.WriteFile(conf, []byte("[client]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := create(t, Spec{Dir: filepath.Join(dir, "seal"), Binds: []Bind{
		{Source: sockDir, Target: "/run/mysqld"},
		{Source: conf, Target: "/tmp/conf/lab.cnf", ReadOnly: true},
	}})
	out, err := inside(t, s, uid, gid, "/usr/bin/curl", "-sS", "--max-time", "3", "--unix-socket", "/run/mysqld/mysqld.sock", "http://x/")
	if err != nil || out != "the lab's database" {
		t.Errorf("inside, /run/mysqld/mysqld.sock answered %q (%v), want the lab's socket", out, err)
	}
	out, err = inside(t, s, uid, gid, "/usr/bin/bash", "-c", "cat /tmp/conf/lab.cnf; echo x >> /tmp/conf/lab.cnf && echo written")
	if !strings.HasPrefix(out, "[client]\n") || strings.Contains(out, "written") {
		t.Errorf("inside, the read-only bind: %q (%v), want it readable and not writable", out, err)
	}
	if data, _ := os.ReadFile(conf); string(data) != "[client]\n" {
		t.Errorf("the bound file changed: %q", data)
	}
}

// TestSameAccountHostProcess: a process of the lab's account running on
// the host (as production's nginx workers run as www-data beside a lab of
// www-data) is no way out: inside, its /proc/PID/root (which would show
// the host's /run) and cwd cannot be read, and, where Landlock scopes
// signals (ABI 6, Linux 6.12), it cannot be signalled; /proc does not
// show other accounts' processes (init).
func TestSameAccountHostProcess(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)
	secretDir := filepath.Join("/run", fmt.Sprintf("phptune-test-%d", os.Getpid()))
	if err := os.Mkdir(secretDir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(secretDir)
	if err := os.WriteFile(filepath.Join(secretDir, "f"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host := exec.Command("/usr/bin/sleep", "60")
	host.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { host.Process.Kill(); host.Wait() }()
	s := create(t, Spec{Dir: filepath.Join(dir, "seal")})
	pid := strconv.Itoa(host.Process.Pid)
	script := fmt.Sprintf(`cat /proc/%[1]s/root%[2]s/f 2>/dev/null && echo "read root"
ls /proc/%[1]s/cwd/ >/dev/null 2>&1 && echo "read cwd"
kill -0 %[1]s 2>/dev/null && echo "signalled"
test -e /proc/1 && echo "sees init"
true`, pid, secretDir)
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", script)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(out, "sees init") {
		t.Errorf("inside, /proc shows root's processes:\n%s", out)
	}
	if strings.Contains(out, "read") {
		t.Errorf("inside, a host process of the same account let the seal reach the host's files:\n%s", out)
	}
	if landlockABI() >= 6 && strings.Contains(out, "signalled") {
		t.Errorf("inside, a host process of the same account could be signalled:\n%s", out)
	}
}

// TestHostReadOnly: inside, the host's file system is read-only even where
// the lab's account may write on the host; what the seal binds writable
// is writable, /dev/null works, and /dev/shm is the seal's own.
func TestHostReadOnly(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)
	mine := filepath.Join(dir, "mine")
	shared := filepath.Join(dir, "shared")
	for _, d := range []string{mine, shared} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	shm := filepath.Join("/dev/shm", fmt.Sprintf("phptune-test-%d", os.Getpid()))
	if err := os.WriteFile(shm, []byte("host"), 0o666); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(shm)
	os.Chmod(shm, 0o666)
	s := create(t, Spec{Dir: filepath.Join(dir, "seal"), Binds: []Bind{{Source: shared, Target: shared}}})
	script := fmt.Sprintf(`{ echo x > %[1]s/f; } 2>/dev/null && echo "wrote the host"
echo x > %[2]s/f && echo "wrote the bind"
echo x > /dev/null && echo "wrote /dev/null"
cat %[3]s 2>/dev/null && echo " read the host's shm"
echo x > /dev/shm/f && echo "wrote shm"
true`, mine, shared, shm)
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", script)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if want := "wrote the bind\nwrote /dev/null\nwrote shm\n"; out != want {
		t.Errorf("inside: %q, want %q", out, want)
	}
	if _, err := os.Stat(filepath.Join(mine, "f")); err == nil {
		t.Error("a process inside wrote into the host's file system")
	}
	if data, err := os.ReadFile(filepath.Join(shared, "f")); err != nil || string(data) != "x\n" {
		t.Errorf("the writable bind holds %q, %v", data, err)
	}
}

// TestOverlayAppRoot: a Laravel-like app whose docroot is APP/public, its
// code and .env in APP: with APP as the app's root, PHP inside reads
// APP/.env and includes APP/src/x.php, its writes to APP/storage and to
// the docroot land in the upper layer, a file beside APP is not there,
// and the real APP is byte-identical, during and after the seal.
func TestOverlayAppRoot(t *testing.T) {
	needRoot(t)
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("no php (apt-get install php-cli)")
	}
	uid, gid := account(t)
	dir := base(t)
	app := filepath.Join(dir, "app")
	files := map[string]string{
		"public/index.php": "<?php require __DIR__ . '/../src/x.php';\n",
		".env":             "APP_NAME=sealed-app\nDB_HOST=127.0.0.1\n",
		"src/x.php":        "<?php function x() { return 'x-from-src'; }\n",
		"storage/.keep":    "",
	}
	for name, content := range files {
		p := filepath.Join(app, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.WalkDir(app, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "beside.txt"), []byte("not the app's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := sums(t, app)
	docroot := filepath.Join(app, "public")
	s := create(t, Spec{Dir: filepath.Join(dir, "seal"), Docroot: docroot, AppRoot: app})

	code := fmt.Sprintf(`require %[1]q;
$env = file_get_contents(%[2]q);
echo x(), "\n", (preg_match('/^APP_NAME=(.*)$/m', $env, $m) ? $m[1] : 'no-env'), "\n";
echo file_put_contents(%[3]q, "cache") ? "wrote-storage" : "storage-failed", "\n";
echo file_put_contents(%[4]q, "up") ? "wrote-docroot" : "docroot-failed", "\n";
echo file_exists(%[5]q) ? "beside-visible" : "beside-absent", "\n";`,
		filepath.Join(docroot, "index.php"), filepath.Join(app, ".env"), filepath.Join(app, "storage", "cache.txt"),
		filepath.Join(docroot, "upload.txt"), filepath.Join(dir, "beside.txt"))
	out, err := run0(s, s.CommandIn(docroot, uid, gid, php, "-n", "-r", code))
	if err != nil {
		t.Fatalf("php inside: %v: %s", err, out)
	}
	if want := "x-from-src\nsealed-app\nwrote-storage\nwrote-docroot\nbeside-absent\n"; out != want {
		t.Errorf("php inside printed %q, want %q", out, want)
	}
	for _, name := range []string{"storage/cache.txt", "public/upload.txt"} {
		if _, err := os.Stat(filepath.Join(s.UpperDir(), name)); err != nil {
			t.Errorf("the upper layer lacks %s: %v", name, err)
		}
	}
	if after := sums(t, app); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the real app changed:\nbefore %v\nafter  %v", before, after)
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	if mounted(t, app) {
		t.Errorf("something is still mounted under %s after Destroy", app)
	}
	if after := sums(t, app); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the real app changed after Destroy:\nbefore %v\nafter  %v", before, after)
	}
}

// TestCacheAddressesLeadNowhere: production's Redis and Memcached, as a
// site's configuration names them — 127.0.0.1:6379 and :11211 on the
// host, and a unix socket at /run/redis/redis.sock's kind of path — are
// not reached from inside: TCP reaches the seal's own loopback, where
// nothing listens (refused at once and counted), and the socket's path
// does not exist (not counted: no packet is sent).
func TestCacheAddressesLeadNowhere(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	dir := base(t)
	reached := make(chan string, 10)
	accept := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached <- ln.Addr().String()
			c.Close()
		}
	}
	var ports []string
	for _, addr := range []string{"127.0.0.1:6379", "127.0.0.1:11211"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s is taken on this host (%v): production's cache is played by a listener on another port", addr, err)
			if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
		}
		defer ln.Close()
		go accept(ln)
		ports = append(ports, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	sockDir := filepath.Join("/run", fmt.Sprintf("phptune-test-redis-%d", os.Getpid()))
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "redis.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	os.Chmod(sock, 0o777) // only the seal should keep the account out
	go accept(ul)

	var script strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&script, "if timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/%s' 2>/dev/null; then echo 'tcp %s connected'; else echo 'tcp %s failed'; fi\n", p, p, p)
	}
	fmt.Fprintf(&script, "if timeout 5 python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' %s 2>/dev/null; then echo 'unix connected'; else echo 'unix failed'; fi\n", sock)
	fmt.Fprintf(&script, "test -e %s && echo 'unix path exists' || echo 'unix path missing'\n", sock)
	// The same script on the host, as the same account, reaches all
	// three: the test proves the seal, not a broken fixture.
	host := exec.Command("/usr/bin/bash", "-c", script.String())
	host.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	if hout, err := host.CombinedOutput(); err != nil || strings.Count(string(hout), "connected") != 3 {
		t.Fatalf("on the host the cache listeners are not all reachable (%v):\n%s", err, hout)
	}
	for range 3 {
		<-reached
	}
	s := create(t, Spec{Dir: filepath.Join(dir, "seal")})
	start := time.Now()
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", script.String())
	if err != nil {
		t.Fatalf("the attempts script: %v: %s", err, out)
	}
	t.Logf("inside, in %v:\n%s", time.Since(start), out)
	if strings.Contains(out, "connected") || !strings.Contains(out, "unix path missing") || strings.Count(out, "failed") != 3 {
		t.Errorf("a cache address was reached or seen from inside:\n%s", out)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the attempts took %v: they must fail at once, not time out", took)
	}
	select {
	case a := <-reached:
		t.Errorf("the host's cache listener %s was reached from inside", a)
	default:
	}
	got, err := s.Attempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]uint64{}
	for _, a := range got {
		counted[a.String()] = a.Count
	}
	for _, p := range ports {
		if counted["tcp 127.0.0.1:"+p] != 1 {
			t.Errorf("the attempt to 127.0.0.1:%s counted %d times, want 1 (all: %v)", p, counted["tcp 127.0.0.1:"+p], got)
		}
	}
}
