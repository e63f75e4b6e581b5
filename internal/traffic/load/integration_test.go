package load

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

const nginxBin = "/usr/sbin/nginx"

// findFPM returns the installed php-fpm (any version), or skips: with
// -short, or when none is installed.
func findFPM(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts php-fpm; skipped with -short")
	}
	b, err := phpfpm.Find()
	if err != nil {
		t.Skipf("php-fpm is not installed: %v", err)
	}
	return b.Path
}

// worldDir makes a directory the unprivileged server workers can traverse
// (t.TempDir is 0700 and lives under a 0700 parent).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "phptune-load-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startServer runs a server in the foreground of its own process group and
// kills the group when the test ends.
func startServer(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			t.Logf("%s output:\n%s", name, b)
		}
	})
}

func waitDial(t *testing.T, network, addr string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if c, err := net.Dial(network, addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s %s never accepted a connection", network, addr)
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

var acceptedRE = regexp.MustCompile(`accepted conn:\s+(\d+)`)

func fpmAccepted(t *testing.T, sock string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := fcgi.Get(ctx, "unix", sock, fcgi.Params("GET", "/status", "/status", nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := acceptedRE.FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no accepted conn in status page: %q", r.Body)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// TestPHPFPMAcceptedConnMatches runs a real php-fpm and checks that its
// status page counted exactly the requests the generator sent over FastCGI.
func TestPHPFPMAcceptedConnMatches(t *testing.T) {
	phpFPMBin := findFPM(t)
	dir := worldDir(t)
	os.WriteFile(filepath.Join(dir, "index.php"), []byte("<?php echo \"Hello, world!\\n\";\n"), 0o644)
	sock := filepath.Join(dir, "fpm.sock")
	user := ""
	if os.Geteuid() == 0 {
		user = "user = www-data\ngroup = www-data\n"
	}
	conf := fmt.Sprintf(`[global]
error_log = %[1]s/fpm.log
pid = %[1]s/fpm.pid
daemonize = no
[t]
%[2]slisten = %[3]s
listen.mode = 0666
listen.backlog = 1024
pm = static
pm.max_children = 4
pm.status_path = /status
catch_workers_output = yes
`, dir, user, sock)
	confPath := filepath.Join(dir, "fpm.conf")
	os.WriteFile(confPath, []byte(conf), 0o644)
	startServer(t, phpFPMBin, "-F", "-y", confPath)
	waitDial(t, "unix", sock)
	// waitDial's connection was accepted too; read the counter after it.
	time.Sleep(100 * time.Millisecond)

	for _, ka := range []bool{false, true} {
		before := fpmAccepted(t, sock)
		o := Options{Target: Target{Protocol: "fcgi", Network: "unix", Address: sock, DocRoot: dir},
			Requests: []Request{{Path: "/index.php"}}, Connections: 4, N: 3000, KeepAlive: ka, Timeout: 5 * time.Second}
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		// Each status request that reads the counter is counted in it.
		// With FCGI_KEEP_CONN php-fpm also counts one more "accept" per
		// kept connection: the wait for a next request that ends when the
		// generator closes it, which a worker notices a moment after the
		// run: read again (up to 2 s) until those have come in.
		want := res.RequestsSent
		if ka {
			want += res.ConnectionsOpened
		}
		var got int64
		for reads := int64(1); reads <= 40; reads++ {
			got = fpmAccepted(t, sock) - before - reads
			if got >= want {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got != want || res.Requests != 3000 || res.Errors != 0 {
			t.Fatalf("keepalive=%v: php-fpm accepted %d, generator sent %d on %d connections, measured %d, errors %v",
				ka, got, res.RequestsSent, res.ConnectionsOpened, res.Requests, res.ErrorsByClass)
		}
		if res.BytesRead == 0 || res.StatusCodes["200"] != 3000 {
			t.Fatalf("status codes %v", res.StatusCodes)
		}
	}
}

var stubRequestsRE = regexp.MustCompile(`\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n`)

// startNginx runs nginx with a static file and stub_status on a free port.
func startNginx(t *testing.T, workerConns int) (string, func() int64) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts nginx; skipped with -short")
	}
	if _, err := os.Stat(nginxBin); err != nil {
		t.Skip("nginx is not installed (apt-get install nginx)")
	}
	dir := worldDir(t)
	www := filepath.Join(dir, "www")
	os.Mkdir(www, 0o755)
	os.WriteFile(filepath.Join(www, "static.html"), []byte("<p>Hello, static world!</p>\n"), 0o644)
	port := freePort(t)
	user := ""
	if os.Geteuid() == 0 {
		user = "user www-data;"
	}
	conf := fmt.Sprintf(`%[4]s
daemon off;
worker_processes 2;
worker_rlimit_nofile %[3]d;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections %[3]d; }
http {
  access_log off;
  client_body_temp_path %[1]s/tmp;
  proxy_temp_path %[1]s/tmp;
  fastcgi_temp_path %[1]s/tmp;
  uwsgi_temp_path %[1]s/tmp;
  scgi_temp_path %[1]s/tmp;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:%[2]d backlog=4096;
    root %[1]s/www;
    location = /stub { stub_status; }
  }
}
`, dir, port, workerConns, user)
	confPath := filepath.Join(dir, "nginx.conf")
	os.WriteFile(confPath, []byte(conf), 0o644)
	startServer(t, nginxBin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitDial(t, "tcp", addr)
	stub := func() int64 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /stub HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b []byte
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				break
			}
		}
		m := stubRequestsRE.FindSubmatch(b)
		if m == nil {
			t.Fatalf("no counters in stub_status: %q", b)
		}
		n, _ := strconv.ParseInt(string(m[3]), 10, 64)
		return n
	}
	return addr, stub
}

// TestNginxStubStatusMatches: nginx counted exactly what the generator sent.
func TestNginxStubStatusMatches(t *testing.T) {
	addr, stub := startNginx(t, 1024)
	for _, ka := range []bool{true, false} {
		before := stub()
		o := Options{Target: Target{Protocol: "http", Network: "tcp", Address: addr},
			Requests: []Request{{Path: "/static.html"}}, Connections: 8, N: 5000, KeepAlive: ka, Timeout: 5 * time.Second}
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		after := stub()
		// stub_status counts the request that reads it.
		if got := after - before - 1; got != res.RequestsSent || res.Requests != 5000 || res.Errors != 0 {
			t.Fatalf("keepalive=%v: nginx counted %d, generator sent %d, measured %d, errors %v",
				ka, got, res.RequestsSent, res.Requests, res.ErrorsByClass)
		}
	}
}

// TestTenThousandConnections keeps 10,000 connections busy against nginx and
// checks the generator's memory stays bounded.
func TestTenThousandConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	const conns = 10000
	if err := CheckFDLimit(conns); err != nil {
		t.Skip(err)
	}
	addr, _ := startNginx(t, 12000)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	o := Options{Target: Target{Protocol: "http", Network: "tcp", Address: addr},
		Requests: []Request{{Path: "/static.html"}}, Connections: conns, Duration: 3 * time.Second,
		KeepAlive: true, Timeout: 10 * time.Second}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("10k connections: %d requests, %.0f req/s, %d errors %v, p99 %.1f ms, heap +%d MB, sys %d MB",
		res.Requests, res.ThroughputRPS, res.Errors, res.ErrorsByClass, res.Latency.P99Ms, grew>>20, after.Sys>>20)
	if res.ConnectionsOpened < conns {
		t.Fatalf("opened only %d connections", res.ConnectionsOpened)
	}
	if float64(res.Errors) > 0.01*float64(res.Requests) || res.Requests < conns {
		t.Fatalf("errors %d of %d: %v", res.Errors, res.Requests, res.ErrorsByClass)
	}
	if after.Sys > 256<<20 {
		t.Fatalf("generator memory %d MB for 10k connections", after.Sys>>20)
	}
	if !strings.Contains(fmt.Sprint(res.StatusCodes), "200") {
		t.Fatalf("codes %v", res.StatusCodes)
	}
}
