package redact

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	cases := []struct {
		name  string
		extra []string
		want  bool
	}{
		{"Authorization", nil, true},
		{"proxy-authorization", nil, true},
		{"Cookie", nil, true},
		{"SET-COOKIE", nil, true},
		{"X-Api-Key", nil, true},
		{"x_api_key", nil, true},
		{"pwd_pass", nil, true},
		{"password", nil, true},
		{"DB_PASSWORD", nil, true},
		{"passwd", nil, true},
		{"NONCE_SALT", nil, true},
		{"db_pwd", nil, true},
		{"X-Credentials", nil, true},
		{"saltwater", nil, false},
		{"client_secret", nil, true},
		{"X-Auth-Token", nil, true},
		{"PHPSESSID", nil, false}, // one word; name it with --redact
		{"PHPSESSID", []string{"phpsessid"}, true},
		{"wp_session", nil, true},
		{"mariadb.password", nil, true},
		{"user[pass]", nil, true},
		{"--password", nil, true},
		{" token ", nil, true},
		{"compass", nil, false},
		{"keyboard", nil, false},
		{"passive", nil, false},
		{"Keep-Alive", nil, false},
		{"author", nil, false},
		{"Authorization-Mode", nil, false}, // only the header itself
		{"pm.max_children", nil, false},
		{"pwd", nil, true}, // WordPress's login form field
		{"X-Tenant", []string{"x-tenant"}, true},
		{"X-Tenant-Id", []string{"x-tenant"}, false}, // extra names are whole names
		{"", []string{""}, false},
	}
	for _, c := range cases {
		if got := IsSecretName(c.name, c.extra); got != c.want {
			t.Errorf("IsSecretName(%q, %q) = %v, want %v", c.name, c.extra, got, c.want)
		}
	}
}

func TestHeader(t *testing.T) {
	cases := []struct {
		in    string
		extra []string
		want  string
	}{
		{"X-Api-Key: k3y", nil, "X-Api-Key: <redacted>"},
		{"Authorization: Bearer abc.def", nil, "Authorization: <redacted>"},
		{"Cookie: a=1; b=2", nil, "Cookie: <redacted>"},
		{"cookie:a=1", nil, "cookie: <redacted>"},
		{"Accept: text/html", nil, "Accept: text/html"},
		{"Referer: http://u:p4ss@127.0.0.1/?token=t", nil, "Referer: http://u:<redacted>@127.0.0.1/?token=<redacted>"},
		{"X-Tenant: acme", []string{"X-TENANT"}, "X-Tenant: <redacted>"},
		{"Authorization:", nil, "Authorization:"},
		{"NoColon", nil, "NoColon"},
	}
	for _, c := range cases {
		if got := Header(c.in, c.extra); got != c.want {
			t.Errorf("Header(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestForm(t *testing.T) {
	cases := []struct {
		in    string
		extra []string
		want  string
	}{
		{"a=1&pwd_pass=x", nil, "a=1&pwd_pass=<redacted>"},
		{"log=admin&pwd=hunter2&wp-submit=Log+In", nil, "log=admin&pwd=<redacted>&wp-submit=Log+In"},
		{"log=admin&pwd=hunter2", []string{"pwd"}, "log=admin&pwd=<redacted>"},
		{"user%5Bpass%5D=x&b=2", nil, "user%5Bpass%5D=<redacted>&b=2"},
		{"api%5Fkey=x", nil, "api%5Fkey=<redacted>"},
		{"token=&a=1", nil, "token=&a=1"},
		{"token&a=1", nil, "token&a=1"},
		{"comment=Hi&author=b&email=b%40example.com", nil, "comment=Hi&author=b&email=b%40example.com"},
		{"redirect=http://u:p@h/", nil, "redirect=http://u:p@h/"},
		// Not form-encoded: redacted as text.
		{`{"user": "a", "password": "s3cret", "n": 1}`, nil, `{"user": "a", "password": "<redacted>", "n": 1}`},
		{`{"api_key":12345}`, nil, `{"api_key":"<redacted>"}`},
		{"<xml><pass>x</pass></xml>", nil, "<xml><pass>x</pass></xml>"},
		{"plain text", nil, "plain text"},
		{"", nil, ""},
	}
	for _, c := range cases {
		if got := Form(c.in, c.extra); got != c.want {
			t.Errorf("Form(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://u:p@127.0.0.1:8080/x", "http://u:<redacted>@127.0.0.1:8080/x"},
		{"http://tok3n@127.0.0.1/", "http://<redacted>@127.0.0.1/"},
		{"http://u:@h/", "http://u:@h/"},
		{"http://127.0.0.1:8080/index.php?a=1&token=t&b=2", "http://127.0.0.1:8080/index.php?a=1&token=<redacted>&b=2"},
		{"http://127.0.0.1/#access_token=t&x=1", "http://127.0.0.1/#access_token=<redacted>&x=1"},
		{"http://u:p@h?session=s", "http://u:<redacted>@h?session=<redacted>"},
		{"/wp-login.php?action=rp&key=k1&login=a", "/wp-login.php?action=rp&key=<redacted>&login=a"},
		{"fcgi://unix:/run/php/fpm.sock/var/www/index.php?pass=x", "fcgi://unix:/run/php/fpm.sock/var/www/index.php?pass=<redacted>"},
		{"http://127.0.0.1/a@b", "http://127.0.0.1/a@b"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/"},
		{"/plain/path", "/plain/path"},
	}
	for _, c := range cases {
		if got := URL(c.in, nil); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestArgs(t *testing.T) {
	cases := []struct {
		in    []string
		extra []string
		want  []string
	}{
		{[]string{"bench", "-H", "X-Api-Key: k", "http://127.0.0.1/"}, nil,
			[]string{"bench", "-H", "X-Api-Key: <redacted>", "http://127.0.0.1/"}},
		{[]string{"bench", "--header", "Cookie: a=1", "-H=Authorization: Basic eDp5", "-HX-Auth-Token: t", "--header=X-Secret: s"}, nil,
			[]string{"bench", "--header", "Cookie: <redacted>", "-H=Authorization: <redacted>", "-HX-Auth-Token: <redacted>", "--header=X-Secret: <redacted>"}},
		{[]string{"bench", "--body", "log=a&pass=x", "--body=pass=y&b=1"}, nil,
			[]string{"bench", "--body", "log=a&pass=<redacted>", "--body=pass=<redacted>&b=1"}},
		{[]string{"bench", "http://u:p@127.0.0.1/?token=t&a=1"}, nil,
			[]string{"bench", "http://u:<redacted>@127.0.0.1/?token=<redacted>&a=1"}},
		{[]string{"mysql", "--password", "p", "--token=t", "--secret="}, nil,
			[]string{"mysql", "--password", "<redacted>", "--token=<redacted>", "--secret="}},
		{[]string{"tune", "--set", "mariadb.password=x", "--set", "pm=static", "--workload", "/shop/?session=s"}, nil,
			[]string{"tune", "--set", "mariadb.password=<redacted>", "--set", "pm=static", "--workload", "/shop/?session=<redacted>"}},
		{[]string{"bench", "-H", "X-Tenant: acme", "--redact", "X-Tenant"}, []string{"x-tenant"},
			[]string{"bench", "-H", "X-Tenant: <redacted>", "--redact", "X-Tenant"}},
		{[]string{"bench", "-c", "10", "-d", "5s", "-H", "Accept: */*", "http://127.0.0.1:8080/"}, nil,
			[]string{"bench", "-c", "10", "-d", "5s", "-H", "Accept: */*", "http://127.0.0.1:8080/"}},
		{[]string{"bench", "-H"}, nil, []string{"bench", "-H"}},
		{[]string{"x", "--", "--password", "token=t"}, nil, []string{"x", "--", "--password", "token=<redacted>"}},
	}
	for _, c := range cases {
		in := slices.Clone(c.in)
		got := Args(c.in, c.extra)
		if !slices.Equal(got, c.want) {
			t.Errorf("Args(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Args changed its input: %q", c.in)
		}
	}
}

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{`define( 'DB_PASSWORD', 'x1' );`, `define( 'DB_PASSWORD', '<redacted>' );`},
		{`define('AUTH_KEY', 'k');`, `define('AUTH_KEY', '<redacted>');`},
		{`define('WP_DEBUG', 'false');`, `define('WP_DEBUG', 'false');`},
		{`password = s3cret`, `password = <redacted>`},
		{`mysql -u app --password=s3cret -h x`, `mysql -u app --password=<redacted> -h x`},
		{`{"db_password": "s3cret", "db_user": "app"}`, `{"db_password": "<redacted>", "db_user": "app"}`},
		{`dsn mysql://app:s3cret@localhost/app`, `dsn mysql://app:<redacted>@localhost/app`},
		{`-H "Authorization: Bearer abc.def" -H 'X-Api-Key: k' http://x/`, `-H "Authorization: <redacted>" -H 'X-Api-Key: <redacted>' http://x/`},
		{`-H 'Cookie: a=1; b=2' http://x/`, `-H 'Cookie: <redacted>' http://x/`},
		{`/wp-login.php?action=rp&key=k1&token=t1`, `/wp-login.php?action=rp&key=<redacted>&token=<redacted>`},
		{`phptune bench --body=pass=x http://x/`, `phptune bench --body=pass=<redacted> http://x/`},
		{`request: "GET /?session=abc HTTP/1.1", upstream: "fastcgi://unix:/x"`, `request: "GET /?session=<redacted> HTTP/1.1", upstream: "fastcgi://unix:/x"`},
		{`secret="a b" next`, `secret="<redacted>" next`},
		{`pm.max_children = 5`, `pm.max_children = 5`},
		{`opcache.jit_buffer_size = 64M`, `opcache.jit_buffer_size = 64M`},
		{`listen = /run/php/php8.2-fpm.sock`, `listen = /run/php/php8.2-fpm.sock`},
		{`http://127.0.0.1:8080/index.php`, `http://127.0.0.1:8080/index.php`},
		{`compass=north keyboard: us`, `compass=north keyboard: us`},
		{`12:30:45 started`, `12:30:45 started`},
	}
	for _, c := range cases {
		if got := Text(c.in, nil); got != c.want {
			t.Errorf("Text(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
	if got := Text("X-Tenant: acme, tenant=acme", []string{"x-tenant", "tenant"}); got != "X-Tenant: <redacted>" {
		t.Errorf("extra names: %q", got)
	}
}

// FuzzRedactForm: Form never panics, is idempotent, keeps every field and
// its name, and leaves no secret-named field of a form body with its value.
func FuzzRedactForm(f *testing.F) {
	for _, s := range []string{"a=1&pwd_pass=x", "token=&a", "user%5Bpass%5D=x", `{"password":"x"}`, "a=b=c&key=k=v", "%zz=1&auth=2"} {
		f.Add(s, "")
	}
	f.Add("tenant=x&b=1", "tenant")
	f.Fuzz(func(t *testing.T, body, extraName string) {
		extra := []string{extraName}
		out := Form(body, extra)
		if again := Form(out, extra); again != out {
			t.Fatalf("not idempotent on %q: %q then %q", body, out, again)
		}
		if !looksForm(body) {
			return
		}
		in, got := strings.Split(body, "&"), strings.Split(out, "&")
		if len(in) != len(got) {
			t.Fatalf("fields changed: %q -> %q", body, out)
		}
		for i := range in {
			name, value, _ := strings.Cut(in[i], "=")
			gname, gvalue, _ := strings.Cut(got[i], "=")
			if gname != name {
				t.Fatalf("name %q became %q", name, gname)
			}
			if IsSecretName(formName(name), extra) && value != "" && gvalue != Placeholder {
				t.Fatalf("secret field %q kept value %q in %q", name, gvalue, out)
			}
		}
	})
}

// FuzzRedactText: Text never panics and is idempotent, and a secret
// name=value pair or header line put into any text loses its value.
func FuzzRedactText(f *testing.F) {
	for _, s := range []string{"password=abc", `define('DB_PASSWORD','x')`, "mysql://u:p@h", `{"token": "t"}`,
		"Cookie: a=1; b=2", "--body=pass=x", `"a":"token":x`, "http://token:x@h/?key=1#auth=2"} {
		f.Add(s, "s3cr3tv4lue")
	}
	f.Fuzz(func(t *testing.T, s, value string) {
		out := Text(s, nil)
		if again := Text(out, nil); again != out {
			t.Fatalf("not idempotent on %q: %q then %q", s, out, again)
		}
		// A distinctive value after a secret name, separated from the
		// text around it, never survives.
		if len(value) < 6 || strings.Contains(s, value) {
			return
		}
		for _, r := range value {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
				return
			}
		}
		for _, planted := range []string{s + " api_key=" + value + " " + s, s + "\nAuthorization: Bearer " + value + "\n" + s} {
			if out := Text(planted, nil); strings.Contains(out, value) {
				t.Fatalf("Text(%q) kept the secret: %q", planted, out)
			}
		}
	})
}

// FuzzRedactHeader: Header never panics, is idempotent and hides the value
// of every secret-named header.
func FuzzRedactHeader(f *testing.F) {
	f.Add("X-Api-Key", "k")
	f.Add("Accept", "text/html")
	f.Add("Referer", "http://u:p@h/?token=1")
	f.Fuzz(func(t *testing.T, name, value string) {
		line := name + ": " + value
		out := Header(line, nil)
		if again := Header(out, nil); again != out {
			t.Fatalf("not idempotent on %q: %q then %q", line, out, again)
		}
		if !strings.Contains(name, ":") && strings.TrimSpace(value) != "" && IsSecretName(name, nil) && out != name+": "+Placeholder {
			t.Fatalf("Header(%q) = %q", line, out)
		}
	})
}

// FuzzRedactArgs: Args never panics, is idempotent, keeps the number of
// arguments and hides -H and --body secrets.
func FuzzRedactArgs(f *testing.F) {
	f.Add("-H", "X-Api-Key: k", "http://u:p@127.0.0.1/?token=t")
	f.Add("--body", "a=1&pass=x", "--password")
	f.Add("--token=t", "-HCookie: a", "--")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		argv := []string{"bench", a, b, c}
		out := Args(argv, nil)
		if len(out) != len(argv) {
			t.Fatalf("Args(%q) = %q: arguments lost", argv, out)
		}
		if again := Args(out, nil); !slices.Equal(again, out) {
			t.Fatalf("not idempotent on %q: %q then %q", argv, out, again)
		}
		if a == "-H" {
			name, value, ok := strings.Cut(b, ":")
			if ok && strings.TrimSpace(value) != "" && IsSecretName(name, nil) && out[2] != name+": "+Placeholder {
				t.Fatalf("-H %q became %q", b, out[2])
			}
		}
	})
}

// FuzzRedactURL: URL never panics, is idempotent, and a password that Go's
// URL parser sees does not survive.
func FuzzRedactURL(f *testing.F) {
	f.Add("http://u:p@127.0.0.1/?token=t#x")
	f.Add("http://a@b@c/")
	f.Add("/p?key=1&x")
	f.Fuzz(func(t *testing.T, s string) {
		out := URL(s, nil)
		if again := URL(out, nil); again != out {
			t.Fatalf("not idempotent on %q: %q then %q", s, out, again)
		}
		u, err := url.Parse(s)
		if err != nil || u.User == nil {
			return
		}
		if pw, ok := u.User.Password(); ok && pw != "" && !strings.Contains(s, "%") && strings.Contains(out, ":"+pw+"@") {
			t.Fatalf("URL(%q) = %q keeps the password %q", s, out, pw)
		}
	})
}
