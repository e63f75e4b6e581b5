package livehost_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

const wikiSite = `<VirtualHost *:80>
	ServerName wiki.test
	ServerAlias www.wiki.test *.wiki.example
	DocumentRoot ${WIKI_ROOT}
	Define SOCK /run/php/wiki.sock
	<FilesMatch \.php$>
		SetHandler "proxy:unix:${SOCK}|fcgi://localhost"
	</FilesMatch>
	ErrorLog ${APACHE_LOG_DIR}/wiki-error.log
</VirtualHost>

<VirtualHost *:443>
	ServerName wiki.test
	DocumentRoot ${WIKI_ROOT}
	SSLEngine on
	ProxyPassMatch "^/(.*\.php(/.*)?)$" \
		"fcgi://127.0.0.1:9002${WIKI_ROOT}/$1"
	php_admin_value memory_limit 256M
</VirtualHost>
`

// TestReadApacheConfig: a copy of Debian's /etc/apache2 with a site in
// sites-enabled, read as data: envvars and Define expand ${VAR}, the
// vhosts' names, roots, TLS and FastCGI hand-offs are where they are
// written, and Debian's php8.2-fpm.conf hands PHP on at server level
// unless mod_php is loaded (its <IfModule !mod_php8.c>).
func TestReadApacheConfig(t *testing.T) {
	for _, tc := range []struct {
		name          string
		layout        hosttest.ApacheLayout
		mpm, module   string
		serverProxies []string
	}{
		{"fpm", hosttest.ApacheLayout{FPMConf: true}, "event", "", []string{"unix:/run/php/php8.2-fpm.sock"}},
		{"modphp", hosttest.ApacheLayout{MPM: "prefork", ModPHP: true, FPMConf: true}, "prefork", "/usr/lib/apache2/modules/libphp8.2.so", nil},
		{"neither", hosttest.ApacheLayout{}, "event", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.layout.Sites = []hosttest.ApacheSite{{Name: "wiki", Conf: wikiSite}}
			tc.layout.Envvars = "export WIKI_ROOT=/srv/wiki/public\n"
			dir := hosttest.DebianApache(t, root, tc.layout)
			c, err := livehost.ReadApacheConfig(root)
			if err != nil {
				t.Fatal(err)
			}
			if c.MPM != tc.mpm || c.PHPModule != tc.module {
				t.Errorf("MPM %q module %q, want %q %q", c.MPM, c.PHPModule, tc.mpm, tc.module)
			}
			var sp []string
			for _, p := range c.Proxies {
				sp = append(sp, p.Addr)
			}
			if !reflect.DeepEqual(sp, tc.serverProxies) {
				t.Errorf("server-level hand-offs %v, want %v", sp, tc.serverProxies)
			}
			if !reflect.DeepEqual(c.Listens, []string{"80", "443", "443"}) {
				t.Errorf("listens %v", c.Listens)
			}
			if len(c.Vhosts) != 2 {
				t.Fatalf("vhosts %+v", c.Vhosts)
			}
			file := filepath.Join(dir, "sites-enabled", "wiki.conf")
			a, b := c.Vhosts[0], c.Vhosts[1]
			if a.File != file || a.Line != 1 || a.ServerName != "wiki.test" || !reflect.DeepEqual(a.Aliases, []string{"www.wiki.test", "*.wiki.example"}) ||
				a.DocumentRoot != "/srv/wiki/public" || a.RootAt != file+":4" || a.SSL || !reflect.DeepEqual(a.Addrs, []string{"*:80"}) {
				t.Errorf("port 80 vhost: %+v", a)
			}
			if len(a.Proxies) != 1 || a.Proxies[0].Addr != "unix:/run/php/wiki.sock" || a.Proxies[0].Line != 7 {
				t.Errorf("port 80 hand-off: %+v", a.Proxies)
			}
			if b.Line != 12 || !b.SSL || len(b.Proxies) != 1 || b.Proxies[0].Addr != "tcp:127.0.0.1:9002" || b.Proxies[0].Line != 16 {
				t.Errorf("port 443 vhost: %+v", b)
			}
			if b.PHPValues["php_admin_value[memory_limit]"] != "256M" || b.PHPValuesAt["php_admin_value[memory_limit]"] != file+":18" {
				t.Errorf("php values %v %v", b.PHPValues, b.PHPValuesAt)
			}
		})
	}
}

// TestReadApacheConfigNone: a host without apache2.conf has no Apache
// configuration, and no error.
func TestReadApacheConfigNone(t *testing.T) {
	c, err := livehost.ReadApacheConfig(t.TempDir())
	if c != nil || err != nil {
		t.Errorf("%+v, %v", c, err)
	}
}

func TestParseApacheEnvvars(t *testing.T) {
	got := livehost.ParseApacheEnvvars([]byte("SUFFIX=\nexport APACHE_LOG_DIR=/var/log/apache2$SUFFIX\nexport A=\"quoted\"\nexport B=$(id -u)\nexport LANG\n  export C=/x${SUFFIX}/y\n"))
	want := map[string]string{"APACHE_LOG_DIR": "/var/log/apache2", "A": "quoted", "C": "/x/y"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// FuzzParseApacheConfig: whatever a configuration file holds, parsing
// ends, and every vhost's hand-offs are addresses phptune can name.
func FuzzParseApacheConfig(f *testing.F) {
	f.Add(wikiSite)
	f.Add("<IfModule !mod_php8.c>\nSetHandler \"proxy:unix:/a|fcgi://x\"\n</IfModule>\nLoadModule php_module x.so\n")
	f.Add("<VirtualHost *:80>\nInclude x\nServerName a\\\nb\n</VirtualHost>\n</IfModule>\n")
	f.Add("Define A ${A}${A}\nDocumentRoot ${A}\n")
	f.Add("CustomLog ${X}/o.log vhost_combined\n<VirtualHost *:80>\nCustomLog \"|/bin/x\" combined env=!a\n</VirtualHost>\n")
	f.Fuzz(func(t *testing.T, text string) {
		c := livehost.ParseApacheConfig("/f.conf", []byte(text), map[string]string{"X": "y"})
		for _, l := range c.AccessLogs {
			if l.File == "" || l.Format == "" {
				t.Fatalf("access log %+v", l)
			}
		}
		for _, v := range c.Vhosts {
			for _, p := range append(v.Proxies, c.Proxies...) {
				if !strings.HasPrefix(p.Addr, "unix:") && !strings.HasPrefix(p.Addr, "tcp:") {
					t.Fatalf("hand-off %q", p.Addr)
				}
			}
		}
	})
}

// FuzzParseApacheEnvvars: whatever envvars holds, every variable kept
// has a plain name and a value no shell would expand.
func FuzzParseApacheEnvvars(f *testing.F) {
	f.Add("export APACHE_LOG_DIR=/var/log/apache2$SUFFIX\nexport A=\"b\"\n")
	f.Add("export =x\nexport B=$(id)\nexport C\n")
	f.Fuzz(func(t *testing.T, text string) {
		for k, v := range livehost.ParseApacheEnvvars([]byte(text)) {
			if k == "" || strings.ContainsAny(k, "= \t\n$") || strings.ContainsAny(v, "$`;\n") {
				t.Fatalf("%q=%q", k, v)
			}
		}
	})
}

// TestApacheServerNameInherited: a <VirtualHost> without ServerName
// takes the main server's.
func TestApacheServerNameInherited(t *testing.T) {
	c := livehost.ParseApacheConfig("/a.conf", []byte("ServerName Main.Test\n<VirtualHost *:80>\nDocumentRoot /srv/a\n</VirtualHost>\n"), nil)
	if c.ServerName != "main.test" || len(c.Vhosts) != 1 || c.Vhosts[0].ServerName != "" {
		t.Errorf("%+v", c)
	}
}
