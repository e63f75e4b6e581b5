package site

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/model/knob"
)

// apacheCopy writes a copy of Debian's /etc/apache2 under a temporary
// root with sites (name -> text, ${ROOT} replaced by the copy's root)
// and returns the root and the copy's vhosts.
func apacheCopy(t *testing.T, l hosttest.ApacheLayout, sites ...string) (string, []Vhost) {
	t.Helper()
	root := t.TempDir()
	for i := 0; i+1 < len(sites); i += 2 {
		l.Sites = append(l.Sites, hosttest.ApacheSite{Name: sites[i], Conf: strings.ReplaceAll(sites[i+1], "${ROOT}", root)})
	}
	hosttest.DebianApache(t, root, l)
	c, err := livehost.ReadApacheConfig(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, ApacheVhosts(c, root)
}

// TestMatchApacheName: Apache's own choice. Vhosts are grouped by the
// address and port they serve; in each group the first, in the order
// the configuration is read (sites-enabled sorted), whose ServerName or
// ServerAlias matches answers — a wildcard alias earlier wins over an
// exact name later, unlike nginx. A name only the default (first) vhost
// would answer is no match.
func TestMatchApacheName(t *testing.T) {
	_, vs := apacheCopy(t, hosttest.ApacheLayout{FPMConf: true},
		"000-default", "<VirtualHost *:80>\n\tServerAdmin webmaster@localhost\n\tDocumentRoot /var/www/html\n</VirtualHost>\n",
		"10-catch", "<VirtualHost *:80>\n\tServerName catch.test\n\tServerAlias *.catch.test b?.test\n\tDocumentRoot /srv/catch\n</VirtualHost>\n",
		"20-shop", "<VirtualHost *:80>\n\tServerName shop.test\n\tServerAlias www.shop.test b1.test\n\tDocumentRoot /srv/shop\n</VirtualHost>\n"+
			"<VirtualHost *:443>\n\tServerName shop.test\n\tDocumentRoot /srv/shop\n\tSSLEngine on\n</VirtualHost>\n"+
			"<VirtualHost 127.0.0.1:8080>\n\tServerName SHOP.test:8080\n\tDocumentRoot /srv/shop-admin\n</VirtualHost>\n",
	)
	if len(vs) != 5 {
		t.Fatalf("%d vhosts: %+v", len(vs), vs)
	}
	at := func(is []int) string {
		var out []string
		for _, i := range is {
			out = append(out, filepath.Base(vs[i].File)+":"+strconv.Itoa(vs[i].Line))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ name, want string }{
		{"shop.test", "20-shop.conf:1 20-shop.conf:6 20-shop.conf:11"},
		{"WWW.Shop.Test.", "20-shop.conf:1"},
		{"a.catch.test", "10-catch.conf:1"},
		{"b1.test", "10-catch.conf:1"}, // the earlier vhost's b?.test wins
		{"b12.test", ""},
		{"catch.test:80", "10-catch.conf:1"},
		{"localhost", ""}, // only the default vhost would answer
		{"other.test", ""},
	} {
		if got := at(MatchApacheName(vs, tc.name)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if !vs[0].Listens[0].DefaultServer || vs[1].Listens[0].DefaultServer || !vs[3].Listens[0].DefaultServer {
		t.Errorf("default vhosts: %+v %+v %+v", vs[0].Listens, vs[1].Listens, vs[3].Listens)
	}
	if vs[3].Port() != 443 || !vs[3].TLS() || vs[2].TLS() || vs[4].Port() != 8080 {
		t.Errorf("ports and TLS: %+v", vs)
	}
	// By document root, any server's.
	if got := at(MatchDir(vs, "/srv/shop/")); got != "20-shop.conf:1 20-shop.conf:6" {
		t.Errorf("by dir: %q", got)
	}
}

// TestBothServers: nginx in front on :80 and :443 (proxy_pass only),
// Apache behind it on :8080 running PHP: the name matches on both, the
// Apache vhost (which runs PHP) is the site, and the note says which
// answers on which port.
func TestBothServers(t *testing.T) {
	vs := []Vhost{
		{Server: "nginx", File: "/etc/nginx/sites-enabled/wiki", Line: 1, Names: []string{"wiki.test"}, Root: "/var/www/html",
			Listens: []Listen{{Addr: "80", Port: 80}, {Addr: "443", Port: 443, TLS: true}}, Proxy: []string{"http://127.0.0.1:8080"}},
		{Server: "apache", File: "/etc/apache2/sites-enabled/wiki.conf", Line: 1, Names: []string{"wiki.test"}, Root: "/srv/wiki",
			Listens: []Listen{{Addr: "127.0.0.1:8080", Port: 8080}}, FastCGI: []string{"unix:/run/php/php8.2-fpm.sock"}},
		{Server: "apache", File: "/etc/apache2/sites-enabled/other.conf", Line: 1, Names: []string{"other.test"}, Root: "/srv/other",
			Listens: []Listen{{Addr: "127.0.0.1:8080", Port: 8080}}},
	}
	m := matchNames(vs, "wiki.test")
	if len(m) != 2 || m[0] != 0 || m[1] != 1 {
		t.Fatalf("matches %v", m)
	}
	chosen, same, err := Choose(vs, m, "wiki.test", false)
	if err != nil || chosen != 1 || len(same) != 1 || same[0] != 0 {
		t.Fatalf("chosen %d, same %v, %v", chosen, same, err)
	}
	note := bothServers(vs, m, "wiki.test")
	want := "both nginx and Apache serve wiki.test: nginx on port 80, 443 (/etc/nginx/sites-enabled/wiki:1); Apache on port 8080 (/etc/apache2/sites-enabled/wiki.conf:1)"
	if note != want {
		t.Errorf("note %q\nwant %q", note, want)
	}
	// A name no server has: both servers' vhosts are named.
	_, _, err = Choose(vs, matchNames(vs, "none.test"), "none.test", false)
	var nm *NoMatchError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), "wiki.test at /etc/nginx/sites-enabled/wiki:1 (root /var/www/html)") ||
		!strings.Contains(err.Error(), "Apache other.test at /etc/apache2/sites-enabled/other.conf:1 (DocumentRoot /srv/other)") {
		t.Errorf("%v", err)
	}
}

// TestDiscoverApache: Discover on a copy of Debian's /etc/apache2 (no
// nginx runs for it): the site is found by name and by document root,
// its TLS twin chosen, PHP followed to the FastCGI address of the vhost
// or of conf-enabled/php8.2-fpm.conf, or to mod_php with Apache's
// php.ini and the vhost's php_admin_value on top.
func TestDiscoverApache(t *testing.T) {
	const wiki = "<VirtualHost *:80>\n\tServerName wiki.test\n\tDocumentRoot ${ROOT}/srv/wiki\n</VirtualHost>\n" +
		"<IfModule mod_ssl.c>\n<VirtualHost *:443>\n\tServerName wiki.test\n\tDocumentRoot ${ROOT}/srv/wiki\n\tSSLEngine on\n" +
		"\tphp_admin_value memory_limit 256M\n</VirtualHost>\n</IfModule>\n"
	const shop = "<VirtualHost *:80>\n\tServerName shop.test\n\tDocumentRoot ${ROOT}/srv/shop\n" +
		"\tProxyPassMatch ^/(.*\\.php)$ unix:/run/php/shop.sock|fcgi://localhost${ROOT}/srv/shop/\n</VirtualHost>\n"
	for _, tc := range []struct {
		name    string
		layout  hosttest.ApacheLayout
		query   string
		at      string
		fastcgi string
		modPHP  bool
	}{
		{"fpm conf", hosttest.ApacheLayout{FPMConf: true}, "wiki.test", "wiki.conf:6", "unix:/run/php/php8.2-fpm.sock", false},
		{"vhost's own", hosttest.ApacheLayout{FPMConf: true}, "shop.test", "shop.conf:1", "unix:/run/php/shop.sock", false},
		{"mod_php", hosttest.ApacheLayout{MPM: "prefork", ModPHP: true, FPMConf: true}, "wiki.test", "wiki.conf:6", "", true},
		{"by dir", hosttest.ApacheLayout{FPMConf: true}, "/srv/wiki", "wiki.conf:6", "unix:/run/php/php8.2-fpm.sock", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := apacheCopy(t, tc.layout, "wiki", wiki, "shop", shop)
			for _, d := range []string{"srv/wiki", "srv/shop", "etc/php/8.2/apache2"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(root, "etc/php/8.2/apache2/php.ini"), []byte("[PHP]\nmemory_limit = 128M\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			q := tc.query
			if IsDir(q) {
				q = root + q
			}
			s, err := Discover(context.Background(), Host{Root: root}, q)
			if err != nil {
				t.Fatal(err)
			}
			v := s.Vhost
			if os.Getenv("SHOWTEXT") != "" {
				var b strings.Builder
				WriteText(&b, s)
				t.Log(b.String())
			}
			if v.Server != "apache" || filepath.Base(v.File)+":"+strconv.Itoa(v.Line) != tc.at || !s.HTTPS && tc.at == "wiki.conf:6" {
				t.Errorf("vhost %+v (https %v)", v, s.HTTPS)
			}
			if s.DocRoot.Path != v.Root || v.Root == "" {
				t.Errorf("docroot %+v", s.DocRoot)
			}
			if tc.fastcgi != "" && (len(v.FastCGI) == 0 || v.FastCGI[0] != tc.fastcgi || s.Pool != nil && s.Pool.Listen != tc.fastcgi) {
				t.Errorf("fastcgi %v", v.FastCGI)
			}
			if tc.fastcgi != "" && s.Pool == nil && !strings.Contains(s.PoolError, tc.fastcgi) {
				t.Errorf("pool error %q", s.PoolError)
			}
			if tc.modPHP {
				if v.ModPHP == nil || v.ModPHP.MPM != "prefork" || v.ModPHP.Version != "8.2" || s.PHP == nil {
					t.Fatalf("mod_php %+v, php %+v", v.ModPHP, s.PHP)
				}
				ini := filepath.Join(root, "etc/php/8.2/apache2/php.ini")
				if s.PHP.Ini != ini || s.PHP.Settings["memory_limit"].Value != "256M" || s.PHP.Shadowed["memory_limit"].From != ini+":2" {
					t.Errorf("php %+v", s.PHP)
				}
				var b strings.Builder
				WriteText(&b, s)
				if !strings.Contains(b.String(), "pool        none: PHP runs in Apache via mod_php (/usr/lib/apache2/modules/libphp8.2.so") {
					t.Errorf("text:\n%s", b.String())
				}
			} else if v.ModPHP != nil {
				t.Errorf("mod_php %+v without it loaded", v.ModPHP)
			}
			if r := v.Rules; r == nil || len(r.Modules) == 0 {
				t.Errorf("apache rules %+v", r)
			}
		})
	}
	// A name no vhost has names Apache's vhosts.
	root, _ := apacheCopy(t, hosttest.ApacheLayout{FPMConf: true}, "wiki", wiki)
	_, err := Discover(context.Background(), Host{Root: root}, "nope.test")
	var nm *NoMatchError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), "Apache wiki.test at "+root+"/etc/apache2/sites-enabled/wiki.conf:1") {
		t.Errorf("%v", err)
	}
}

// TestDiscoverApachePool: Debian's php-fpm copied and started for real,
// an Apache copy whose vhost hands PHP to its socket (SetHandler
// "proxy:unix:...|fcgi://localhost"): the pool is found and tied to the
// address by the kernel's socket table, as for an nginx site.
func TestDiscoverApachePool(t *testing.T) {
	h := hosttest.Debian(t)
	docroot := filepath.Join(h.Root, "srv", "wiki")
	if err := os.MkdirAll(docroot, 0o755); err != nil {
		t.Fatal(err)
	}
	hosttest.DebianApache(t, h.Root, hosttest.ApacheLayout{Sites: []hosttest.ApacheSite{{Name: "wiki",
		Conf: "<VirtualHost *:80>\n\tServerName wiki.test\n\tDocumentRoot " + docroot + "\n\t<FilesMatch \\.php$>\n\t\tSetHandler \"proxy:unix:" + h.Socket + "|fcgi://localhost\"\n\t</FilesMatch>\n</VirtualHost>\n"}}})
	s, err := Discover(context.Background(), Host{Root: h.Root}, "wiki.test")
	if err != nil {
		t.Fatal(err)
	}
	if s.Pool == nil {
		t.Fatalf("no pool: %s", s.PoolError)
	}
	if s.Pool.Name != "www" || s.Pool.Listen != "unix:"+h.Socket || !strings.HasPrefix(s.Pool.Verified, "the kernel") || s.PHP == nil || s.PHP.Version != h.Version {
		t.Errorf("pool %+v, php %+v", s.Pool, s.PHP)
	}
	var b strings.Builder
	WriteText(&b, s)
	if !strings.Contains(b.String(), "pool        www of php-fpm master") || !strings.Contains(b.String(), "via proxy_fcgi ("+filepath.Join(h.Root, "etc/apache2/sites-enabled/wiki.conf")+":5)") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestApacheVhostsNames: a vhost's names are its ServerName (scheme and
// port removed; the main server's when it sets none) and aliases.
func TestApacheVhostsNames(t *testing.T) {
	c := livehost.ParseApacheConfig("/a.conf", []byte("ServerName main.test\n<VirtualHost *:80>\nDocumentRoot /srv/a\n</VirtualHost>\n"+
		"<VirtualHost *:443>\nServerName https://b.test:443\nServerAlias *.b.test\nSSLEngine on\n</VirtualHost>\n"), nil)
	vs := ApacheVhosts(c, "/")
	if len(vs) != 2 || strings.Join(vs[0].Names, " ") != "main.test" || strings.Join(vs[1].Names, " ") != "b.test *.b.test" || vs[1].Host() != "b.test" {
		t.Errorf("%+v", vs)
	}
	if m := MatchApacheName(vs, "x.b.test"); len(m) != 1 || m[0] != 1 {
		t.Errorf("x.b.test: %v", m)
	}
}

// TestApacheUnreadable: an Apache configuration that cannot be read (a
// sites-enabled link leading out of /etc/apache2) is an error when
// nginx gives no vhosts either.
func TestApacheUnreadable(t *testing.T) {
	root, _ := apacheCopy(t, hosttest.ApacheLayout{})
	if err := os.WriteFile(filepath.Join(root, "evil.conf"), []byte("<VirtualHost *:80>\nServerName evil.test\n</VirtualHost>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/apache2/sites-enabled"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "evil.conf"), filepath.Join(root, "etc/apache2/sites-enabled/evil.conf")); err != nil {
		t.Fatal(err)
	}
	_, err := Discover(context.Background(), Host{Root: root}, "evil.test")
	if err == nil || !strings.Contains(err.Error(), "reading Apache's configuration") || !strings.Contains(err.Error(), "outside") {
		t.Errorf("%v", err)
	}
}

// TestApacheMPMStart: production's sizing of the lab's MPM becomes its
// knobs; another MPM, or sizing the MPM's rules refuse, leaves Debian's.
func TestApacheMPMStart(t *testing.T) {
	line := func(v string) livehost.ApacheLine { return livehost.ApacheLine{Text: v, At: "mpm.conf:1"} }
	cases := []struct {
		name   string
		modPHP bool
		rules  ApacheRules
		want   map[string]string
		note   string
	}{
		{"event", false, ApacheRules{MPM: "event", Settings: map[string]livehost.ApacheLine{
			"MaxRequestWorkers": line("400"), "ThreadsPerChild": line("50"), "ServerLimit": line("8"), "MaxSpareThreads": line("150"), "KeepAlive": line("Off")}},
			map[string]string{"apache.max_request_workers": "400", "apache.event.threads_per_child": "50", "apache.event.server_limit": "8", "apache.keepalive": "off"}, "sized from production's 5"},
		{"prefork", true, ApacheRules{MPM: "prefork", Settings: map[string]livehost.ApacheLine{
			"MaxRequestWorkers": line("20"), "StartServers": line("4"), "MinSpareServers": line("2"), "MaxSpareServers": line("6"), "ServerLimit": line("20")}},
			map[string]string{"apache.max_request_workers": "20", "apache.prefork.start_servers": "4", "apache.prefork.server_limit": "20"}, "sized from production's 5"},
		{"worker", false, ApacheRules{MPM: "worker", Settings: map[string]livehost.ApacheLine{"MaxRequestWorkers": line("400")}},
			map[string]string{"apache.max_request_workers": "150"}, "runs the worker MPM"},
		{"broken", false, ApacheRules{MPM: "event", Settings: map[string]livehost.ApacheLine{"MaxRequestWorkers": line("4000"), "ServerLimit": line("2")}},
			map[string]string{"apache.max_request_workers": "150", "apache.event.server_limit": "16"}, "breaks the MPM's rules"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := Start{Config: knob.Defaults()}
			st.Config[knob.ServerKnob] = map[bool]string{false: knob.ApacheEventFPM, true: knob.ApachePreforkModPHP}[c.modPHP]
			var notes []string
			st.apacheMPM(&c.rules, c.modPHP, func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) })
			for k, v := range c.want {
				if st.Config[k] != v {
					t.Errorf("%s = %s, want %s", k, st.Config[k], v)
				}
			}
			if !strings.Contains(strings.Join(notes, "\n"), c.note) {
				t.Errorf("notes %q lack %q", notes, c.note)
			}
		})
	}
}
