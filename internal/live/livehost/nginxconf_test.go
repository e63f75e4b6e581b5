package livehost

import (
	"os"
	"strings"
	"testing"
)

func TestParseNginxDumpDebian(t *testing.T) {
	out, err := os.ReadFile("testdata/debian/nginx/nginx-T.txt")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseNginxDump(out)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"/etc/nginx/nginx.conf", "/etc/nginx/mime.types", "/etc/nginx/sites-enabled/default"}
	if strings.Join(c.Files, " ") != strings.Join(wantFiles, " ") || c.Main != wantFiles[0] {
		t.Fatalf("files %v", c.Files)
	}
	conf, _ := os.ReadFile("/etc/nginx/nginx.conf")
	if len(conf) > 0 && string(c.Text["/etc/nginx/nginx.conf"]) != string(conf) {
		t.Errorf("nginx.conf's text is not the file's, byte for byte")
	}
	if v, _ := First(c.MainDirectives("worker_processes")); v != "auto" {
		t.Errorf("worker_processes %q", v)
	}
	wc := c.EventsDirectives("worker_connections")
	if len(wc) != 1 || wc[0].Args[0] != "768" || wc[0].File != "/etc/nginx/nginx.conf" || wc[0].Line != 8 {
		t.Errorf("worker_connections %+v", wc)
	}
	al := c.HTTPDirectives("access_log")
	if len(al) != 1 || al[0].Args[0] != "/var/log/nginx/access.log" {
		t.Errorf("access_log %+v", al)
	}
	if len(c.HTTPDirectives("keepalive_timeout")) != 0 {
		t.Errorf("Debian 12 sets no keepalive_timeout")
	}
	var globs []string
	for _, inc := range c.HTTPIncludes {
		globs = append(globs, inc.Glob)
	}
	if strings.Join(globs, " ") != "/etc/nginx/mime.types /etc/nginx/conf.d/*.conf /etc/nginx/sites-enabled/*" {
		t.Errorf("http includes %v", globs)
	}
	if len(c.Servers) != 1 || c.Servers[0].File != "/etc/nginx/sites-enabled/default" {
		t.Fatalf("servers %+v", c.Servers)
	}
	s := c.Servers[0]
	if len(s.Listens) != 2 || s.Listens[0].Args[0] != "80" || s.Listens[1].Args[0] != "[::]:80" || strings.Join(s.Names, " ") != "_" {
		t.Errorf("server %+v", s)
	}
	if len(s.FastCGI) != 0 || len(c.Unreached) != 0 {
		t.Errorf("fastcgi %v unreached %v", s.FastCGI, c.Unreached)
	}
	// The offsets are the directive's text.
	text := string(c.Text[wc[0].File])
	if got := text[wc[0].Start:wc[0].End]; got != "worker_connections 768;" {
		t.Errorf("offsets give %q", got)
	}
	if got := text[c.EventsBlock.BodyStart-1 : c.EventsBlock.BodyStart]; got != "{" {
		t.Errorf("events body starts after %q", got)
	}
}

func dump(files ...string) []byte {
	var b strings.Builder
	for i := 0; i+1 < len(files); i += 2 {
		b.WriteString("# configuration file " + files[i] + ":\n" + files[i+1] + "\n")
	}
	return []byte(b.String())
}

func TestParseNginxDumpCases(t *testing.T) {
	for _, tc := range []struct {
		name, err string
		out       []byte
		check     func(t *testing.T, c *NginxConf)
	}{
		{name: "upstream resolved, nested includes, quotes", out: dump(
			"/etc/nginx/nginx.conf", "events {}\nhttp {\n fastcgi_keep_conn on;\n include conf.d/*.conf;\n upstream php { server unix:/run/php/a.sock; server 127.0.0.1:9001 weight=2; keepalive 8; }\n}\n",
			"/etc/nginx/conf.d/a.conf", "server { listen 127.0.0.1:8080 backlog=4096; server_name 'a b' c;\n location ~ \\.php$ { fastcgi_pass php; }\n location /x { fastcgi_keep_conn off; fastcgi_pass 9000; } access_log \"/var/log/a;b.log\" combined; }\n"),
			check: func(t *testing.T, c *NginxConf) {
				s := c.Servers[0]
				if len(s.FastCGI) != 2 || s.FastCGI[0].Upstream != "php" || strings.Join(s.FastCGI[0].Addrs, ",") != "unix:/run/php/a.sock,tcp:127.0.0.1:9001" {
					t.Errorf("fastcgi %+v", s.FastCGI)
				}
				if !s.FastCGI[0].KeepConn || s.FastCGI[1].KeepConn {
					t.Errorf("fastcgi_keep_conn inherited from http, off in /x: %+v", s.FastCGI)
				}
				if s.FastCGI[1].Addrs[0] != "tcp:127.0.0.1:9000" || s.FastCGI[1].File != "/etc/nginx/conf.d/a.conf" || s.FastCGI[1].Line != 3 {
					t.Errorf("bare port %+v", s.FastCGI[1])
				}
				if strings.Join(s.Names, "|") != "a b|c" || s.AccessLogs[0].Args[0] != "/var/log/a;b.log" {
					t.Errorf("names %q logs %+v", s.Names, s.AccessLogs)
				}
				if c.UpstreamKeepalive["php"] != 8 || c.HTTPDirectives("server")[0].From == nil {
					t.Errorf("keepalive %v / from", c.UpstreamKeepalive)
				}
			}},
		{name: "forged header shows as unreached", out: dump("/etc/nginx/nginx.conf", "events {}\n", "/etc/nginx/forged.conf", "worker_processes 1;\n"),
			check: func(t *testing.T, c *NginxConf) {
				if len(c.Unreached) != 1 || c.Unreached[0] != "/etc/nginx/forged.conf" {
					t.Errorf("unreached %v", c.Unreached)
				}
			}},
		{name: "variable braces, escaped quote", out: dump("/n.conf", "http { server { location / { fastcgi_pass $up; set $a \"x\\\"y\"; return 200 ${a}b; } } }\n"),
			check: func(t *testing.T, c *NginxConf) {
				if p := c.Servers[0].FastCGI[0]; p.Target != "$up" || len(p.Addrs) != 0 {
					t.Errorf("variable target %+v", p)
				}
			}},
		{name: "unbalanced", out: dump("/n.conf", "http {\n"), err: "unexpected end of file"},
		{name: "stray brace", out: dump("/n.conf", "}\n"), err: "unexpected \"}\""},
		{name: "no semicolon", out: dump("/n.conf", "worker_processes 1"), err: "unexpected end of file"},
		{name: "unterminated quote", out: dump("/n.conf", "a \"b;\n"), err: "unterminated"},
		{name: "text before header", out: []byte("hello\n# configuration file /n.conf:\n"), err: "before the first"},
		{name: "empty", out: nil, err: "no configuration file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseNginxDump(tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func FuzzParseNginxDump(f *testing.F) {
	if b, err := os.ReadFile("testdata/debian/nginx/nginx-T.txt"); err == nil {
		f.Add(b)
	}
	f.Add(dump("/a", "http { include /b; server { listen 80; fastcgi_pass x; } upstream x { server unix:/s; } }", "/b", "a 'b' \"c\\\"\" ${d}e;"))
	f.Add([]byte("# configuration file /a:\n# configuration file /a:\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		c, err := ParseNginxDump(out)
		if err != nil {
			return
		}
		var check func(ds []NginxDirective)
		check = func(ds []NginxDirective) {
			for _, d := range ds {
				text := c.Text[d.File]
				if d.Start < 0 || d.End > len(text) || d.Start >= d.End {
					t.Fatalf("%s: offsets %d..%d of %d", d.At(), d.Start, d.End, len(text))
				}
				check(d.Block)
			}
		}
		check(c.Root)
	})
}

// TestPoolAccessLogs: only the servers passing to a pool count, each
// with its own access_log or else the http level's.
func TestPoolAccessLogs(t *testing.T) {
	dump := "# configuration file /etc/nginx/nginx.conf:\n" +
		"http {\n access_log /var/log/nginx/access.log;\n" +
		" upstream shop { server unix:/run/php/shop.sock; }\n" +
		" server { listen 80; location ~ \\.php$ { fastcgi_pass unix:/run/php/php8.2-fpm.sock; } }\n" +
		" server { listen 81; access_log /var/log/nginx/shop.log; location / { fastcgi_pass shop; } }\n" +
		" server { listen 82; access_log logs/other.log; location / { fastcgi_pass 127.0.0.1:9000; } }\n" +
		"}\n"
	c, err := ParseNginxDump([]byte(dump))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		listen string
		logs   string
		passes bool
	}{
		{"unix:/run/php/php8.2-fpm.sock", "/var/log/nginx/access.log", true},
		{"unix:/run/php/shop.sock", "/var/log/nginx/shop.log", true},
		{"tcp:127.0.0.1:9000", "/usr/share/nginx/logs/other.log", true},
		{"unix:/srv/copy/run/php/php8.2-fpm.sock", "", false},
	}
	for _, k := range cases {
		logs, passes := c.PoolAccessLogs(k.listen, "")
		if strings.Join(logs, " ") != k.logs || passes != k.passes {
			t.Errorf("%s: logs %v passes %v; want %q %v", k.listen, logs, passes, k.logs, k.passes)
		}
	}
}

// TestTokenizeNginxEscapes holds the tokenizer to nginx's own reading of
// a backslash (ngx_conf_read_token): the same inside and outside quotes,
// \" \' \\ \t \r \n replaced, any other kept with its backslash
// (as Debian 12's nginx 1.22 answered "return 200 <word>" for each).
func TestTokenizeNginxEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`\.php$`, `\.php$`},
		{`"\.php$"`, `\.php$`},
		{`^/(?:a|b)\/x\d+$`, `^/(?:a|b)\/x\d+$`},
		{`a\"b`, `a"b`},
		{`'a\'b'`, `a'b`},
		{`a\\b`, `a\b`},
		{`a\tb`, "a\tb"},
		{`"a\nb"`, "a\nb"},
		{`a\ b`, `a\ b`},
		{`a\;b`, `a\;b`},
	} {
		toks, err := tokenizeNginx("t.conf", []byte("x "+tc.in+";"))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if len(toks) != 3 || toks[1].text != tc.want {
			var got []string
			for _, k := range toks {
				got = append(got, k.text)
			}
			t.Errorf("%s read as %q, want the word %q", tc.in, got, tc.want)
		}
	}
}

// TestTokenizeNginxQuoteParen: nginx lets ")" follow a quoted word (an
// if's condition: Debian 12's nginx -t accepts `if ($a = "b") {` and
// `'b'){`), where it starts a word of its own; any other character
// right after a quote is refused, as nginx refuses it.
func TestTokenizeNginxQuoteParen(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{`if ($http_x = "s3cret") { return 403; }`, `if|($http_x|=|s3cret|)|{|return|403|;|}`, ""},
		{`if ($arg_a = 'b'){ return 404; }`, `if|($arg_a|=|b|)|{|return|404|;|}`, ""},
		{`x "a"b;`, "", `unexpected 'b' after a quoted string`},
	} {
		toks, err := tokenizeNginx("t.conf", []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		var got []string
		for _, k := range toks {
			got = append(got, k.text)
		}
		if err != nil || strings.Join(got, "|") != tc.want {
			t.Errorf("%s read as %q (%v), want %s", tc.in, got, err, tc.want)
		}
	}
}
