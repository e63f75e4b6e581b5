package nginx

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
)

// TestRenderSiteHost: with a SiteHost the PHP location passes the client's
// Host header as it came, the site's name and port, and HTTPS for a TLS
// site; the status locations and a lab without one keep the lab's
// host:port; a name or port nginx.conf cannot carry is refused.
func TestRenderSiteHost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		host    *SiteHost
		want    []string
		notWant []string
		refused string
	}{
		{"no site host: the lab's address", nil,
			[]string{"fastcgi_param HTTP_HOST $phptune_http_host;", "fastcgi_param SERVER_NAME $server_name;", "fastcgi_param SERVER_PORT $server_port;"},
			[]string{"fastcgi_param HTTPS"}, ""},
		{"plain HTTP site", &SiteHost{Name: "site.test", Port: 80},
			[]string{"fastcgi_param HTTP_HOST $phptune_http_host;", "fastcgi_param SERVER_NAME site.test;", "fastcgi_param SERVER_PORT 80;", "fastcgi_param REQUEST_SCHEME http;"},
			[]string{"fastcgi_param HTTPS"}, ""},
		{"TLS site", &SiteHost{Name: "shop.example.org", Port: 443, HTTPS: true},
			[]string{"fastcgi_param HTTPS on;", "fastcgi_param SERVER_PORT 443;", "fastcgi_param REQUEST_SCHEME https;", "fastcgi_param SERVER_NAME shop.example.org;"},
			nil, ""},
		{"a name that would add a directive", &SiteHost{Name: "site.test;error_page 404 /x", Port: 80}, nil, nil, "is not part of a host name"},
		{"no port", &SiteHost{Name: "site.test"}, nil, nil, "port 0 is not a TCP port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := testSite("/lab", "/lab/www")
			site.FPMPingPath = "/fpm-ping"
			site.SiteHost = tc.host
			out := Render(knob.Defaults(), site)
			if tc.refused != "" {
				if !strings.Contains(out, "phptune refused to render") || !strings.Contains(out, tc.refused) {
					t.Errorf("not refused with %q:\n%s", tc.refused, out)
				}
				if err := site.Check(); err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Errorf("Check: %v", err)
				}
				return
			}
			php := out[strings.Index(out, `location ~ \.php$`):]
			for _, w := range tc.want {
				if strings.Count(php, w) != 1 {
					t.Errorf("the PHP location has %q %d times, want once:\n%s", w, strings.Count(php, w), php)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("config has %q:\n%s", w, out)
				}
			}
			status := out[:strings.Index(out, `location ~ \.php$`)]
			if tc.host != nil && (strings.Contains(status, "site.test") || strings.Contains(status, "HTTPS")) {
				t.Errorf("the status locations pass the site host:\n%s", status)
			}
			if n := strings.Count(php, "fastcgi_param SERVER_NAME"); n != 1 {
				t.Errorf("SERVER_NAME sent %d times", n)
			}
		})
	}
}

// TestSiteHostReachesPHP runs the real nginx with a SiteHost in front of
// Debian's php-fpm and a script that echoes what PHP sees: a request with
// Host: site.test gets HTTP_HOST site.test (not the lab's host:port),
// SERVER_NAME site.test, SERVER_PORT 443 and HTTPS on.
func TestSiteHostReachesPHP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nginx and php-fpm")
	}
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	fpm, err := exec.LookPath("php-fpm8.2")
	if err != nil {
		t.Skip("php-fpm8.2 is not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (php-fpm's pool runs as nobody)")
	}
	dir := t.TempDir()
	// nginx's workers and the pool run as nobody: they must reach the files.
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	www := filepath.Join(dir, "www")
	for _, d := range []string{"run", "log", "tmp", "www"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	echo := `<?php header('Content-Type: application/json'); echo json_encode(['HTTP_HOST' => $_SERVER['HTTP_HOST'] ?? '', 'SERVER_NAME' => $_SERVER['SERVER_NAME'] ?? '', 'SERVER_PORT' => $_SERVER['SERVER_PORT'] ?? '', 'HTTPS' => $_SERVER['HTTPS'] ?? '']);`
	if err := os.WriteFile(filepath.Join(www, "index.php"), []byte(echo), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "run", "fpm.sock")
	fpmConf := "[global]\npid = " + dir + "/run/fpm.pid\nerror_log = " + dir + "/log/fpm.log\ndaemonize = no\n[t]\nuser = nobody\ngroup = nogroup\nlisten = " + sock +
		"\nlisten.mode = 0666\npm = static\npm.max_children = 1\n"
	if err := os.WriteFile(filepath.Join(dir, "fpm.conf"), []byte(fpmConf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fpmCmd := exec.CommandContext(ctx, fpm, "--nodaemonize", "--fpm-config", filepath.Join(dir, "fpm.conf"))
	if err := fpmCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fpmCmd.Process.Kill(); fpmCmd.Wait() })
	port := freePort(t)
	site := testSite(dir, www)
	site.Listen = "127.0.0.1:" + strconv.Itoa(port)
	site.FastCGI = "unix:" + sock
	site.FPMStatusPath, site.StubStatusPath, site.FrontController = "", "", ""
	site.SiteHost = &SiteHost{Name: "site.test", Port: 443, HTTPS: true}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(Render(knob.Defaults(), site)), 0o644); err != nil {
		t.Fatal(err)
	}
	ngx := exec.CommandContext(ctx, bin, Args(site.Prefix, conf, site.ErrorLog)...)
	if err := ngx.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ngx.Process.Kill(); ngx.Wait() })

	var got map[string]string
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "http://"+site.Listen+"/index.php", nil)
		req.Host = "site.test"
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && json.Unmarshal(body, &got) == nil {
				break
			}
			if time.Now().After(deadline) {
				logs, _ := os.ReadFile(site.ErrorLog)
				t.Fatalf("status %d body %q\n%s", resp.StatusCode, body, logs[max(0, len(logs)-2000):])
			}
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	want := map[string]string{"HTTP_HOST": "site.test", "SERVER_NAME": "site.test", "SERVER_PORT": "443", "HTTPS": "on"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("PHP saw %s=%q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
