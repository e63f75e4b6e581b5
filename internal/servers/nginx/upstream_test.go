package nginx

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestRenderUpstream(t *testing.T) {
	pools := []string{"unix:/lab/run/a.sock", "unix:/lab/run/b.sock"}
	tests := []struct {
		name  string
		set   []string
		pools []string
		want  []string
		not   []string
	}{
		{"one pool, no keep-alive: no upstream", nil, nil,
			[]string{`fastcgi_pass "unix:/lab/run/php-fpm.sock";`}, []string{"upstream", "fastcgi_keep_conn"}},
		{"two pools balanced", []string{"fpm.pools=2"}, pools,
			[]string{"upstream php_fpm {", `server "unix:/lab/run/a.sock" max_fails=3 fail_timeout=1s;`, `server "unix:/lab/run/b.sock" max_fails=3 fail_timeout=1s;`, "fastcgi_pass php_fpm;"},
			[]string{"keepalive 0", "fastcgi_keep_conn"}},
		{"keep-alive to one pool", []string{"nginx.fastcgi_keepalive=2"}, nil,
			[]string{"upstream php_fpm {", `server "unix:/lab/run/php-fpm.sock";`, "keepalive 2;", "fastcgi_pass php_fpm;", "fastcgi_keep_conn on;"}, []string{"max_fails"}},
		{"keep-alive to tcp pools", []string{"fpm.pools=2", "nginx.fastcgi_keepalive=1"}, []string{"127.0.0.1:9001", "127.0.0.1:9002"},
			[]string{"server 127.0.0.1:9001 max_fails=3", "server 127.0.0.1:9002 max_fails=3", "keepalive 1;"}, nil},
		{"pools without their addresses", []string{"fpm.pools=2"}, nil, []string{"phptune refused to render this file: nginx upstream: fpm.pools=2 needs 2 php-fpm addresses, got 1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := knob.Defaults().Apply(append([]string{"pm.max_children=8"}, tt.set...))
			if err != nil {
				t.Fatal(err)
			}
			site := testSite("/lab", "/lab/www")
			site.FPMPingPath = "/fpm-ping"
			site.FastCGIPools = tt.pools
			if len(tt.pools) > 0 {
				site.FastCGI = tt.pools[0]
			}
			out := Render(cfg, site)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("has %q:\n%s", w, out)
				}
			}
			if len(tt.pools) > 0 && strings.Contains(out, "upstream") {
				// The status and ping pages stay with the first pool.
				if n := strings.Count(out, "fastcgi_pass "+passOf(tt.pools[0])+";"); n != 2 {
					t.Errorf("status and ping pass to the first pool %d times, want 2:\n%s", n, out)
				}
			}
		})
	}
}

func passOf(addr string) string {
	p, _ := fastCGIPass(addr)
	return p
}

// TestNginxAcceptsUpstream runs the real `nginx -t` on pools behind an
// upstream with kept connections.
func TestNginxAcceptsUpstream(t *testing.T) {
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat("/etc/nginx/mime.types"); err != nil {
		t.Skip("nginx's mime.types is not installed")
	}
	prefix := filepath.Join(t.TempDir(), "lab with spaces")
	for _, d := range []string{"run", "log", "tmp", "www"} {
		if err := os.MkdirAll(filepath.Join(prefix, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := knob.Defaults().Apply([]string{"pm.max_children=9", "fpm.pools=3", "nginx.worker_processes=1", "nginx.fastcgi_keepalive=2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	site := testSite(prefix, filepath.Join(prefix, "www"))
	for _, s := range []string{"a", "b", "c"} {
		site.FastCGIPools = append(site.FastCGIPools, "unix:"+filepath.Join(prefix, "run", s+".sock"))
	}
	site.FastCGI = site.FastCGIPools[0]
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, []byte(Render(cfg, site)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, TestArgs(site.Prefix, conf, site.ErrorLog)...).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

func TestRenderWorkerKnobs(t *testing.T) {
	cfg, err := knob.Defaults().Apply([]string{"nginx.worker_cpu_affinity=auto", "nginx.multi_accept=on", "nginx.reuseport=on", "nginx.worker_rlimit_nofile=8192"})
	if err != nil {
		t.Fatal(err)
	}
	out := Render(cfg, testSite("/lab", "/lab/www"))
	for _, w := range []string{"worker_cpu_affinity auto;\n", "worker_rlimit_nofile 8192;\n", "    multi_accept on;\n", "listen 127.0.0.1:8080 backlog=511 reuseport;"} {
		if !strings.Contains(out, w) {
			t.Errorf("lacks %q:\n%s", w, out)
		}
	}
	def := Render(knob.Defaults(), testSite("/lab", "/lab/www"))
	for _, w := range []string{"worker_cpu_affinity", "worker_rlimit_nofile", "multi_accept", "reuseport"} {
		if strings.Contains(def, w) {
			t.Errorf("the default configuration has %q", w)
		}
	}
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	prefix := t.TempDir()
	for _, d := range []string{"run", "log", "tmp", "www"} {
		os.MkdirAll(filepath.Join(prefix, d), 0o755)
	}
	conf := filepath.Join(prefix, "nginx.conf")
	site := testSite(prefix, filepath.Join(prefix, "www"))
	if err := os.WriteFile(conf, []byte(Render(cfg, site)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, TestArgs(site.Prefix, conf, site.ErrorLog)...).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}
