package nginx

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/model/knob"
)

func testSite(prefix, docroot string) Site {
	return Site{Prefix: prefix + "/", PidFile: prefix + "/run/nginx.pid", ErrorLog: prefix + "/log/e.log", AccessLog: prefix + "/log/a.log",
		TempDir: prefix + "/tmp", Listen: "127.0.0.1:8080", DocRoot: docroot, FastCGI: "unix:" + prefix + "/run/php-fpm.sock",
		FrontController: "/index.php", FPMStatusPath: "/fpm-status", StubStatusPath: "/nginx-status"}
}

func TestRender(t *testing.T) {
	site := testSite("/lab", "/lab/www")
	def := Render(knob.Defaults(), site)
	for _, w := range []string{"worker_processes auto;", "worker_connections 768;", `access_log "/lab/log/a.log";`,
		"listen 127.0.0.1:8080 backlog=511;", `fastcgi_pass "unix:/lab/run/php-fpm.sock";`, "fastcgi_param HTTP_HOST $phptune_http_host;", `map $http_host $phptune_http_host { "" $host:$server_port; default $http_host; }`,
		`try_files $uri $uri/ "/index.php?$args";`, `fastcgi_param SCRIPT_FILENAME "/fpm-status";`, `client_body_temp_path "/lab/tmp/client_body";`,
		`location = "/nginx-status" { stub_status; allow 127.0.0.1; deny all; }`, "daemon off;", `root "/lab/www";`} {
		if !strings.Contains(def, w) {
			t.Errorf("default config lacks %q", w)
		}
	}
	if strings.Count(def, "fastcgi_param SCRIPT_NAME") != 2 {
		t.Errorf("each FastCGI location must send SCRIPT_NAME exactly once:\n%s", def)
	}
	cfg, _ := knob.Defaults().Apply([]string{"nginx.worker_processes=4", "nginx.access_log=off", "nginx.listen_backlog=4096", "nginx.keepalive_timeout=0"})
	tuned := Render(cfg, site)
	for _, w := range []string{"worker_processes 4;", "access_log off;", "backlog=4096;", "keepalive_timeout 0;"} {
		if !strings.Contains(tuned, w) {
			t.Errorf("tuned config lacks %q", w)
		}
	}
	site.FastCGI = "127.0.0.1:9000"
	if tcp := Render(knob.Defaults(), site); !strings.Contains(tcp, "fastcgi_pass 127.0.0.1:9000;") {
		t.Errorf("tcp fastcgi_pass not written as host:port:\n%s", tcp)
	}
}

// TestRenderPaths renders docroots and lab directories that hold the
// characters nginx's syntax treats specially: each is quoted and parses back
// to exactly its value, or the whole file is a refusal.
func TestRenderPaths(t *testing.T) {
	cases := []struct {
		name, docroot, prefix string
		refused               string // part of the refusal, "" when served
	}{
		{"plain", "/srv/www", "/lab", ""},
		{"space", "/srv/my site", "/my lab", ""},
		{"semicolon injection", "/srv/x;add_header X-Injected yes", "/lab", ""},
		{"braces", "/srv/{a}", "/lab{ }", ""},
		{"double quote", `/srv/a"b`, `/la"b`, ""},
		{"single quote", "/srv/it's", "/lab's", ""},
		{"hash", "/srv/a#b", "/lab#1", ""},
		{"backslash", `/srv/a\b\`, `/lab\`, ""},
		{"non-ASCII", "/srv/café", "/läb", ""},
		{"dollar in docroot", "/srv/a$uri", "/lab", "nginx root (the document root): path \"/srv/a$uri\" has '$' at byte 6"},
		{"dollar in lab (access_log)", "/srv/www", "/lab$x", "access_log"},
		{"newline", "/srv/a\nb", "/lab", `a newline ('\n')`},
		{"tab", "/srv/a\tb", "/lab", "a tab"},
		{"NUL", "/srv/a\x00b", "/lab", "a NUL byte"},
		{"bidi override", "/srv/a\u202eb", "/lab", "U+202E"},
		{"not UTF-8", "/srv/a\xffb", "/lab", "byte 0xff"},
		{"relative", "srv/www", "/lab", "not absolute"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			site := testSite(c.prefix, c.docroot)
			out := Render(knob.Defaults(), site)
			checkErr := site.Check()
			dirs, err := parse(out)
			if err != nil {
				t.Fatalf("rendered file does not parse: %v\n%s", err, out)
			}
			if c.refused != "" {
				if checkErr == nil || !strings.Contains(checkErr.Error(), c.refused) {
					t.Errorf("Check() = %v, want it to contain %q", checkErr, c.refused)
				}
				var pe *confpath.Error
				if !errors.As(checkErr, &pe) {
					t.Errorf("Check() = %T, want a *confpath.Error inside", checkErr)
				}
				if len(dirs) != 1 || !strings.HasPrefix(dirs[0].name, "phptune refused") || !strings.Contains(dirs[0].name, c.refused) {
					t.Errorf("a refused site must render as one refusal directive naming the reason, got %v", dirs)
				}
				return
			}
			if checkErr != nil {
				t.Fatalf("Check() = %v", checkErr)
			}
			want := map[string]string{"root": c.docroot, "pid": site.PidFile, "error_log": site.ErrorLog,
				"access_log": site.AccessLog, "client_body_temp_path": site.TempDir + "/client_body",
				"fastcgi_pass": site.FastCGI}
			for name, value := range want {
				got := find(dirs, name)
				if len(got) == 0 || !slices.Equal(got[0], []string{value}) {
					t.Errorf("%s = %q, want exactly [%q]", name, got, value)
				}
				for _, g := range got[1:] {
					if !slices.Equal(g, got[0]) {
						t.Errorf("%s differs between locations: %q", name, got)
					}
				}
			}
			if diff := names(dirs); !slices.Equal(diff, names(mustParse(t, Render(knob.Defaults(), testSite("/lab", "/srv/www"))))) {
				t.Errorf("directives differ from a plain site's (something was injected): %v", diff)
			}
		})
	}
}

// FuzzRender: for any docroot, the rendered file either is a refusal or
// parses back to the same directives as a plain site's, with exactly one
// root whose value is the docroot.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"/srv/www", "/a b", "/x;add_header X-Injected yes", "/{", `/"`, "/#", "/$x", "/a\nb", `/\`, `/\"`, "/'", "/é"} {
		f.Add(s)
	}
	plain := names(mustParse(f, Render(knob.Defaults(), testSite("/lab", "/srv/www"))))
	f.Fuzz(func(t *testing.T, docroot string) {
		out := Render(knob.Defaults(), testSite("/lab", docroot))
		dirs, err := parse(out)
		if err != nil {
			t.Fatalf("rendered file does not parse: %v\n%s", err, out)
		}
		if len(dirs) == 1 && strings.HasPrefix(dirs[0].name, "phptune refused") {
			if testSite("/lab", docroot).Check() == nil {
				t.Fatalf("refused a site that Check accepts: %q", docroot)
			}
			return
		}
		if err := testSite("/lab", docroot).Check(); err != nil {
			t.Fatalf("rendered a site that Check refuses (%v)", err)
		}
		roots := find(dirs, "root")
		if len(roots) != 1 || !slices.Equal(roots[0], []string{docroot}) {
			t.Fatalf("root = %q, want exactly [%q]", roots, docroot)
		}
		if got := names(dirs); !slices.Equal(got, plain) {
			t.Fatalf("directives differ from a plain site's: %v", got)
		}
	})
}

// directive is one parsed nginx directive: its block path, name and
// arguments.
type directive struct {
	name string
	args []string
}

// parse tokenizes nginx.conf the way ngx_conf_read_token does: whitespace
// separates words; ';' ends a directive, '{' opens a block and '}' closes
// one; '#' outside quotes starts a comment; in a double- or single-quoted
// word, a backslash escapes the next character (\" \' \\ stand for the
// character, \t \r \n for the control, any other pair stays as it is). A
// directive's name is reported with the block names above it, e.g.
// "http/server/root".
func parse(conf string) ([]directive, error) {
	var out []directive
	var stack, words []string
	i := 0
	for i < len(conf) {
		c := conf[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '#':
			for i < len(conf) && conf[i] != '\n' {
				i++
			}
		case c == ';' || c == '{':
			if len(words) == 0 {
				return nil, fmt.Errorf("unexpected %q at byte %d", c, i)
			}
			if c == ';' {
				out = append(out, directive{name: strings.Join(append(slices.Clone(stack), words[0]), "/"), args: words[1:]})
			} else {
				stack = append(stack, words[0])
			}
			words = nil
			i++
		case c == '}':
			if len(words) != 0 || len(stack) == 0 {
				return nil, fmt.Errorf("unexpected '}' at byte %d", i)
			}
			stack = stack[:len(stack)-1]
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(conf) && conf[j] != c; j++ {
				if conf[j] == '\\' {
					j++
				}
			}
			if j >= len(conf) {
				return nil, fmt.Errorf("unterminated quote at byte %d", i)
			}
			// nginx wants a space or ; { after a closing quote.
			if j+1 < len(conf) && !strings.ContainsRune(" \t\r\n;{", rune(conf[j+1])) {
				return nil, fmt.Errorf("unexpected %q after a quoted word at byte %d", conf[j+1], j+1)
			}
			words = append(words, unescape(conf[i+1:j]))
			i = j + 1
		default:
			// An unquoted word ends at whitespace, ';' or '{' (but "${"
			// does not end it); a backslash takes the next character
			// into the word.
			j := i
			variable := false
			for ; j < len(conf); j++ {
				ch := conf[j]
				if ch == '{' && variable {
					continue
				}
				variable = false
				if ch == '\\' && j+1 < len(conf) {
					j++
					continue
				}
				if ch == '$' {
					variable = true
					continue
				}
				if strings.IndexByte(" \t\r\n;{", ch) >= 0 {
					break
				}
			}
			words = append(words, unescape(conf[i:j]))
			i = j
		}
	}
	if len(words) != 0 || len(stack) != 0 {
		return nil, fmt.Errorf("unexpected end of file")
	}
	return out, nil
}

// unescape turns a word's escapes into the characters they stand for:
// \" \' \\ into the character, \t \r \n into the control; any other pair
// stays as it is.
func unescape(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] == '\\' && i+1 < len(w) {
			switch w[i+1] {
			case '"', '\'', '\\':
				b.WriteByte(w[i+1])
				i++
				continue
			case 't', 'r', 'n':
				b.WriteByte(map[byte]byte{'t': '\t', 'r': '\r', 'n': '\n'}[w[i+1]])
				i++
				continue
			}
		}
		b.WriteByte(w[i])
	}
	return b.String()
}

func mustParse(t testing.TB, conf string) []directive {
	t.Helper()
	d, err := parse(conf)
	if err != nil {
		t.Fatalf("%v\n%s", err, conf)
	}
	return d
}

// find returns the arguments of every directive called name, at any depth.
func find(dirs []directive, name string) [][]string {
	var out [][]string
	for _, d := range dirs {
		if d.name == name || strings.HasSuffix(d.name, "/"+name) {
			out = append(out, d.args)
		}
	}
	return out
}

func names(dirs []directive) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, d.name)
	}
	return out
}

// TestNginxAcceptsQuotedPaths runs the real `nginx -t` on a lab whose
// directory and docroot hold spaces and the characters nginx treats
// specially, and checks that nginx opened its logs at exactly those paths
// (so it read the values as written, not split or cut).
func TestNginxAcceptsQuotedPaths(t *testing.T) {
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat("/etc/nginx/mime.types"); err != nil {
		t.Skip("nginx's mime.types is not installed")
	}
	for _, name := range []string{"lab with spaces", `odd ;{}#'"\ lab`} {
		t.Run(name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), name)
			docroot := filepath.Join(prefix, "www root;add_header X-Injected yes")
			for _, d := range []string{"run", "log", "tmp", docroot} {
				if err := os.MkdirAll(filepath.Join(prefix, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			site := testSite(prefix, docroot)
			conf := filepath.Join(prefix, "nginx.conf")
			if err := os.WriteFile(conf, []byte(Render(knob.Defaults(), site)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, TestArgs(site.Prefix, conf, site.ErrorLog)...).CombinedOutput()
			if err != nil {
				t.Fatalf("nginx -t: %v\n%s", err, out)
			}
			for _, p := range []string{site.ErrorLog, site.AccessLog} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("nginx did not open %q: %v", p, err)
				}
			}
		})
	}
}

// TestNginxRejectsRefusal: the refusal a bad site renders makes nginx -t
// fail with the reason in its message.
func TestNginxRejectsRefusal(t *testing.T) {
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	site := testSite(dir, "/srv/a$b")
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(Render(knob.Defaults(), site)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, TestArgs(dir+"/", conf, filepath.Join(dir, "e.log"))...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "phptune refused to render this file") || !strings.Contains(string(out), "has '$'") {
		t.Fatalf("nginx -t on a refusal: %v\n%s", err, out)
	}
}

// TestRenderSite: a site lab's server answers to the site's names, also on
// a unix socket (status pages allowed from it), and passes PHP what
// production's nginx passes: the request's own Host (no HTTP_HOST with
// the lab's port), SERVER_PORT the site's, HTTPS=on for a TLS site.
func TestRenderSite(t *testing.T) {
	base := Site{Prefix: "/l/", PidFile: "/l/run/nginx.pid", ErrorLog: "/l/log/e.log", AccessLog: "/l/log/a.log", TempDir: "/l/tmp",
		Listen: "127.0.0.1:80", DocRoot: "/var/www/site", FastCGI: "unix:/l/fpm/php-fpm.sock",
		FrontController: "/index.php", StubStatusPath: "/nginx-status", FPMStatusPath: "/fpm-status"}
	tests := []struct {
		name      string
		edit      func(*Site)
		want, not []string
	}{
		{"plain lab", func(*Site) {}, []string{"server_name localhost;", "fastcgi_param HTTP_HOST $phptune_http_host;", "fastcgi_param SERVER_PORT $server_port;"}, []string{"unix:;", "HTTPS on"}},
		{"site over http", func(s *Site) {
			s.Names, s.UnixListen = []string{"site.test", "www.site.test"}, "/l/run/http.sock"
			s.SiteHost = &SiteHost{Name: "site.test", Port: 80}
		}, []string{"server_name site.test www.site.test;", `listen "unix:/l/run/http.sock" backlog=`, "fastcgi_param SERVER_PORT 80;", "fastcgi_param SERVER_NAME site.test;", "allow 127.0.0.1; allow unix:; deny all;"}, []string{"HTTPS on"}},
		{"site over tls", func(s *Site) {
			s.Names, s.UnixListen = []string{"site.test"}, "/l/run/http.sock"
			s.SiteHost = &SiteHost{Name: "site.test", Port: 443, HTTPS: true}
		}, []string{"fastcgi_param SERVER_PORT 443;", "fastcgi_param HTTPS on;", "fastcgi_param REQUEST_SCHEME https;"}, []string{"listen 443"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.edit(&s)
			out := Render(knob.Defaults(), s)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("has %q:\n%s", n, out)
				}
			}
		})
	}
	bad := base
	bad.Names = []string{"site.test;evil"}
	if err := bad.Check(); err == nil {
		t.Error("a server name with ';' was accepted")
	}
}
