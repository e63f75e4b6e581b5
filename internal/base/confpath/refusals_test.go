package confpath

import (
	"errors"
	"strings"
	"testing"
)

func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		use  func(r *Refusals) string
		want string // the output
		err  string // in the first refusal; "" none
	}{
		{"quote", func(r *Refusals) string { return r.Quote("root", "/srv/a b") }, `"/srv/a b"`, ""},
		{"quote refused", func(r *Refusals) string { return r.Quote("root", "rel/x") }, "", "h2o.conf root: "},
		{"url path", func(r *Refusals) string { return r.PlainURLPath("status", "/fpm-status") }, "/fpm-status", ""},
		{"url path space", func(r *Refusals) string { return r.PlainURLPath("status", "/a b") }, "/a b", `h2o.conf status: "/a b" is not a plain absolute URL path`},
		{"url path relative", func(r *Refusals) string { return r.PlainURLPath("status", "status") }, "status", "not a plain absolute URL path"},
		{"listen", func(r *Refusals) string { h, p := r.Listen("listen", "127.0.0.1:8080"); return h + " " + p }, "127.0.0.1 8080", ""},
		{"listen ipv6", func(r *Refusals) string { h, p := r.Listen("listen", "[::1]:80"); return h + " " + p }, "::1 80", ""},
		{"listen name", func(r *Refusals) string { r.Listen("listen", "localhost:80"); return "" }, "", `h2o.conf listen: "localhost:80" is not IP:PORT`},
		{"listen no port", func(r *Refusals) string { r.Listen("listen", "127.0.0.1:"); return "" }, "", "is not IP:PORT"},
		{"listen port name", func(r *Refusals) string { r.Listen("listen", "127.0.0.1:http"); return "" }, "", "is not IP:PORT"},
		{"fastcgi socket", func(r *Refusals) string {
			s, h, p := r.FastCGI("fastcgi", "unix:/run/php.sock")
			return s + "|" + h + "|" + p
		}, `"/run/php.sock"||`, ""},
		{"fastcgi socket refused", func(r *Refusals) string { r.FastCGI("fastcgi", "unix:run/php.sock"); return "" }, "", "h2o.conf fastcgi (php-fpm's socket): "},
		{"fastcgi tcp", func(r *Refusals) string {
			s, h, p := r.FastCGI("fastcgi", "127.0.0.1:9000")
			return s + "|" + h + "|" + p
		}, "|127.0.0.1|9000", ""},
		{"fastcgi other", func(r *Refusals) string { r.FastCGI("fastcgi", ""); return "" }, "", `h2o.conf fastcgi: php-fpm's address "" is neither unix:PATH nor IP:PORT`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Refusals{File: "h2o.conf", Syntax: H2OYAML}
			got := c.use(r)
			if c.want != "" && got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			switch err := r.Err(); {
			case c.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("refusal %v, want one with %q", err, c.err)
			}
		})
	}
}

func TestRefusalsKeepTheFirst(t *testing.T) {
	r := &Refusals{File: "Caddyfile", Syntax: Caddyfile}
	r.Add(nil)
	r.Listen("bind", "nowhere")
	r.PlainURLPath("status", "x")
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "bind") {
		t.Fatalf("first refusal %v, want the listen address's", err)
	}
}

func TestDoubleQuoted(t *testing.T) {
	for in, want := range map[string]string{`plain`: `"plain"`, `a "b"`: `"a \"b\""`, `c:\d\`: `"c:\\d\\"`} {
		if got := DoubleQuoted(in); got != want {
			t.Errorf("DoubleQuoted(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRefused(t *testing.T) {
	f := Refused{
		File:  "x.conf",
		Clean: func(msg string) string { return strings.ReplaceAll(msg, "{", "_") },
		Lines: func(sentence string) string { return DoubleQuoted(sentence) + ";\n" },
	}
	if got := f.Render("rendered\n", nil); got != "rendered\n" {
		t.Errorf("no refusal: %q", got)
	}
	want := "# phptune refused to render this x.conf: bad _path\n\"phptune refused to render this file: bad _path\";\n"
	if got := f.Render("partial", errors.New("bad {path")); got != want {
		t.Errorf("refusal:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriter(t *testing.T) {
	w := &Writer{Refusals: Refusals{File: "httpd.conf", Syntax: Apache}}
	w.Line("ServerRoot %s", w.Quote("ServerRoot", "/srv/a b"))
	w.Line("Listen %d", 80)
	if got, err := w.Result(); err != nil || got != "ServerRoot \"/srv/a b\"\nListen 80\n" {
		t.Fatalf("Result() = %q, %v", got, err)
	}
	w.Line("DocumentRoot %s", w.Quote("DocumentRoot", "rel/x"))
	w.Line("PidFile %s", w.Quote("PidFile", "rel/y"))
	if got, err := w.Result(); got != "" || err == nil || !strings.Contains(err.Error(), "httpd.conf DocumentRoot: ") {
		t.Fatalf("Result() after two refusals = %q, %v; want the first refusal", got, err)
	}
}
