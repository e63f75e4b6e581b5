package confpath

import (
	"errors"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	path := `/a b;{c}#'"\$d`
	for _, c := range []struct {
		syntax Syntax
		want   string
	}{
		{NginxLiteral, `"/a b;{c}#'\"\\$d"`},
		{PHPIni, `"/a b;{c}#'\"\\\$d"`},
		{FPM, `"/a b;{c}#'\"\\\$d"`},
		{FPMListen, `"/a b;{c}#'\"\\\$d"`},
		{MyCnf, `"/a b;{c}#'\"\\$d"`},
		{MyCnfList, `"/a b;{c}#'\"\\$d"`},
		{Lighttpd, `"/a b;{c}#'\"\$d"`},
		{H2OYAML, `"/a b;{c}#'\"\\$d"`},
	} {
		got, err := c.syntax.Quote(path)
		if err != nil || got != c.want {
			t.Errorf("%s: Quote(%q) = %s, %v; want %s", c.syntax, path, got, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		syntax Syntax
		path   string
		want   string // part of the error; "" when accepted
	}{
		{NginxVariables, "/srv/a b;add_header X-Injected yes", ""},
		{NginxVariables, "/srv/a$b", `path "/srv/a$b" has '$' at byte 6, which nginx.conf cannot carry: nginx reads $ there as the start of a variable`},
		{NginxLiteral, "/srv/a$b", ""},
		{FPM, "/srv/a$b${c}", ""},
		{FPM, "/srv/$pool/x", `has '$' at byte 5, which php-fpm.conf cannot carry: php-fpm replaces $pool`},
		{FPM, "/srv/a:b", ""},
		{FPMListen, "/srv/a:b/$pool", `has ':' at byte 6`},
		{MyCnf, "/srv/a:b#c", ""},
		{MyCnfList, "/srv/a:b", "MariaDB splits tmpdir at ':'"},
		{MyCnf, "/" + strings.Repeat("a", 510), ""},
		{MyCnf, "/" + strings.Repeat("a", 511), "it is 512 bytes; my.cnf takes paths of at most 511"},
		{NginxLiteral, "/" + strings.Repeat("a", 4095), "it is 4096 bytes"},
		{PHPIni, "relative/x", `path "relative/x" cannot be written into php.ini: it is not absolute`},
		{PHPIni, "", "not absolute"},
		{NginxLiteral, "/a\nb", `has a newline ('\n') at byte 2`},
		{NginxLiteral, "/a\tb", `has a tab ('\t') at byte 2`},
		{NginxLiteral, "/a\x00b", "has a NUL byte at byte 2"},
		{NginxLiteral, "/a\x7fb", "has U+007F (a control character) at byte 2"},
		{NginxLiteral, "/a\u0085b", "has U+0085 (a control character)"},
		{NginxLiteral, "/a\u202eb", "has U+202E (an invisible format character)"},
		{NginxLiteral, "/a\u00a0b", "has U+00A0 (a space other than ' ')"},
		{NginxLiteral, "/a\xc3b", "has byte 0xc3 at byte 2, which nginx.conf cannot carry: it is not UTF-8"},
		{NginxLiteral, "/café/日本/😀", ""},
		{Lighttpd, `/srv/a\b\"c`, ""},
		{Lighttpd, `/srv/a\`, `has '\\' at byte 6, which lighttpd.conf cannot carry: a backslash before the closing quote`},
		{Caddyfile, `/srv/a "b"#c;d$e`, ""},
		{Caddyfile, `/srv/a\b`, `has '\\' at byte 6, which Caddyfile cannot carry: a backslash cannot be escaped`},
		{Caddyfile, "/srv/{$HOME}", `has '{' at byte 5, which Caddyfile cannot carry: Caddy replaces {$NAME}`},
		{Caddyfile, "/srv/a}", `has '}' at byte 6`},
		{H2OYAML, `/srv/{a}: #b "c" \d`, ""},
		{H2OYAML, "/srv/a\nb", `a newline`},
	}
	for _, c := range cases {
		err := c.syntax.Check(c.path)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: Check(%q) = %v", c.syntax, c.path, err)
			}
			continue
		}
		var e *Error
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &e) {
			t.Errorf("%s: Check(%q) = %v, want an *Error containing %q", c.syntax, c.path, err, c.want)
		}
	}
}

func TestCheckValue(t *testing.T) {
	if err := MyCnf.CheckValue("root"); err != nil {
		t.Error(err)
	}
	if err := MyCnf.CheckValue(strings.Repeat("x", 1025)); err == nil || !strings.Contains(err.Error(), "values of at most 1024") {
		t.Errorf("long value: %v", err)
	}
	if err := FPM.CheckValue("a\nb"); err == nil {
		t.Error("a value with a newline was accepted")
	}
}

func TestCheckHome(t *testing.T) {
	for _, c := range []struct{ home, want string }{
		{"/var/lib/phptune", ""},
		{"/home/ann/my state;{#}'\"\\", ""},
		{"/home/ann/a$b", `phptune's home: path "/home/ann/a$b" has '$' at byte 11, which nginx.conf cannot carry`},
		{"/home/ann/a:b", "php-fpm takes a listen address holding ':' for host:port; set PHPTUNE_HOME to a directory whose path has no ':'"},
		{"/home/ann/a\nb", `set PHPTUNE_HOME to a directory whose path has no a newline ('\n')`},
		{"state", "not absolute; nginx, php-fpm and MariaDB would each resolve it against a different directory; set PHPTUNE_HOME to a short absolute path"},
	} {
		err := CheckHome(c.home)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckHome(%q) = %v, want %q", c.home, err, c.want)
		}
	}
}

func TestSummary(t *testing.T) {
	err := NginxLiteral.Check("/" + strings.Repeat("é", 400) + "\n")
	s := Summary(err)
	if len(s) > 303 || !strings.HasSuffix(s, "...") || strings.ContainsAny(s, "\n\r\x00") {
		t.Errorf("Summary = %q (%d bytes)", s, len(s))
	}
	if s := Summary(errors.New("a\nb\x00c")); s != "a?b?c" {
		t.Errorf("Summary = %q", s)
	}
}

// FuzzQuote: whatever the path, Quote either refuses it or returns a
// double-quoted string that unescapes (with the syntax's own escapes) to
// exactly the path, with no unescaped quote inside.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"/a", `/"`, `/\`, "/$pool", "/a\nb", "/a:b", "/\xff", "/a\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for _, s := range []Syntax{NginxLiteral, NginxVariables, PHPIni, FPM, FPMListen, MyCnf, MyCnfList, Lighttpd, Caddyfile, H2OYAML} {
			q, err := s.Quote(path)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Path != path {
					t.Fatalf("%s: error %v is not an *Error about the path", s, err)
				}
				if Summary(err) == "" {
					t.Fatalf("empty summary")
				}
				continue
			}
			if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
				t.Fatalf("%s: %q is not double-quoted", s, q)
			}
			var b strings.Builder
			inner := q[1 : len(q)-1]
			for i := 0; i < len(inner); i++ {
				switch {
				case inner[i] == '\\' && i+1 < len(inner) && strings.IndexByte(s.escape, inner[i+1]) >= 0:
					i++
				case strings.IndexByte(s.escape, inner[i]) >= 0:
					t.Fatalf("%s: %q holds an unescaped %q", s, q, inner[i])
				}
				b.WriteByte(inner[i])
			}
			if b.String() != path {
				t.Fatalf("%s: %q unquotes to %q, want %q", s, q, b.String(), path)
			}
			// Where a backslash is no escape of its own (lighttpd, Caddy),
			// one before the closing quote would escape it.
			if !strings.Contains(s.escape, `\`) && strings.HasSuffix(inner, `\`) {
				t.Fatalf("%s: %q ends with a backslash that escapes the closing quote", s, q)
			}
			if s.file == Caddyfile.file && strings.ContainsAny(path, `\{}`) {
				t.Fatalf("%s: %q holds a backslash or a brace", s, q)
			}
		}
	})
}
