package recommend

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/caddy"
	"github.com/phptune/phptune/internal/servers/h2o"
	"github.com/phptune/phptune/internal/servers/lighttpd"
)

// webCases are recommendations for lighttpd, Caddy and h2o, each from its
// server's defaults, as a tune of that server starts.
func webCases(t *testing.T) []struct {
	name       string
	start, rec knob.Config
} {
	light := config(t, "server=lighttpd-fpm")
	cad := config(t, "server=caddy-fpm")
	h := config(t, "server=h2o-fpm")
	return []struct {
		name       string
		start, rec knob.Config
	}{
		{"lighttpd-defaults", light, light},
		{"lighttpd-tuned", light, config(t, "server=lighttpd-fpm", "pm=static", "pm.max_children=8", "listen=tcp",
			"lighttpd.max_worker=2", "lighttpd.max_connections=2048", "lighttpd.max_keep_alive_requests=0", "lighttpd.access_log=on")},
		{"caddy-defaults", cad, cad},
		{"caddy-tuned", cad, config(t, "server=caddy-fpm", "pm=static", "pm.max_children=8",
			"caddy.gomaxprocs=2", "caddy.lb_try_duration=500", "caddy.idle_timeout=30", "caddy.access_log=on")},
		{"h2o-defaults", h, h},
		{"h2o-tuned", h, config(t, "server=h2o-fpm", "pm=static", "pm.max_children=8", "listen=tcp",
			"h2o.num_threads=2", "h2o.max_connections=4096", "h2o.fastcgi_keepalive=2000", "h2o.access_log=off")},
	}
}

// TestWebFilesGolden: every file of a lighttpd, Caddy or h2o
// recommendation, against testdata/NAME/FILE (go test ./internal/live/recommend
// -update rewrites them).
func TestWebFilesGolden(t *testing.T) {
	for _, c := range webCases(t) {
		t.Run(c.name, func(t *testing.T) {
			files := Files(c.start, c.rec, Target{PHPVersion: "8.2"})
			web := WebFile(c.rec.Server())
			for _, f := range []string{NginxFile, ApacheFile, LighttpdFile, CaddyFile, H2OFile} {
				if _, ok := files[f]; ok != (f == web) {
					t.Errorf("%s: %s written: %v", c.rec.Server(), f, ok)
				}
			}
			if _, ok := files[PoolFile]; !ok {
				t.Errorf("%s runs php-fpm: no pool fragment", c.rec.Server())
			}
			checkGolden(t, c.name, files)
		})
	}
}

// TestWebFilesAccepted runs each server's own check on its recommended
// file as a host would use it: lighttpd -tt on Debian's lighttpd.conf with
// the drop-in enabled (no key set twice), caddy validate on the
// Caddyfile, h2o -t on a configuration with the keys at its top level.
func TestWebFilesAccepted(t *testing.T) {
	for _, c := range webCases(t) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := Files(c.start, c.rec, Target{PHPVersion: "8.2"})
			var cmd *exec.Cmd
			switch c.rec.Server() {
			case knob.LighttpdFPM:
				bin, err := lighttpd.Find()
				if err != nil {
					t.Skip(err)
				}
				debian, err := os.ReadFile("/etc/lighttpd/lighttpd.conf")
				if err != nil {
					t.Skipf("Debian's lighttpd.conf: %v", err)
				}
				dropIn := filepath.Join(dir, "99-phptune.conf")
				if err := os.WriteFile(dropIn, []byte(files[LighttpdFile]), 0o644); err != nil {
					t.Fatal(err)
				}
				// Debian's file, its conf-enabled/ replaced by the drop-in.
				main := strings.Replace(string(debian), `include "/etc/lighttpd/conf-enabled/*.conf"`, `include "`+dropIn+`"`, 1)
				if main == string(debian) {
					t.Fatalf("Debian's lighttpd.conf has no conf-enabled include to replace:\n%s", debian)
				}
				conf := filepath.Join(dir, "lighttpd.conf")
				if err := os.WriteFile(conf, []byte(main), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd = exec.Command(bin, lighttpd.TestArgs(conf)...)
			case knob.CaddyFPM:
				bin, err := caddy.Find()
				if err != nil {
					t.Skip(err)
				}
				conf := filepath.Join(dir, "Caddyfile")
				if err := os.WriteFile(conf, []byte(files[CaddyFile]), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd = exec.Command(bin, caddy.TestArgs(conf)...)
				cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
			case knob.H2OFPM:
				bin, err := h2o.Find()
				if err != nil {
					t.Skip(err)
				}
				conf := filepath.Join(dir, "h2o.conf")
				main := files[H2OFile] + "listen:\n  port: 8080\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: /var/www\n"
				if err := os.WriteFile(conf, []byte(main), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd = exec.Command(bin, h2o.TestArgs(conf)...)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s refused the recommendation: %v\n%s\n%s", cmd.Path, err, out, files[WebFile(c.rec.Server())])
			}
			if s := strings.TrimSpace(string(out)); c.rec.Server() == knob.LighttpdFPM && s != "" || c.rec.Server() == knob.H2OFPM && s != "configuration OK" {
				t.Errorf("%s warned about the recommendation:\n%s", cmd.Path, out)
			}
		})
	}
}
