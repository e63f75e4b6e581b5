package site

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// TestDiscoverSite: a host copy (Debian's php-fpm, nginx and MariaDB,
// started for real) with a vhost site.test whose docroot, owned by
// www-data, holds a wp-config.php: Discover finds the vhost, the pool
// and its live settings (pm = static, pm.max_children = 7, overrides),
// the php.ini and conf.d the master loads, the database and the MariaDB
// server its "localhost" reaches (the pool's mysqli.default_socket), and
// never prints the password.
func TestDiscoverSite(t *testing.T) {
	h := hosttest.Debian(t, func(www string) string {
		www = strings.Replace(www, "pm = dynamic", "pm = static", 1)
		www = strings.Replace(www, "pm.max_children = 5", "pm.max_children = 7", 1)
		return www
	})
	ng := h.Nginx(t)
	m := hosttest.DebianMariaDB(t, h.Root)
	// The pool's overrides: written after the master started (discovery
	// reads the configuration, the kernel ties the socket to the master).
	poolFile := filepath.Join(h.PoolDir, "www.conf")
	www, err := os.ReadFile(poolFile)
	if err != nil {
		t.Fatal(err)
	}
	www = append(www, []byte("\nphp_admin_value[mysqli.default_socket] = "+m.Socket+"\nphp_admin_value[opcache.memory_consumption] = 64\nphp_value[memory_limit] = 96M\nenv[APP_SECRET] = hidden\n"+
		"php_admin_value[upload_max_filesize] = 64M\nrequest_terminate_timeout = 30s\nlisten.backlog = 1024\n"+
		"php_value[session.save_handler] = redis\nphp_value[session.save_path] = \"tcp://127.0.0.1:6379?auth=sess-Secr3t&database=2\"\n")...)
	if err := os.WriteFile(poolFile, www, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Query("CREATE DATABASE sitedb; CREATE TABLE sitedb.posts (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO sitedb.posts VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	docroot := filepath.Join(h.Root, "var", "www", "site")
	if err := os.MkdirAll(docroot, 0o755); err != nil {
		t.Fatal(err)
	}
	const password = "pw-Sup3r-secret"
	files := map[string]string{
		"wp-config.php":   "<?php\ndefine( 'DB_NAME', 'sitedb' );\ndefine( 'DB_USER', 'siteuser' );\ndefine( 'DB_PASSWORD', '" + password + "' );\ndefine( 'DB_HOST', 'localhost' );\ndefine( 'WP_REDIS_PATH', '/var/run/redis/redis.sock' );\n$table_prefix = 'wp_';\nrequire_once ABSPATH . 'wp-settings.php';\n",
		"index.php":       "<?php echo 'site';\n",
		"wp-settings.php": "<?php\n",
	}
	www2, err := user.Lookup("www-data")
	if err != nil {
		t.Skip("no www-data account")
	}
	uid, _ := strconv.Atoi(www2.Uid)
	gid, _ := strconv.Atoi(www2.Gid)
	for name, text := range files {
		p := filepath.Join(docroot, name)
		if err := os.WriteFile(p, []byte(text), 0o640); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, uid, gid)
	}
	os.Chown(docroot, uid, gid)
	vhost := "server {\n\tlisten 127.0.0.1:" + strconv.Itoa(ng.Port+1) + ";\n\tserver_name site.test www.site.test;\n\troot " + docroot + ";\n\tindex index.php;\n" +
		"\tlocation ~ \\.php$ {\n\t\tinclude snippets/fastcgi-php.conf;\n\t\tfastcgi_pass unix:" + h.Socket + ";\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(h.Root, "etc", "nginx", "sites-enabled", "site.test"), []byte(vhost), 0o644); err != nil {
		t.Fatal(err)
	}

	s, err := Discover(context.Background(), Host{Root: h.Root}, "site.test")
	if err != nil {
		t.Fatal(err)
	}
	if s.Vhost.Root != docroot || s.Host != "site.test" || s.HTTPS || s.Port != ng.Port+1 {
		t.Errorf("vhost root %s host %q https %v port %d", s.Vhost.Root, s.Host, s.HTTPS, s.Port)
	}
	if s.DocRoot.Owner != "www-data" || s.DocRoot.Files != 3 {
		t.Errorf("docroot %+v", s.DocRoot)
	}
	if s.Pool == nil {
		t.Fatalf("no pool: %s", s.PoolError)
	}
	p := s.Pool
	if p.Name != "www" || p.User != "www-data" || p.PM["pm"] != "static" || p.PM["pm.max_children"] != "7" || !strings.Contains(p.Verified, "kernel") {
		t.Errorf("pool %+v", p)
	}
	if p.Overrides["php_value[memory_limit]"] != "96M" || len(p.Env) != 1 || p.Env[0] != "APP_SECRET" {
		t.Errorf("overrides %v env %v", p.Overrides, p.Env)
	}
	if s.PHP == nil || s.PHP.Version != h.Version || s.PHP.ScanDirs[0] != h.IniDir || len(s.PHP.IniFiles) == 0 {
		t.Fatalf("php %+v", s.PHP)
	}
	if st := s.PHP.Settings["opcache.memory_consumption"]; st.Value != "64" || !strings.HasPrefix(st.From, "pool www") {
		t.Errorf("opcache.memory_consumption %+v", st)
	}
	// The lab's start is the live pool (StartConfig): static, 7
	// children, its memory_limit, its backlog; the pool's
	// opcache.memory_consumption has no effect in production (the master
	// sized the cache) and is said so; what has no knob is carried.
	start := LiveStart(s)
	if c := start.Config; c["pm"] != "static" || c["pm.max_children"] != "7" || c["memory_limit"] != "96M" || c["listen.backlog"] != "1024" || c["opcache.memory_consumption"] != "128" {
		t.Errorf("start %v", c.Overrides())
	}
	if !slices.Contains(start.Pool, "php_admin_value[upload_max_filesize] = 64M") || !slices.Contains(start.Pool, "request_terminate_timeout = 30s") {
		t.Errorf("carried %q", start.Pool)
	}
	if notes := strings.Join(start.Notes, "\n"); !strings.Contains(notes, "opcache.memory_consumption = 64 from pool www") || !strings.Contains(notes, "env[APP_SECRET]") || strings.Contains(notes, "hidden") {
		t.Errorf("notes:\n%s", notes)
	}
	if s.App == nil {
		t.Fatalf("no app: %s", s.AppError)
	}
	if a := s.App; a.Kind != "wordpress" || a.DB.Name != "sitedb" || a.DB.User != "siteuser" || a.DB.Host != "localhost" || a.DB.Password.Reveal() != password {
		t.Errorf("app %+v", a)
	}
	if s.DB == nil || s.DB.Error != "" {
		t.Fatalf("db %+v", s.DB)
	}
	if d := s.DB; d.Endpoint != (Endpoint{"unix", m.Socket}) || d.ServerPID != m.PID() || d.DataDir != m.DataDir || d.Tables != 1 || d.SizeBytes == 0 {
		t.Errorf("db %+v, want the copy's server %d at %s", d, m.PID(), m.Socket)
	}

	// The caches it names: wp-config's Redis socket and the pool's
	// session handler, its password never kept.
	wantCaches := []Cache{{Kind: "redis", Addr: "unix:/var/run/redis/redis.sock", Setting: "WP_REDIS_PATH"},
		{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "session.save_handler=redis (pool www (php_value[session.save_handler])), session.save_path"}}
	// No Redis runs at them and the host's root has no redis.conf:
	// production's size is not read, and said so.
	for i := range s.Caches {
		if !strings.Contains(s.Caches[i].SizeNote, "redis.conf could not be read") {
			t.Errorf("cache %d's size note %q", i, s.Caches[i].SizeNote)
		}
		s.Caches[i].SizeNote = ""
	}
	if !reflect.DeepEqual(s.Caches, wantCaches) {
		t.Errorf("caches %+v, want %+v", s.Caches, wantCaches)
	}

	var text strings.Builder
	WriteText(&text, s)
	t.Logf("phptune site site.test:\n%s", text.String())
	js, _ := json.Marshal(s)
	for _, out := range []string{text.String(), string(js)} {
		if strings.Contains(out, password) || strings.Contains(out, "hidden") || strings.Contains(out, "sess-Secr3t") {
			t.Errorf("a secret was printed:\n%s", out)
		}
	}
	for _, want := range []string{"pm.max_children = 7", "password <redacted>", "sitedb", "MariaDB pid " + strconv.Itoa(m.PID()), "cache     redis at unix:/var/run/redis/redis.sock (WP_REDIS_PATH)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}

	// By its directory, the same site; an unknown name names the candidates.
	if s2, err := Discover(context.Background(), Host{Root: h.Root}, docroot+"/"); err != nil || s2.Vhost.At() != s.Vhost.At() {
		t.Errorf("by directory: %v, %+v", err, s2)
	}
	_, err = Discover(context.Background(), Host{Root: h.Root}, "www2.site.test")
	var nm *NoMatchError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), "site.test www.site.test at") {
		t.Errorf("unknown name: %v", err)
	}
}

// TestAppFileLinkNotFollowed: a wp-config.php that is a link (to a file
// of root's) is not read.
func TestAppFileLinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.php")
	os.WriteFile(secret, []byte("<?php define('DB_NAME','leaked');"), 0o600)
	if err := os.Symlink(secret, filepath.Join(dir, "wp-config.php")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "sites"), 0o755)
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(dir, "sites", "default")); err != nil {
		t.Fatal(err)
	}
	os.Rename(secret, filepath.Join(filepath.Dir(secret), "settings.php"))
	s := &Site{DocRoot: DocRoot{Path: dir}}
	s.readApp()
	if s.App != nil {
		t.Fatalf("a linked configuration was read: %+v", s.App)
	}
	if !strings.Contains(s.AppError, "wp-config.php") {
		t.Errorf("the refusal does not name the file: %s", s.AppError)
	}
}

// TestDocRootLinkOfAnotherAccount: a document root reached through a
// link in a directory another account can write is not followed; one
// through a link in a directory of root's alone is.
func TestDocRootLinkOfAnotherAccount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the trusted directory is root's")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	real := filepath.Join(base, "release-1")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(real, "index.php"), []byte("<?php"), 0o644)
	if err := os.Symlink(real, filepath.Join(base, "current")); err != nil {
		t.Fatal(err)
	}
	if d := readDocRoot(filepath.Join(base, "current")); d.Error != "" || d.Real != real || d.Files != 1 {
		t.Errorf("root's own deployment link: %+v", d)
	}
	open := filepath.Join(base, "shared")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if err := os.Symlink(real, filepath.Join(open, "site")); err != nil {
		t.Fatal(err)
	}
	if d := readDocRoot(filepath.Join(open, "site")); !strings.Contains(d.Error, "another account can write: not followed") {
		t.Errorf("a link in a world-writable directory was followed: %+v", d)
	}
	// A chain: root's link leads into a directory of the site's account
	// (a deployment's "releases"), where that account's own link points
	// at a directory of root's secrets. Each hop is checked, not only the
	// first.
	secrets := filepath.Join(base, "secrets")
	os.Mkdir(secrets, 0o700)
	os.WriteFile(filepath.Join(secrets, "key.php"), []byte("<?php // secret"), 0o600)
	deploy := filepath.Join(base, "deploy")
	os.Mkdir(deploy, 0o755)
	if err := os.Symlink(secrets, filepath.Join(deploy, "current")); err != nil {
		t.Fatal(err)
	}
	os.Lchown(filepath.Join(deploy, "current"), 65534, 65534)
	os.Chown(deploy, 65534, 65534)
	if err := os.Symlink(filepath.Join(deploy, "current"), filepath.Join(base, "www")); err != nil {
		t.Fatal(err)
	}
	d := readDocRoot(filepath.Join(base, "www"))
	if !strings.Contains(d.Error, deploy+"/current is a link in "+deploy) || d.Files != 0 {
		t.Errorf("a chain through another account's link was followed: %+v", d)
	}
	if fd, err := openDir(filepath.Join(base, "www")); err == nil {
		syscall.Close(fd)
		t.Errorf("openDir followed a chain through another account's link")
	}
	// A relative link of root's, to a directory reached through more of
	// root's links, resolves to the real directory.
	if err := os.Symlink("current", filepath.Join(base, "live")); err != nil {
		t.Fatal(err)
	}
	if d := readDocRoot(filepath.Join(base, "live")); d.Error != "" || d.Real != real {
		t.Errorf("root's relative chain: %+v", d)
	}
	// A link of root's in a directory of root's that lies in a directory
	// another account can write: that account can swap the directory.
	inner := filepath.Join(open, "inner")
	os.Mkdir(inner, 0o755)
	if err := os.Symlink(real, filepath.Join(inner, "current")); err != nil {
		t.Fatal(err)
	}
	if d := readDocRoot(filepath.Join(inner, "current")); !strings.Contains(d.Error, "another account can write: not followed") {
		t.Errorf("a link below a world-writable directory was followed: %+v", d)
	}
	// A loop ends.
	os.Symlink("loop-b", filepath.Join(base, "loop-a"))
	os.Symlink("loop-a", filepath.Join(base, "loop-b"))
	if d := readDocRoot(filepath.Join(base, "loop-a")); !strings.Contains(d.Error, "more than") {
		t.Errorf("a loop of links: %+v", d)
	}
}
