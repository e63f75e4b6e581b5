package apache

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

func site(dir string) Site {
	return Site{
		ServerRoot: dir, PidFile: dir + "/run/apache2.pid", RuntimeDir: dir + "/run",
		ErrorLog: dir + "/log/apache-error.log", AccessLog: dir + "/log/apache-access.log",
		Listen: "127.0.0.1:8080", DocRoot: dir + "/www", StatusPath: "/server-status",
	}
}

func config(t *testing.T, set ...string) knob.Config {
	t.Helper()
	cfg, err := knob.Defaults().Apply(set)
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
	event := site(dir)
	event.FastCGI = "unix:" + dir + "/fpm/php-fpm.sock"
	event.FPMStatusPath, event.FPMPingPath = "/fpm-status", "/fpm-ping"
	tcp := event
	tcp.FastCGI = "127.0.0.1:9000"
	tcp.FrontController = "/index.php"
	modphp := site(dir)
	modphp.ModPHP = ModulesDir + "/libphp8.2.so"
	modphp.FrontController = "/index.php"
	modphp.Env = []string{"PHPTUNE_DB_CONFIG=" + dir + "/app/db.php"}
	// A site lab: production's names and routing carried.
	siteLab := event
	siteLab.Listen = "127.0.0.1:80"
	siteLab.SiteHost = &SiteHost{Names: []string{"wiki.test", "www.wiki.test"}, Port: 443, HTTPS: true}
	siteLab.Carried = &Carried{
		Lines:       []string{"RewriteEngine On", `RewriteRule ^wiki/(.*)$ /index.php?title=$1 [L,QSA]`, "DirectoryIndex index.php"},
		Directories: []Directory{{Path: dir + "/www", Lines: []string{"AllowOverride All", "Options FollowSymLinks", "Require all granted"}}},
		Modules:     []string{"headers", "expires"},
	}
	siteModPHP := modphp
	siteModPHP.Listen, siteModPHP.Env, siteModPHP.FrontController = "127.0.0.1:80", nil, ""
	siteModPHP.SiteHost = &SiteHost{Names: []string{"blog.test"}, Port: 80}
	siteModPHP.Carried = &Carried{Lines: []string{`php_admin_value upload_max_filesize "64M"`},
		Directories: []Directory{{Path: dir + "/www", Lines: []string{"AllowOverride All"}}}}
	// A mod_php site's lab run with the event MPM (a tune's challenger):
	// its php_value lines go to php-fpm's pool, not httpd.conf.
	siteFromModPHP := siteLab
	siteFromModPHP.Carried = &Carried{Lines: []string{"RewriteEngine On", `php_value upload_max_filesize "32M"`, `php_admin_flag	display_errors "off"`},
		Directories: siteLab.Carried.Directories}
	return []struct {
		name string
		cfg  knob.Config
		site Site
	}{
		{"event-fpm-defaults", config(t, "server=apache-event-fpm"), event},
		{"event-fpm-tcp-tuned", config(t, "server=apache-event-fpm", "apache.event.threads_per_child=100", "apache.max_request_workers=400",
			"apache.event.server_limit=4", "apache.event.max_spare_threads=200", "apache.keepalive=off", "apache.access_log=off"), tcp},
		{"prefork-modphp-defaults", config(t, "server=apache-prefork-modphp"), modphp},
		{"prefork-modphp-tuned", config(t, "server=apache-prefork-modphp", "apache.max_request_workers=8", "apache.prefork.start_servers=8",
			"apache.prefork.min_spare_servers=1", "apache.prefork.max_spare_servers=8", "apache.prefork.server_limit=8", "apache.max_connections_per_child=1000"), modphp},
		{"site-event-fpm", config(t, "server=apache-event-fpm"), siteLab},
		{"site-prefork-modphp", config(t, "server=apache-prefork-modphp"), siteModPHP},
		{"site-event-fpm-from-modphp", config(t, "server=apache-event-fpm"), siteFromModPHP},
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
	event := config(t, "server=apache-event-fpm")
	cases := []struct {
		name   string
		cfg    knob.Config
		mutate func(*Site)
		want   string
	}{
		{"env in docroot", event, func(s *Site) { s.FastCGI = "unix:/x.sock"; s.DocRoot = "/srv/${HOME}/www" }, `'$' at byte 5, which httpd.conf cannot carry: Apache replaces $ {NAME}`},
		{"pipe in socket", event, func(s *Site) { s.FastCGI = "unix:/srv/a|b.sock" }, `mod_proxy ends a unix socket path at '|'`},
		{"newline in docroot", event, func(s *Site) { s.FastCGI = "unix:/x.sock"; s.DocRoot = "/srv/a\nListen 80" }, `a newline`},
		{"relative docroot", event, func(s *Site) { s.FastCGI = "unix:/x.sock"; s.DocRoot = "www" }, `it is not absolute`},
		{"no fpm", event, func(s *Site) {}, `needs php-fpm's address`},
		{"no module", config(t, "server=apache-prefork-modphp"), func(s *Site) {}, `needs the path of Apache's PHP module`},
		{"bad listen", event, func(s *Site) { s.FastCGI = "unix:/x.sock"; s.Listen = "127.0.0.1:80 80" }, `not part of a host:port`},
		{"bad env", config(t, "server=apache-prefork-modphp"), func(s *Site) { s.ModPHP = "/m.so"; s.Env = []string{"A B=1"} }, `is not NAME=VALUE`},
		{"carried newline", event, func(s *Site) {
			s.FastCGI = "unix:/x.sock"
			s.Carried = &Carried{Lines: []string{"RewriteEngine On\nListen 81"}}
		}, `holds a control character`},
		{"carried section", event, func(s *Site) {
			s.FastCGI = "unix:/x.sock"
			s.Carried = &Carried{Directories: []Directory{{Path: "/srv", Lines: []string{"</Directory>"}}}}
		}, `opens a section`},
		{"carried variable", event, func(s *Site) {
			s.FastCGI = "unix:/x.sock"
			s.Carried = &Carried{Lines: []string{"RewriteBase ${HOME}"}}
		}, `names a variable`},
		{"carried module", event, func(s *Site) { s.FastCGI = "unix:/x.sock"; s.Carried = &Carried{Modules: []string{"cgi"}} }, `not a module a lab carries`},
		{"site name", event, func(s *Site) { s.FastCGI = "unix:/x.sock"; s.SiteHost = &SiteHost{Names: []string{"a b"}} }, `is not a host name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := site("/lab")
			c.mutate(&s)
			out := Render(c.cfg, s)
			if !strings.HasPrefix(out, "# phptune refused") || !strings.Contains(out, "\nError \"phptune refused to render this file: ") {
				t.Fatalf("not a refusal:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("refusal does not say %q:\n%s", c.want, out)
			}
			if strings.Count(out, "\n") != 3 {
				t.Errorf("a refusal is three lines:\n%s", out)
			}
		})
	}
}

// unquote reads an Apache quoted argument as ap_getword_conf does: within
// double quotes, \\ and \" stand for \ and ".
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	s = s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '"') {
			i++
		} else if s[i] == '"' {
			return "", false // an unescaped quote ends the argument early
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

// FuzzRenderDocRoot: whatever the document root, Render either refuses it or
// writes one DocumentRoot line that Apache reads back as exactly that path.
func FuzzRenderDocRoot(f *testing.F) {
	for _, s := range []string{"/srv/www", `/srv/a "b"\c`, "/srv/${X}", "/srv/a\nb", "/srv/ünï", `/srv/x\`, "/a$b"} {
		f.Add(s)
	}
	cfg := knob.Defaults()
	cfg[knob.ServerKnob] = knob.ApacheEventFPM
	f.Fuzz(func(t *testing.T, docroot string) {
		s := site("/lab")
		s.FastCGI = "unix:/lab/fpm/php-fpm.sock"
		s.DocRoot = docroot
		out := Render(cfg, s)
		if strings.HasPrefix(out, "# phptune refused") {
			if strings.Count(out, "\n") != 3 || strings.Contains(out, "${") {
				t.Fatalf("a refusal must be three lines with no ${: %q", out)
			}
			return
		}
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "DocumentRoot ") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Fatalf("want one DocumentRoot line, got %q", lines)
		}
		got, ok := unquote(strings.TrimPrefix(lines[0], "DocumentRoot "))
		if !ok || got != docroot {
			t.Fatalf("DocumentRoot reads back as %q (ok %v), want %q", got, ok, docroot)
		}
		if strings.Contains(out, "${") {
			t.Fatalf("Apache would expand ${ in %q", out)
		}
	})
}

// TestApacheAcceptsRendered runs `apache2 -t` on every golden case, as the
// phptune account, in a directory of its own.
func TestApacheAcceptsRendered(t *testing.T) {
	if !Installed() {
		t.Skip("apache2 is not installed (/usr/sbin/apache2); run: phptune setup --with-test-tools")
	}
	if _, err := FindModPHP(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("phptune")
		if err != nil {
			t.Skip("no phptune account to run apache2 -t as; run: phptune setup")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		defer func() {
			// t.TempDir's cleanup runs as root; nothing to chown back.
		}()
		for d := dir; d != "/" && d != filepath.Dir(d); d = filepath.Dir(d) {
			if d == os.TempDir() {
				break
			}
			_ = os.Chmod(d, 0o755)
		}
	}
	for _, d := range []string{"run", "log", "www", "fpm", "app"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(filepath.Join(dir, d), 0o777)
	}
	for _, c := range goldenCases(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(dir, c.name+".conf")
			if err := os.WriteFile(conf, []byte(Render(c.cfg, c.site)), 0o644); err != nil {
				t.Fatal(err)
			}
			bin, _ := Find()
			cmd := exec.Command(bin, TestArgs(dir, conf)...)
			cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, Env(c.site.ModPHP != "", filepath.Join(dir, "php"))...)
			if cred != nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Syntax OK") {
				t.Fatalf("apache2 -t refused %s: %v\n%s", c.name, err, out)
			}
		})
	}
	t.Run("refusal", func(t *testing.T) {
		s := site(dir)
		s.FastCGI = "unix:/x|y.sock"
		conf := filepath.Join(dir, "refused.conf")
		if err := os.WriteFile(conf, []byte(Render(config(t, "server=apache-event-fpm"), s)), 0o644); err != nil {
			t.Fatal(err)
		}
		bin, _ := Find()
		out, err := exec.Command(bin, TestArgs(dir, conf)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "phptune refused to render this file") {
			t.Fatalf("apache2 -t should fail naming phptune's refusal: %v\n%s", err, out)
		}
	})
}

// TestModPHPSetting: a carried mod_php line read as php-fpm's pool sets
// it; any other line is not one.
func TestModPHPSetting(t *testing.T) {
	for _, c := range []struct{ line, key, value string }{
		{`php_value upload_max_filesize "32M"`, "php_value[upload_max_filesize]", "32M"},
		{"php_admin_flag\tdisplay_errors  off", "php_admin_flag[display_errors]", "off"},
		{`php_admin_value open_basedir "/var/www:/tmp"`, "php_admin_value[open_basedir]", "/var/www:/tmp"},
		{`php_value include_path ".:/a \"b\"\\c"`, "php_value[include_path]", `.:/a "b"\c`},
		{`php_flag engine on`, "php_flag[engine]", "on"},
	} {
		key, value, ok := ModPHPSetting(c.line)
		if !ok || key != c.key || value != c.value {
			t.Errorf("ModPHPSetting(%q) = %q, %q, %v; want %q, %q", c.line, key, value, ok, c.key, c.value)
		}
	}
	for _, line := range []string{"RewriteEngine On", "php_value", `php_value a[b] "1"`, "PHPIniDir /etc", "php_valuex a 1"} {
		if key, _, ok := ModPHPSetting(line); ok {
			t.Errorf("ModPHPSetting(%q) = %q: not a mod_php setting", line, key)
		}
	}
}
