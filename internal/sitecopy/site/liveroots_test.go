package site

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

func TestOverlapping(t *testing.T) {
	roots := []LiveRoot{{Dir: "/var/www/site", Site: "site.test"}, {Dir: "/srv/app/public", Site: "app.test"}, {Dir: "/var/www/html", Site: "default"}}
	cases := []struct {
		dir  string
		want []string
	}{
		{"/var/www/site", []string{"site.test"}},
		{"/var/www/site/", []string{"site.test"}},
		{"/var/www/site/wp-admin", []string{"site.test"}}, // inside
		{"/var/www", []string{"site.test", "default"}},    // contains
		{"/srv/app", []string{"app.test"}},
		{"/var/www/sites", nil}, // a sibling whose name starts alike
		{"/srv/staging/public", nil},
		{"/", []string{"site.test", "app.test", "default"}},
	}
	for _, c := range cases {
		var got []string
		for _, r := range Overlapping(roots, c.dir) {
			got = append(got, r.Site)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Overlapping(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}

// TestPoolRoots reads a php-fpm configuration with a hosting panel's
// pools: chdir and doc_root name the directories they serve from (inside
// a chroot when the pool has one), named by the vhost that passes PHP to
// the pool when there is one.
func TestPoolRoots(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "php-fpm.conf")
	pools := filepath.Join(dir, "pool.d")
	if err := os.Mkdir(pools, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, text string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(conf, "[global]\npid = /run/php/fpm.pid\ninclude = "+pools+"/*.conf\n")
	write(filepath.Join(pools, "panel.conf"), "[panel]\nuser = www-data\nlisten = /var/lib/php-panel/site.sock\nchdir = /var/lib/php-panel/www\n")
	write(filepath.Join(pools, "shop.conf"), "[shop]\nlisten = 127.0.0.1:9001\nchdir = /srv/shop\nphp_admin_value[doc_root] = /srv/shop/public/\nphp_value[doc_root] = /srv/shop/public\n")
	write(filepath.Join(pools, "jail.conf"), "[jail]\nlisten = /run/php/jail.sock\nchroot = /srv/jail\nchdir = /www\n")
	write(filepath.Join(pools, "plain.conf"), "[plain]\nlisten = /run/php/plain.sock\n;chdir = /var/www\nchdir = /\n")
	write(filepath.Join(pools, "vars.conf"), "[vars]\nlisten = /run/php/vars.sock\nchdir = /home/$pool/www\nphp_admin_value[doc_root] = relative/dir\nphp_value[doc_root] = /srv/${SITE}/public\n")
	fh, err := livehost.ReadFPM(conf, "")
	if err != nil {
		t.Fatal(err)
	}
	vhosts := []Vhost{
		{Names: []string{"shop.test"}, FastCGI: []string{"tcp:127.0.0.1:9001"}},
		{Names: []string{"_"}, FastCGI: []string{"unix:/run/php/jail.sock"}},
	}
	got := map[string]LiveRoot{}
	for _, r := range PoolRoots(fh, vhosts) {
		if _, dup := got[r.Dir]; dup {
			t.Errorf("%s listed twice", r.Dir)
		}
		got[r.Dir] = r
	}
	want := map[string]LiveRoot{
		"/var/lib/php-panel/www": {Dir: "/var/lib/php-panel/www", Site: "/var/lib/php-panel/www", Where: "php-fpm pool panel in " + filepath.Join(pools, "panel.conf") + " (chdir)", Pool: "panel"},
		"/srv/shop":              {Dir: "/srv/shop", Site: "shop.test", Where: "php-fpm pool shop in " + filepath.Join(pools, "shop.conf") + " (chdir)", Pool: "shop"},
		"/srv/shop/public":       {Dir: "/srv/shop/public", Site: "shop.test", Where: "php-fpm pool shop in " + filepath.Join(pools, "shop.conf") + " (php_admin_value[doc_root])", Pool: "shop"},
		"/home/vars/www":         {Dir: "/home/vars/www", Site: "/home/vars/www", Where: "php-fpm pool vars in " + filepath.Join(pools, "vars.conf") + " (chdir)", Pool: "vars"}, // $pool is the pool's name, as php-fpm reads it
		"/srv/jail/www":          {Dir: "/srv/jail/www", Site: "/srv/jail/www", Where: "php-fpm pool jail in " + filepath.Join(pools, "jail.conf") + " (chdir)", Pool: "jail"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PoolRoots =\n%+v\nwant\n%+v", got, want)
	}
	// What the refusal then decides, on the roots the pools give.
	var roots []LiveRoot
	for _, r := range got {
		roots = append(roots, r)
	}
	for _, c := range []struct {
		dir  string
		hits int
	}{
		{"/var/lib/php-panel/www", 1},
		{"/var/lib/php-panel/www/sub", 1},
		{"/var/lib/php-panel", 1},
		{"/var/lib/php-panel/wwwx", 0},
		{"/srv/shop/public/x", 2},
		{"/srv/jail", 1},
		{"/www", 0}, // the chroot's path, not the host's
		{"/var/www/site", 0},
	} {
		if n := len(Overlapping(roots, c.dir)); n != c.hits {
			t.Errorf("Overlapping(%s) = %d roots, want %d", c.dir, n, c.hits)
		}
	}
}

// TestLiveRootsPoolOfRunningMaster starts a copy of Debian's php-fpm
// whose pool has a chdir, as test/realserver.sh's panel pool has, and a
// doc_root: LiveRoots lists both, naming the pool and its file.
func TestLiveRootsPoolOfRunningMaster(t *testing.T) {
	panel := filepath.Join(t.TempDir(), "php-panel", "www")
	docroot := filepath.Join(t.TempDir(), "shop", "public")
	for _, d := range []string{panel, docroot} {
		if err := os.MkdirAll(d, 0o755); err != nil { // php-fpm checks chdir when it starts
			t.Fatal(err)
		}
	}
	h := hosttest.Debian(t, func(www string) string {
		return www + "\nchdir = " + panel + "\nphp_admin_value[doc_root] = " + docroot + "\n"
	})
	roots, err := LiveRoots(context.Background(), Host{Root: h.Root})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(h.PoolDir, "www.conf")
	var mine []LiveRoot
	for _, r := range roots {
		if strings.Contains(r.Where, file) {
			mine = append(mine, r)
		}
	}
	want := []LiveRoot{
		{Dir: panel, Site: panel, Where: "php-fpm pool www in " + file + " (chdir)", Pool: "www"},
		{Dir: docroot, Site: docroot, Where: "php-fpm pool www in " + file + " (php_admin_value[doc_root])", Pool: "www"},
	}
	if !reflect.DeepEqual(mine, want) {
		t.Errorf("LiveRoots' roots of the copy's pool = %+v, want %+v", mine, want)
	}
	if hits := Overlapping(roots, filepath.Dir(panel)); len(hits) == 0 {
		t.Errorf("a --docroot holding the pool's chdir %s overlaps no live root", panel)
	}
}
