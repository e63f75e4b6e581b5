package seal

import (
	"net/netip"
	"os"
	"strings"
	"testing"
)

func TestSpecCheck(t *testing.T) {
	ok := Spec{Dir: "/var/lib/phptune/labs/a/seal"}
	cases := []struct {
		name string
		spec Spec
		want string // "" when valid, else a part of the error
	}{
		{"minimal", ok, ""},
		{"full", Spec{Dir: ok.Dir, Hosts: []string{"site.test", "www.site.test"}, Docroot: "/var/www/site",
			Binds: []Bind{{Source: "/var/lib/phptune/labs/a/mysqld", Target: "/run/mysqld"}},
			Hide:  []string{"/var/run/redis"},
			Own:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:80"), netip.MustParseAddrPort("[::1]:3306")}}, ""},
		{"relative dir", Spec{Dir: "labs/a"}, "not an absolute, clean path"},
		{"dir with ..", Spec{Dir: "/var/lib/../tmp/x"}, "not an absolute, clean path"},
		{"dir under /tmp", Spec{Dir: "/tmp/lab"}, "under /run, /tmp or /dev/shm"},
		{"dir in /dev/shm", Spec{Dir: "/dev/shm/lab"}, "under /run, /tmp or /dev/shm"},
		{"dir is /run", Spec{Dir: "/run"}, "under /run, /tmp or /dev/shm"},
		{"dir beside /tmp", Spec{Dir: "/tmpx/lab"}, ""},
		{"comma in docroot", Spec{Dir: ok.Dir, Docroot: "/var/www/a,upperdir=/etc"}, "mount options cannot carry"},
		{"colon in dir", Spec{Dir: "/var/lib/a:b"}, "mount options cannot carry"},
		{"space", Spec{Dir: "/var/lib/a b"}, "mount options cannot carry"},
		{"docroot /", Spec{Dir: ok.Dir, Docroot: "/"}, "cannot be sealed"},
		{"docroot in /tmp", Spec{Dir: ok.Dir, Docroot: "/tmp/site"}, "cannot be sealed"},
		{"docroot holds the dir", Spec{Dir: "/var/www/site/seal", Docroot: "/var/www/site"}, "cannot be sealed"},
		{"docroot inside the dir", Spec{Dir: ok.Dir, Docroot: ok.Dir + "/site"}, "cannot be sealed"},
		{"app root", Spec{Dir: ok.Dir, Docroot: "/srv/app/public", AppRoot: "/srv/app"}, ""},
		{"app root is the docroot", Spec{Dir: ok.Dir, Docroot: "/srv/app", AppRoot: "/srv/app"}, ""},
		{"app root without docroot", Spec{Dir: ok.Dir, AppRoot: "/srv/app"}, "does not hold the docroot"},
		{"app root beside the docroot", Spec{Dir: ok.Dir, Docroot: "/srv/site/public", AppRoot: "/srv/app"}, "does not hold the docroot"},
		{"app root /srv", Spec{Dir: ok.Dir, Docroot: "/srv/site", AppRoot: "/srv"}, "system directory"},
		{"app root /var/www", Spec{Dir: ok.Dir, Docroot: "/var/www/site", AppRoot: "/var/www"}, "system directory"},
		{"app root a home", Spec{Dir: ok.Dir, Docroot: "/home/alice/public_html", AppRoot: "/home/alice"}, "home directory"},
		{"app root holds the dir", Spec{Dir: "/srv/app/lab/seal", Docroot: "/srv/app/public", AppRoot: "/srv/app"}, "inside the seal's directory"},
		{"bind source in /run", Spec{Dir: ok.Dir, Binds: []Bind{{Source: "/run/mysqld", Target: "/run/mysqld"}}}, "under /run, /tmp or /dev/shm"},
		{"bind onto /", Spec{Dir: ok.Dir, Binds: []Bind{{Source: "/srv", Target: "/"}}}, "whole file system"},
		{"code bind", Spec{Dir: ok.Dir, Binds: []Bind{{Source: "/opt/pear/php", Target: "/opt/pear/php", ReadOnly: true, Code: true}}}, ""},
		{"code bind holding the app root", Spec{Dir: ok.Dir, Docroot: "/srv/apps/site/public", AppRoot: "/srv/apps/site", Binds: []Bind{{Source: "/srv/apps", Target: "/srv/apps", ReadOnly: true, Code: true}}}, "overlap"},
		{"code bind in the docroot", Spec{Dir: ok.Dir, Docroot: "/srv/site", Binds: []Bind{{Source: "/srv/site/lib", Target: "/srv/site/lib", ReadOnly: true, Code: true}}}, "overlap"},
		{"code bind writable", Spec{Dir: ok.Dir, Binds: []Bind{{Source: "/opt/pear/php", Target: "/opt/pear/php", Code: true}}}, "read-only at its own path"},
		{"code bind elsewhere", Spec{Dir: ok.Dir, Binds: []Bind{{Source: "/opt/pear/php", Target: "/srv/php", ReadOnly: true, Code: true}}}, "read-only at its own path"},
		{"bind relative", Spec{Dir: ok.Dir, Binds: []Bind{{Source: "srv", Target: "/run/x"}}}, "not an absolute"},
		{"link to the lab's socket", Spec{Dir: ok.Dir, Docroot: "/var/www/site", Links: []Link{{Path: "/var/lib/mysql-panel/mysqld.sock", Target: "/run/mysqld/mysqld.sock"}}}, ""},
		{"link in /tmp", Spec{Dir: ok.Dir, Links: []Link{{Path: "/tmp/mysql.sock", Target: "/run/mysqld/mysqld.sock"}}}, ""},
		{"link in /etc", Spec{Dir: ok.Dir, Links: []Link{{Path: "/etc/mysql/mysqld.sock", Target: "/run/mysqld/mysqld.sock"}}}, "seal's /proc, /dev, /etc"},
		{"link through /var/run", Spec{Dir: ok.Dir, Links: []Link{{Path: "/var/run/panel/mysqld.sock", Target: "/run/mysqld/mysqld.sock"}}}, "/var/run"},
		{"link through /lib", Spec{Dir: ok.Dir, Links: []Link{{Path: "/lib/x.sock", Target: "/run/mysqld/mysqld.sock"}}}, "/lib"},
		{"link in a bind", Spec{Dir: ok.Dir, Binds: []Bind{{Source: "/var/lib/phptune/labs/a/mysqld", Target: "/run/mysqld"}},
			Links: []Link{{Path: "/run/mysqld/mysql.sock", Target: "/run/mysqld/mysqld.sock"}}}, "overlap"},
		{"link in the overlay", Spec{Dir: ok.Dir, Docroot: "/var/www/site", Links: []Link{{Path: "/var/www/site/db.sock", Target: "/run/mysqld/mysqld.sock"}}}, "overlaid"},
		{"link in the seal's dir", Spec{Dir: ok.Dir, Links: []Link{{Path: ok.Dir + "/x.sock", Target: "/run/mysqld/mysqld.sock"}}}, "seal's directory"},
		{"link relative", Spec{Dir: ok.Dir, Links: []Link{{Path: "/srv/x.sock", Target: "mysqld.sock"}}}, "not an absolute"},
		{"hide /", Spec{Dir: ok.Dir, Hide: []string{"/"}}, "whole file system"},
		{"host with space", Spec{Dir: ok.Dir, Hosts: []string{"site.test evil"}}, "not a host name"},
		{"host with newline", Spec{Dir: ok.Dir, Hosts: []string{"a\n10.0.0.1 b"}}, "not a host name"},
		{"host empty label", Spec{Dir: ok.Dir, Hosts: []string{"a..b"}}, "not a host name"},
		{"own not loopback", Spec{Dir: ok.Dir, Own: []netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:80")}}, "not a loopback"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.spec.check()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("check() = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("check() = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestRuleset(t *testing.T) {
	r := ruleset([]netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:80"), netip.MustParseAddrPort("[::1]:3306"), netip.MustParseAddrPort("[::ffff:127.0.0.1]:443")})
	for _, want := range []string{
		"set own4 { type ipv4_addr . inet_service; elements = { 127.0.0.1 . 80, 127.0.0.1 . 443 }; }",
		"set own6 { type ipv6_addr . inet_service; elements = { ::1 . 3306 }; }",
		"ct state established,related accept",
		"update @out4 { ip daddr . meta l4proto . th dport }",
		"ip daddr != 127.0.0.0/8 meta l4proto tcp reject with tcp reset",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, r)
		}
	}
	if strings.Index(r, "@own4 accept") > strings.Index(r, "update @out4") {
		t.Error("the lab's own listeners must pass before the counting rule")
	}
	if r := ruleset(nil); !strings.Contains(r, "set own4 { type ipv4_addr . inet_service; }") {
		t.Errorf("an empty own set is declared without elements:\n%s", r)
	}
}

func TestHostsFile(t *testing.T) {
	got := hostsFile([]string{"site.test", "www.site.test"}, nil)
	for _, want := range []string{"127.0.0.1\tlocalhost site.test www.site.test\n", "::1\tlocalhost ip6-localhost ip6-loopback\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts file lacks %q:\n%s", want, got)
		}
	}
}

func TestCheckAppRoot(t *testing.T) {
	old := passwdFile
	t.Cleanup(func() { passwdFile = old })
	passwdFile = t.TempDir() + "/passwd"
	if err := os.WriteFile(passwdFile, []byte("root:x:0:0:root:/root:/bin/sh\ndeploy:x:1001:1001::/srv/deploy:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		"/srv/app": "", "/var/www/site": "", "/var/www/html": "", "/var/lib/phptune-site-x": "", "/opt/shop/current": "",
		"/": "system directory", "/srv": "system directory", "/var": "system directory", "/var/www": "system directory",
		"/home": "system directory", "/opt": "system directory", "/usr": "system directory", "/var/lib": "system directory",
		"/usr/share": "system directory", "/app": "top-level", "/root": "top-level", "/home/alice": "a user's home",
		"/srv/deploy": "the home directory of the account deploy", "/etc/php": "in the system's /etc",
		"/srv/a,b": "mount options cannot carry", "srv/app": "not an absolute",
	} {
		err := CheckAppRoot(dir)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckAppRoot(%s) = %v, want nil", dir, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("CheckAppRoot(%s) = %v, want an error containing %q", dir, err, want)
		}
	}
}
