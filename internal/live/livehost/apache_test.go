package livehost

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseApacheProxies(t *testing.T) {
	deb, err := os.ReadFile("testdata/debian/apache2/php8.2-fpm.conf")
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := ParseApacheProxies("/etc/apache2/conf-enabled/php8.2-fpm.conf", deb)
	if len(ps) != 1 || ps[0].Addr != "unix:/run/php/php8.2-fpm.sock" || ps[0].Line != 12 || ps[0].VirtualHost != "" {
		t.Errorf("Debian's php8.2-fpm.conf: %+v", ps)
	}
	vhost := `<VirtualHost *:8080>
	ServerName shop
	ProxyPassMatch "^/(.*\.php(/.*)?)$" "fcgi://localhost:9001/var/www/shop/$1"
	ProxyPassMatch ^/x/(.*\.php)$ \
		unix:/run/php/shop.sock|fcgi://localhost/var/www/x/
	SetHandler "proxy:fcgi://10.0.0.5"
	SetHandler None
	Include conf/extra.conf
</VirtualHost>
IncludeOptional sites-enabled/*.conf
`
	ps, incs := ParseApacheProxies("/v.conf", []byte(vhost))
	want := []ApacheProxy{{"tcp:127.0.0.1:9001", "/v.conf", 3, "*:8080"}, {"unix:/run/php/shop.sock", "/v.conf", 4, "*:8080"}, {"tcp:10.0.0.5:9000", "/v.conf", 6, "*:8080"}}
	if len(ps) != len(want) {
		t.Fatalf("%+v", ps)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, ps[i], want[i])
		}
	}
	if len(incs) != 2 || incs[0] != "conf/extra.conf" || incs[1] != "sites-enabled/*.conf" {
		t.Errorf("includes %v", incs)
	}
}

func TestParseApacheS(t *testing.T) {
	out := `VirtualHost configuration:
*:80                   is a NameVirtualHost
         default server www.example.com (/etc/apache2/sites-enabled/000-default.conf:1)
         port 80 namevhost www.example.com (/etc/apache2/sites-enabled/000-default.conf:1)
         port 80 namevhost shop (/etc/apache2/sites-enabled/shop.conf:3)
*:443                  localhost (/etc/apache2/sites-enabled/default-ssl.conf:2)
ServerRoot: "/etc/apache2"
Main DocumentRoot: "/var/www/html"
`
	vs := ParseApacheS([]byte(out))
	want := []ApacheVhost{{"*:80", "www.example.com", "/etc/apache2/sites-enabled/000-default.conf", 1},
		{"*:80", "shop", "/etc/apache2/sites-enabled/shop.conf", 3}, {"*:443", "localhost", "/etc/apache2/sites-enabled/default-ssl.conf", 2}}
	if len(vs) != len(want) {
		t.Fatalf("%+v", vs)
	}
	for i := range want {
		if vs[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, vs[i], want[i])
		}
	}
}

func TestReadApache(t *testing.T) {
	root := t.TempDir()
	etc := filepath.Join(root, "etc", "apache2")
	for _, d := range []string{"conf-enabled", "conf-available", "sites-enabled"} {
		os.MkdirAll(filepath.Join(etc, d), 0o755)
	}
	os.WriteFile(filepath.Join(etc, "apache2.conf"), []byte("IncludeOptional conf-enabled/*.conf\nIncludeOptional sites-enabled/*.conf\n"), 0o644)
	deb, _ := os.ReadFile("testdata/debian/apache2/php8.2-fpm.conf")
	os.WriteFile(filepath.Join(etc, "conf-available", "php8.2-fpm.conf"), deb, 0o644)
	os.Symlink("../conf-available/php8.2-fpm.conf", filepath.Join(etc, "conf-enabled", "php8.2-fpm.conf"))
	ps, err := ReadApache(root)
	if err != nil || len(ps) != 1 || ps[0].Addr != "unix:/run/php/php8.2-fpm.sock" {
		t.Fatalf("%+v %v", ps, err)
	}
	// A link out of the server root is refused.
	os.Symlink("/etc/passwd", filepath.Join(etc, "sites-enabled", "x.conf"))
	if _, err := ReadApache(root); err == nil {
		t.Error("a link out of etc/apache2 was followed")
	}
	if ps, err := ReadApache(t.TempDir()); ps != nil || err != nil {
		t.Errorf("no apache2.conf: %v %v", ps, err)
	}
}

func FuzzParseApache(f *testing.F) {
	f.Add([]byte("<VirtualHost *:80>\nSetHandler \"proxy:unix:/s|fcgi://x\"\n</VirtualHost>\n"), []byte("*:80 is a NameVirtualHost\n port 80 namevhost a (/f:1)\n"))
	f.Fuzz(func(t *testing.T, conf, s []byte) {
		ps, _ := ParseApacheProxies("/f", conf)
		for _, p := range ps {
			if p.Addr == "unix:" || p.Addr == "tcp:" || p.Line < 1 {
				t.Fatalf("%+v", p)
			}
		}
		ParseApacheS(s)
	})
}

func TestApacheDocumentRoots(t *testing.T) {
	root := t.TempDir()
	conf := filepath.Join(root, "etc", "apache2")
	os.MkdirAll(filepath.Join(conf, "sites-enabled"), 0o755)
	os.WriteFile(filepath.Join(conf, "apache2.conf"), []byte("DocumentRoot /var/www/html\nIncludeOptional sites-enabled/*.conf\n"), 0o644)
	os.WriteFile(filepath.Join(conf, "sites-enabled", "wiki.conf"), []byte("<VirtualHost *:8080>\n  ServerName wiki.test\n  DocumentRoot \"/srv/wiki\"\n</VirtualHost>\n"), 0o644)
	rs, err := ApacheDocumentRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Dir != "/var/www/html" || rs[0].VirtualHost != "" || rs[1].Dir != "/srv/wiki" || rs[1].VirtualHost != "*:8080" || rs[1].Line != 3 {
		t.Errorf("ApacheDocumentRoots = %+v", rs)
	}
	if rs, err := ApacheDocumentRoots(t.TempDir()); rs != nil || err != nil {
		t.Errorf("no apache2.conf: %v %v", rs, err)
	}
}

func FuzzParseApacheDocumentRoots(f *testing.F) {
	f.Add([]byte("<VirtualHost *:80>\nDocumentRoot \"/srv/a b\"\n</VirtualHost>\nInclude x\n"))
	f.Fuzz(func(t *testing.T, conf []byte) {
		rs, _ := ParseApacheDocumentRoots("/f", conf)
		for _, r := range rs {
			if r.Line < 1 || r.File != "/f" {
				t.Fatalf("%+v", r)
			}
		}
	})
}
