package lighttpd

import (
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
			ErrorLog: dir + "/log/lighttpd-error.log", AccessLog: dir + "/log/lighttpd-access.log",
			Listen: "127.0.0.1:8080", DocRoot: dir + "/www", FastCGI: "unix:" + dir + "/fpm/php-fpm.sock",
			FPMStatusPath: "/fpm-status", FPMPingPath: "/fpm-ping",
		},
		PidFile: dir + "/run/lighttpd.pid", UploadDir: dir + "/tmp",
		StatusPath: "/server-status", StatisticsPath: "/server-statistics",
	}
}

func config(t *testing.T, set ...string) knob.Config {
	t.Helper()
	cfg, err := knob.Defaults().Apply(append([]string{"server=lighttpd-fpm"}, set...))
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
		{"tcp-tuned", config(t, "listen=tcp", "lighttpd.max_worker=2", "lighttpd.max_connections=4096", "lighttpd.listen_backlog=2048",
			"lighttpd.max_keep_alive_requests=0", "lighttpd.max_keep_alive_idle=30", "lighttpd.access_log=on"), tcp},
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
		{"trailing backslash in docroot", func(s *Site) { s.DocRoot = `/srv/www\` }, `a backslash before the closing quote`},
		{"newline in docroot", func(s *Site) { s.DocRoot = "/srv/a\nserver.port = 80" }, `a newline`},
		{"relative docroot", func(s *Site) { s.DocRoot = "www" }, `it is not absolute`},
		{"no fpm", func(s *Site) { s.FastCGI = "" }, `neither unix:PATH nor IP:PORT`},
		{"fpm socket", func(s *Site) { s.FastCGI = `unix:/run/a\` }, `php-fpm's socket`},
		{"bad listen", func(s *Site) { s.Listen = "0.0.0.0" }, `is not IP:PORT`},
		{"listen name", func(s *Site) { s.Listen = "localhost:80" }, `is not IP:PORT`},
		{"status path", func(s *Site) { s.StatusPath = "/status$1" }, `not a plain absolute URL path`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := site("/lab")
			c.mutate(&s)
			out := Render(config(t), s)
			if !strings.HasPrefix(out, "# phptune refused") || !strings.Contains(out, "\nserver.modules = ( \"phptune refused to render this file: ") {
				t.Fatalf("not a refusal:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("refusal does not say %q:\n%s", c.want, out)
			}
			if strings.Count(out, "\n") != 3 {
				t.Errorf("a refusal is three lines:\n%s", out)
			}
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check() = %v, want it to say %q", err, c.want)
			}
		})
	}
}

// unquote reads a lighttpd string as its tokenizer does: \" is a quote,
// a backslash before anything else is itself, and the first other quote
// ends the string.
func unquote(s string) (string, bool) {
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
// or writes one server.document-root line that lighttpd reads back as
// exactly that path.
func FuzzRenderDocRoot(f *testing.F) {
	for _, s := range []string{"/srv/www", `/srv/a "b"\c`, `/srv/x\`, `/srv/a\"`, "/srv/a\nb", "/srv/ünï", "/srv/$1%1"} {
		f.Add(s)
	}
	cfg := knob.Defaults()
	cfg[knob.ServerKnob] = knob.LighttpdFPM
	f.Fuzz(func(t *testing.T, docroot string) {
		s := site("/lab")
		s.DocRoot = docroot
		out := Render(cfg, s)
		if strings.HasPrefix(out, "# phptune refused") {
			lines := strings.Split(out, "\n")
			if len(lines) != 4 {
				t.Fatalf("a refusal must be three lines: %q", out)
			}
			line := lines[2]
			if _, ok := unquote(strings.TrimSuffix(strings.TrimPrefix(line, "server.modules = ( "), " )")); !ok {
				t.Fatalf("the refusal's message is not one string: %q", line)
			}
			return
		}
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "server.document-root = ") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Fatalf("want one server.document-root line, got %q", lines)
		}
		got, ok := unquote(strings.TrimPrefix(lines[0], "server.document-root = "))
		if !ok || got != docroot {
			t.Fatalf("server.document-root reads back as %q (ok %v), want %q", got, ok, docroot)
		}
	})
}

// TestLighttpdAcceptsRendered runs `lighttpd -tt` on every golden case as
// the phptune account, and checks that a refusal fails it naming phptune's
// reason.
func TestLighttpdAcceptsRendered(t *testing.T) {
	if !Installed() {
		t.Skip("lighttpd is not installed (/usr/sbin/lighttpd); run: phptune setup")
	}
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	dir, run := configtest.Dir(t, "run", "log", "www", "fpm", "tmp")
	for _, c := range goldenCases(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(dir, c.name+".conf")
			if err := os.WriteFile(conf, []byte(Render(c.cfg, c.site)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := run(exec.Command(bin, TestArgs(conf)...), Env())
			if err != nil || strings.TrimSpace(out) != "" {
				t.Fatalf("lighttpd -tt refused %s (or warned): %v\n%s", c.name, err, out)
			}
		})
	}
	t.Run("refusal", func(t *testing.T) {
		s := site(dir)
		s.DocRoot = `/srv/x\`
		conf := filepath.Join(dir, "refused.conf")
		if err := os.WriteFile(conf, []byte(Render(config(t), s)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := run(exec.Command(bin, TestArgs(conf)...), Env())
		if err == nil || !strings.Contains(out, "phptune refused to render this file") {
			t.Fatalf("lighttpd -tt should fail naming phptune's refusal: %v\n%s", err, out)
		}
	})
}

func TestCheckLimit(t *testing.T) {
	for _, c := range []struct {
		conns string
		hard  uint64
		want  string // part of the error; "" when accepted
	}{
		{"1365", 4096, ""},
		{"1365", 1024, "needs server.max-fds=4096, above the descriptors a lab may open (hard limit 1024"},
		{"6000", 20000, ""},
		{"7000", 20000, "lighttpd.max_connections=7000 needs server.max-fds=21000"},
		{"7000", 20000, "use at most 6666"},
		{"21845", 1 << 20, ""},
	} {
		err := CheckLimit(config(t, "lighttpd.max_connections="+c.conns), c.hard)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s connections, hard limit %d: %v, want %q", c.conns, c.hard, err, c.want)
		}
	}
}
