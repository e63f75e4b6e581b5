package caddy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/base/configtest"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/fpmfront"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

func site(dir string) Site {
	return Site{fpmfront.Site{
		ErrorLog: dir + "/log/caddy-error.log", AccessLog: dir + "/log/caddy-access.log",
		Listen: "127.0.0.1:8080", DocRoot: dir + "/www", FastCGI: "unix:" + dir + "/fpm/php-fpm.sock",
		FPMStatusPath: "/fpm-status", FPMPingPath: "/fpm-ping",
	}}
}

func config(t *testing.T, set ...string) knob.Config {
	t.Helper()
	cfg, err := knob.Defaults().Apply(append([]string{"server=caddy-fpm"}, set...))
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
		{"tcp-tuned", config(t, "listen=tcp", "caddy.gomaxprocs=2", "caddy.lb_try_duration=500", "caddy.idle_timeout=30", "caddy.access_log=on"), tcp},
	}
}

func TestRenderGolden(t *testing.T) {
	for _, c := range goldenCases(t, "/var/lib/phptune/labs/demo") {
		t.Run(c.name, func(t *testing.T) {
			got := Render(c.cfg, c.site)
			path := filepath.Join("testdata", c.name+".Caddyfile")
			goldentest.CheckString(t, path, got)
		})
	}
}

func TestEnv(t *testing.T) {
	for _, c := range []struct {
		set  []string
		want []string
	}{
		{nil, []string{"LANG=C"}},
		{[]string{"caddy.gomaxprocs=auto"}, []string{"LANG=C"}},
		{[]string{"caddy.gomaxprocs=3"}, []string{"LANG=C", "GOMAXPROCS=3"}},
	} {
		if got := Env(config(t, c.set...)); !slices.Equal(got, c.want) {
			t.Errorf("%v: Env = %q, want %q", c.set, got, c.want)
		}
	}
}

func TestRenderRefuses(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Site)
		want   string
	}{
		{"placeholder in docroot", func(s *Site) { s.DocRoot = "/srv/{$HOME}" }, `has '_' at byte 5, which Caddyfile cannot carry: Caddy replaces _$NAME_`},
		{"backslash in docroot", func(s *Site) { s.DocRoot = `/srv/a\b` }, `a backslash cannot be escaped`},
		{"newline in docroot", func(s *Site) { s.DocRoot = "/srv/a\n}\n:80 {" }, `a newline`},
		{"relative docroot", func(s *Site) { s.DocRoot = "www" }, `it is not absolute`},
		{"no fpm", func(s *Site) { s.FastCGI = "" }, `neither unix:PATH nor IP:PORT`},
		{"fpm socket", func(s *Site) { s.FastCGI = "unix:/run/{x}.sock" }, `php-fpm's socket`},
		{"bad listen", func(s *Site) { s.Listen = ":80" }, `is not IP:PORT`},
		{"status path", func(s *Site) { s.FPMStatusPath = "/a b" }, `not a plain absolute URL path`},
		{"front controller", func(s *Site) { s.FrontController = "/app.php" }, `the front controller is index.php`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := site("/lab")
			c.mutate(&s)
			out := Render(config(t), s)
			if !strings.HasPrefix(out, "# phptune refused") || !strings.Contains(out, "\nimport \"phptune refused to render this file: ") {
				t.Fatalf("not a refusal:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("refusal does not say %q:\n%s", c.want, out)
			}
			if strings.Count(out, "\n") != 2 || strings.ContainsAny(out[strings.Index(out, "\n"):], "{}\\*?[]") {
				t.Errorf("a refusal is two lines, with no brace, backslash or wildcard:\n%s", out)
			}
			if err := s.Check(); err == nil {
				t.Errorf("Check() accepted the site")
			}
		})
	}
}

// token reads a Caddyfile quoted token as Caddy's lexer does: \" is a
// quote, a backslash before anything else stays with it, and the first
// other quote ends the token.
func token(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		case s[i] == '"':
			return b.String(), i == len(s)-1
		default:
			b.WriteByte(s[i])
		}
	}
	return "", false
}

// FuzzRenderDocRoot: whatever the document root, Render either refuses it
// or writes one root line that Caddy reads back as exactly that path, with
// nothing Caddy would replace in it.
func FuzzRenderDocRoot(f *testing.F) {
	for _, s := range []string{"/srv/www", `/srv/a "b" #c`, `/srv/x\`, "/srv/{$HOME}", "/srv/a\nb", "/srv/ünï", "/srv/{path}"} {
		f.Add(s)
	}
	cfg := knob.Defaults()
	cfg[knob.ServerKnob] = knob.CaddyFPM
	f.Fuzz(func(t *testing.T, docroot string) {
		s := site("/lab")
		s.DocRoot = docroot
		out := Render(cfg, s)
		if strings.HasPrefix(out, "# phptune refused") {
			if strings.Count(out, "\n") != 2 {
				t.Fatalf("a refusal must be two lines: %q", out)
			}
			return
		}
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "\troot * ") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Fatalf("want one root line, got %q", lines)
		}
		got, ok := token(strings.TrimPrefix(lines[0], "\troot * "))
		if !ok || got != docroot || strings.ContainsAny(got, `{}\`) {
			t.Fatalf("root reads back as %q (ok %v), want %q without braces or backslashes", got, ok, docroot)
		}
	})
}

// TestCaddyValidatesRendered runs `caddy validate` on every golden case as
// the phptune account, and checks that a refusal fails it naming
// phptune's reason.
func TestCaddyValidatesRendered(t *testing.T) {
	if !Installed() {
		t.Skip("caddy is not installed (/usr/bin/caddy); run: phptune setup")
	}
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	dir, run := configtest.Dir(t, "log", "www", "fpm")
	for _, c := range goldenCases(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(dir, c.name+".Caddyfile")
			if err := os.WriteFile(conf, []byte(Render(c.cfg, c.site)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := run(exec.Command(bin, TestArgs(conf)...), Env(c.cfg))
			if err != nil || !strings.Contains(out, "Valid configuration") {
				t.Fatalf("caddy validate refused %s: %v\n%s", c.name, err, out)
			}
			if strings.Contains(out, `"level":"warn"`) {
				t.Errorf("caddy validate warned about %s:\n%s", c.name, out)
			}
		})
	}
	t.Run("refusal", func(t *testing.T) {
		s := site(dir)
		s.DocRoot = "/srv/{$HOME}"
		conf := filepath.Join(dir, "refused.Caddyfile")
		if err := os.WriteFile(conf, []byte(Render(config(t), s)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := run(exec.Command(bin, TestArgs(conf)...), nil)
		if err == nil || !strings.Contains(out, "phptune refused to render this file") {
			t.Fatalf("caddy validate should fail naming phptune's refusal: %v\n%s", err, out)
		}
	})
}
