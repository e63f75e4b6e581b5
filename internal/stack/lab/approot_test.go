package lab

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
)

// TestSiteAppRoot: a site lab overlays the directory holding the docroot
// and the app's configuration file, unless that is a system directory or
// holds the lab: then the docroot alone, with a warning.
func TestSiteAppRoot(t *testing.T) {
	const labDir = "/var/lib/phptune/labs/site"
	withApp := func(docroot, file string) *site.Site {
		s := &site.Site{DocRoot: site.DocRoot{Path: docroot}}
		if file != "" {
			s.App = &site.App{Kind: "laravel", File: file}
		}
		return s
	}
	cases := []struct {
		name       string
		site       *site.Site
		want, warn string
	}{
		{"laravel public/", withApp("/srv/app/public", "/srv/app/.env"), "/srv/app", ""},
		{"wordpress one up", withApp("/var/www/site/htdocs", "/var/www/site/wp-config.php"), "/var/www/site", ""},
		{"deployer's current link", &site.Site{DocRoot: site.DocRoot{Path: "/srv/shop/current/public", Real: "/srv/shop/releases/7/public"},
			App: &site.App{Kind: "laravel", File: "/srv/shop/releases/7/.env"}}, "/srv/shop/releases/7", ""},
		{"config in the docroot", withApp("/var/www/site", "/var/www/site/wp-config.php"), "/var/www/site", ""},
		{"drupal settings below", withApp("/var/www/d", "/var/www/d/sites/default/settings.php"), "/var/www/d", ""},
		{"no app", withApp("/srv/app/public", ""), "/srv/app/public", ""},
		{"docroot directly under /srv", withApp("/srv/site", "/srv/wp-config.php"), "/srv/site", "system directory"},
		{"docroot directly under /var/www", withApp("/var/www/html", "/var/www/wp-config.php"), "/var/www/html", "system directory"},
		{"a user's home", withApp("/home/alice/public_html", "/home/alice/wp-config.php"), "/home/alice/public_html", "home directory"},
		{"holds the lab", withApp("/var/lib/phptune/site", "/var/lib/phptune/.env"), "/var/lib/phptune/site", "holds the lab's own directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, warns := siteAppRoot(c.site, labDir)
			if got != c.want {
				t.Errorf("app root %q, want %q", got, c.want)
			}
			switch {
			case c.warn == "" && len(warns) > 0:
				t.Errorf("unexpected warnings %q", warns)
			case c.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], c.warn) || !strings.Contains(warns[0], "docroot "+c.want+" alone")):
				t.Errorf("warnings %q, want one saying %q and that the docroot alone is shown", warns, c.warn)
			}
		})
	}
}

// TestSitePHPFiles: the pool's prepend and append files outside the app's
// root are bound; ones inside it or in the allowlist are not needed;
// relative paths, links, files in system directories and files another
// account could swap are named in notes.
func TestSitePHPFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the files must sit in root-owned directories")
	}
	dir, err := os.MkdirTemp("/var/lib", "phptune-prepend-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waf := filepath.Join(dir, "waf.php")
	if err := os.WriteFile(waf, []byte("<?php\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(waf, filepath.Join(dir, "link.php")); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(open, "x.php"), []byte("<?php\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{Pool: &site.Pool{Overrides: map[string]string{
		"php_admin_value[auto_prepend_file]": `"` + waf + `"`,
		"php_value[auto_prepend_file]":       "/srv/app/bootstrap/prepend.php",
		"php_admin_value[auto_append_file]":  filepath.Join(dir, "link.php"),
		"php_value[auto_append_file]":        filepath.Join(open, "x.php"),
	}}}
	files, notes := sitePHPFiles(s, "/srv/app")
	if len(files) != 1 || files[0] != waf {
		t.Errorf("files %q, want only %s", files, waf)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"link.php is not shown to the lab", "x.php is not shown to the lab"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q: %s", want, joined)
		}
	}
	s.Pool.Overrides = map[string]string{"php_value[auto_prepend_file]": "prepend.php", "php_admin_value[auto_prepend_file]": "/etc/waf/waf.php",
		"php_admin_value[auto_append_file]": "/usr/share/php/append.php", "php_value[auto_append_file]": "none"}
	files, notes = sitePHPFiles(s, "/srv/app")
	joined = strings.Join(notes, "\n")
	if len(files) != 0 || len(notes) != 2 || !strings.Contains(joined, "relative path") || !strings.Contains(joined, "/etc/waf/waf.php lies in a system directory") {
		t.Errorf("files %q, notes %q; want none, and notes on the relative path and /etc", files, notes)
	}
}

// appIndex is the app's front controller in APP/public: it reads
// APP/.env, includes APP/src/x.php, writes into APP/storage, and prints
// what the pool's prepend file (outside APP) defined.
const appIndex = `<?php
$env = @file_get_contents(__DIR__ . '/../.env');
$name = ($env !== false && preg_match('/^APP_NAME=(.*)$/m', $env, $m)) ? $m[1] : 'no-env';
$x = (@include __DIR__ . '/../src/x.php') ? x() : 'no-src';
$wrote = @file_put_contents(__DIR__ . '/../storage/cache.txt', 'lab') ? 'ok' : 'failed';
$prepend = defined('PREPENDED') ? PREPENDED : 'no-prepend';
echo '<html><head><title>App Root</title></head><body>';
echo "env=$name src=$x storage=$wrote prepend=$prepend";
echo "</body></html>\n";
`

// TestSiteLabAppRoot: a site whose docroot is APP/public and whose code
// and .env are in APP (a Laravel layout), with a pool prepend file outside
// APP: PHP in the sealed lab reads APP/.env, includes APP/src/x.php and
// runs the prepend file, its writes to APP/storage land in the overlay's
// upper layer, and the real APP is unchanged, during and after the lab.
func TestSiteLabAppRoot(t *testing.T) {
	home := testHome(t)
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	www, err := user.Lookup("www-data")
	if err != nil {
		t.Skip("no www-data account")
	}
	uid, _ := strconv.Atoi(www.Uid)
	gid, _ := strconv.Atoi(www.Gid)
	parent, err := os.MkdirTemp("/var/lib", "phptune-site-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(parent, "app")
	files := map[string]string{
		"public/index.php": appIndex,
		".env":             "APP_NAME=sealed-app\nDB_CONNECTION=mysql\nDB_HOST=127.0.0.1\nDB_DATABASE=sitedb\nDB_USERNAME=siteuser\nDB_PASSWORD=sitepw\n",
		"src/x.php":        "<?php function x() { return 'x-from-src'; }\nreturn true;\n",
		"storage/.keep":    "",
	}
	for name, text := range files {
		p := filepath.Join(app, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.Walk(app, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	}); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(parent, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	prepend := filepath.Join(shared, "prepend.php")
	if err := os.WriteFile(prepend, []byte("<?php define('PREPENDED', 'from-shared');\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Writable by all on the host: only the read-only bind keeps the lab
	// from writing it.
	if err := os.Chmod(prepend, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "other.txt"), []byte("not shown\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	docroot := filepath.Join(app, "public")
	s := &site.Site{
		Query: "site.test", Root: "/", Host: "site.test", Port: 80,
		Vhost:   site.Vhost{Server: "nginx", Names: []string{"site.test"}, Root: docroot},
		DocRoot: site.DocRoot{Path: docroot, Owner: "www-data", UID: uid},
		Pool: &site.Pool{Name: "www", User: "www-data", Group: "www-data",
			Overrides: map[string]string{"php_admin_value[auto_prepend_file]": prepend}},
		App: &site.App{Kind: "laravel", File: filepath.Join(app, ".env"),
			DB: site.Database{Driver: "mysql", Name: "sitedb", User: "siteuser", Host: "127.0.0.1"}},
	}
	live := site.LiveStart(s)
	sums := treeSums(t, app)
	var said []string
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := Up(ctx, Options{Name: "approot", Site: s, Live: &live, Set: live.Config.Overrides(),
		Progress: func(line string) { said = append(said, line) }})
	if err != nil {
		t.Fatal(err)
	}
	defer Down("approot")
	if l.AppRoot != app || len(l.SiteFiles) != 1 || l.SiteFiles[0] != prepend {
		t.Errorf("lab state: app root %q, site files %q; want %s and [%s]", l.AppRoot, l.SiteFiles, app, prepend)
	}
	if !strings.Contains(strings.Join(said, "\n"), "the app's root "+app) {
		t.Errorf("lab up did not say it overlays the app's root: %q", said)
	}
	page, err := l.FetchPage(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("page: %s", page.Body)
	if want := "env=sealed-app src=x-from-src storage=ok prepend=from-shared"; !strings.Contains(page.Body, want) {
		t.Errorf("the page lacks %q: %s", want, page.Body)
	}
	// Only the prepend file of shared/ is inside, read-only.
	sl, _ := seal.Open(l.Seal)
	out, err := run0ForTest(ctx, sl, uid, gid, "/usr/bin/bash", "-c",
		"ls "+shared+"; { echo x >> "+prepend+"; } 2>&1 | grep -o 'Read-only file system'")
	if err != nil {
		t.Fatalf("looking inside: %v: %s", err, out)
	}
	if out != "prepend.php\nRead-only file system\n" {
		t.Errorf("inside, %s shows %q; want only prepend.php, read-only", shared, out)
	}
	if _, err := os.Stat(filepath.Join(l.Seal, "overlay", "upper", "storage", "cache.txt")); err != nil {
		t.Errorf("the write to storage/ is not in the overlay's upper layer: %v", err)
	}
	if got := treeSums(t, app); !equalSums(got, sums) {
		t.Errorf("the real app changed: before %v, after %v", sums, got)
	}
	if err := Down("approot"); err != nil {
		t.Fatal(err)
	}
	if m := mountsUnder(t, home); len(m) > 0 {
		t.Errorf("mounts left after lab down: %v", m)
	}
	if m := mountsUnder(t, parent); len(m) > 0 {
		t.Errorf("mounts left on the app after lab down: %v", m)
	}
	if got := treeSums(t, app); !equalSums(got, sums) {
		t.Errorf("the real app changed after lab down: %v", got)
	}
}

// run0ForTest runs bin inside the seal as uid/gid and returns its output.
func run0ForTest(ctx context.Context, s *seal.Seal, uid, gid int, bin string, args ...string) (string, error) {
	cmd := s.Command(uid, gid, bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.Start(cmd); err != nil {
		return "", err
	}
	err := cmd.Wait()
	return out.String(), err
}

// TestSiteDBSockets: every MariaDB socket path the site's configuration
// names beside the lab's own is one the seal makes lead to the lab's
// server, or a warning says why it cannot.
func TestSiteDBSockets(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", "/var/lib/phptune")
	s := &site.Site{
		App: &site.App{Kind: "wordpress", DB: site.Database{Host: "localhost:/var/lib/mysql-panel/mysqld.sock", Socket: "/var/lib/mysql-panel/mysqld.sock"}},
		DB:  &site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: "/var/lib/mysql-panel/mysqld.sock"}},
		PHP: &site.PHPConfig{Settings: map[string]site.Setting{
			"mysqli.default_socket":    {Value: "/var/run/mysqld/mysqld.sock"},
			"pdo_mysql.default_socket": {Value: "/tmp/mysql.sock"},
		}},
	}
	got, notes := siteDBSockets(s, "/var/www/site")
	want := []string{"/var/lib/mysql-panel/mysqld.sock", "/tmp/mysql.sock"}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(notes) != 0 {
		t.Errorf("siteDBSockets = %q, notes %q; want %q", got, notes, want)
	}
	for _, c := range []struct{ path, note string }{
		{"/var/www/site/db.sock", "app's root"},
		{"/etc/mysql/mysqld.sock", "read-only"},
		{"/var/lib/phptune/x.sock", "read-only or phptune's own"},
		{"mysqld.sock", "not an absolute path"},
		{"/srv/a:b.sock", "cannot carry"},
	} {
		s := &site.Site{DB: &site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: c.path}}}
		got, notes := siteDBSockets(s, "/var/www/site")
		if len(got) != 0 || len(notes) != 1 || !strings.Contains(notes[0], c.note) {
			t.Errorf("%s: siteDBSockets = %q, notes %q; want a note saying %q", c.path, got, notes, c.note)
		}
	}
	s = &site.Site{DB: &site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: "/run/mysqld/mysql.sock"}}}
	if got, _ := siteDBSockets(s, "/var/www/site"); len(got) != 1 || sealPath("/var/run/mysqld/x.sock") != "/run/mysqld/x.sock" {
		t.Errorf("a socket of another name in /run/mysqld: %q", got)
	}
}
