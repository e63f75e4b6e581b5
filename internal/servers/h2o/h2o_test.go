package h2o

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/base/configtest"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/fpmfront"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

func site(dir string) Site {
	return Site{
		Site: fpmfront.Site{
			ErrorLog: dir + "/log/h2o-error.log", AccessLog: dir + "/log/h2o-access.log",
			Listen: "127.0.0.1:8080", DocRoot: dir + "/www", FastCGI: "unix:" + dir + "/fpm/php-fpm.sock",
			FPMStatusPath: "/fpm-status", FPMPingPath: "/fpm-ping",
		},
		PidFile: dir + "/run/h2o.pid", TempDir: dir + "/tmp", StatusPath: "/server-status",
	}
}

func config(t *testing.T, set ...string) knob.Config {
	t.Helper()
	cfg, err := knob.Defaults().Apply(append([]string{"server=h2o-fpm"}, set...))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func goldenCases(t *testing.T, dir string) []struct {
	name string
	cfg  knob.Config
	site Site
} {
	front := site(dir)
	front.FrontController = "/index.php"
	tcp := front
	tcp.FastCGI = "127.0.0.1:9000"
	return []struct {
		name string
		cfg  knob.Config
		site Site
	}{
		{"defaults", config(t), site(dir)},
		{"front-controller", config(t), front},
		{"tcp-tuned", config(t, "listen=tcp", "h2o.num_threads=4", "h2o.max_connections=4096", "h2o.http1_request_timeout=30",
			"h2o.fastcgi_keepalive=2000", "h2o.access_log=off"), tcp},
	}
}

func TestRenderGolden(t *testing.T) {
	for _, c := range goldenCases(t, "/var/lib/phptune/labs/demo") {
		t.Run(c.name, func(t *testing.T) {
			got := Render(c.cfg, c.site)
			path := filepath.Join("testdata", c.name+".conf")
			goldentest.CheckString(t, path, got)
		})
	}
}

func TestRenderRefuses(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Site)
		want   string
	}{
		{"newline in docroot", func(s *Site) { s.DocRoot = "/srv/a\nlisten: 80" }, `a newline`},
		{"relative docroot", func(s *Site) { s.DocRoot = "www" }, `it is not absolute`},
		{"no fpm", func(s *Site) { s.FastCGI = "" }, `neither unix:PATH nor IP:PORT`},
		{"fpm socket", func(s *Site) { s.FastCGI = "unix:run/php.sock" }, `php-fpm's socket`},
		{"bad listen", func(s *Site) { s.Listen = "127.0.0.1" }, `is not IP:PORT`},
		{"status path", func(s *Site) { s.StatusPath = "/a: b" }, `not a plain absolute URL path`},
		{"front controller", func(s *Site) { s.FrontController = "/app.php" }, `the front controller is index.php`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := site("/lab")
			c.mutate(&s)
			out := Render(config(t), s)
			if !strings.HasPrefix(out, "# phptune refused") || !strings.Contains(out, "\n\"phptune refused to render this file: ") {
				t.Fatalf("not a refusal:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("refusal does not say %q:\n%s", c.want, out)
			}
			if strings.Count(out, "\n") != 2 {
				t.Errorf("a refusal is two lines:\n%s", out)
			}
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check() = %v, want it to say %q", err, c.want)
			}
		})
	}
}

// FuzzRenderDocRoot: whatever the document root, Render either refuses it
// or writes one file.dir line whose YAML double-quoted string (\\ and \"
// its only escapes, which JSON reads alike) is exactly that path.
func FuzzRenderDocRoot(f *testing.F) {
	for _, s := range []string{"/srv/www", `/srv/a "b" #c: d`, `/srv/x\`, "/srv/{a}", "/srv/a\nb", "/srv/ünï", `/srv/\n`} {
		f.Add(s)
	}
	cfg := knob.Defaults()
	cfg[knob.ServerKnob] = knob.H2OFPM
	f.Fuzz(func(t *testing.T, docroot string) {
		s := site("/lab")
		s.DocRoot = docroot
		out := Render(cfg, s)
		if strings.HasPrefix(out, "# phptune refused") {
			lines := strings.Split(out, "\n")
			var msg string
			if len(lines) != 3 || !strings.HasSuffix(lines[1], `": ON`) || json.Unmarshal([]byte(strings.TrimSuffix(lines[1], ": ON")), &msg) != nil {
				t.Fatalf("a refusal must be a comment and one quoted key: %q", out)
			}
			return
		}
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "        file.dir: ") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Fatalf("want one file.dir line, got %q", lines)
		}
		var got string
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[0], "        file.dir: ")), &got); err != nil || got != docroot {
			t.Fatalf("file.dir reads back as %q (%v), want %q", got, err, docroot)
		}
	})
}

// TestH2OAcceptsRendered runs `h2o -t` on every golden case as the phptune
// account, and checks that a refusal fails it naming phptune's reason.
func TestH2OAcceptsRendered(t *testing.T) {
	if !Installed() {
		t.Skip("h2o is not installed (/usr/bin/h2o); run: phptune setup")
	}
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	dir, run := configtest.Dir(t, "run", "log", "www", "fpm")
	for _, c := range goldenCases(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(dir, c.name+".conf")
			if err := os.WriteFile(conf, []byte(Render(c.cfg, c.site)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := run(exec.Command(bin, TestArgs(conf)...), Env())
			if err != nil || strings.TrimSpace(out) != "configuration OK" {
				t.Fatalf("h2o -t refused %s (or warned): %v\n%s", c.name, err, out)
			}
		})
	}
	t.Run("refusal", func(t *testing.T) {
		s := site(dir)
		s.DocRoot = "/srv/a\nb"
		conf := filepath.Join(dir, "refused.conf")
		if err := os.WriteFile(conf, []byte(Render(config(t), s)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := run(exec.Command(bin, TestArgs(conf)...), Env())
		if err == nil || !strings.Contains(out, "unknown command: phptune refused to render this file") {
			t.Fatalf("h2o -t should fail naming phptune's refusal: %v\n%s", err, out)
		}
	})
}
