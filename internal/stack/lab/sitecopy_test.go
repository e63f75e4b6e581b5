package lab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/sitecopy/dbcopy"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/seal"
)

// wpLikePage is a WordPress-like front page: its title is the blog's name
// from wp_options, read through the default socket ('localhost'), it
// shows a row only production had before the copy, reads the same over
// TCP (127.0.0.1), inserts a row per request with ?write=1, and says
// what PHP runs with (the live pool's values, WP-cron).
const wpLikePage = `<?php
mysqli_report(MYSQLI_REPORT_OFF);
$db = @new mysqli(DB_HOST_SOCK, 'wpuser', 'wp pass', 'wpsite');
if ($db->connect_errno) { http_response_code(500); echo 'db-error:' . $db->connect_error; exit; }
$name = $db->query("SELECT option_value FROM wp_options WHERE option_name = 'blogname'")->fetch_row()[0];
$only = $db->query("SELECT option_value FROM wp_options WHERE option_name = 'only_in_production'")->fetch_row()[0] ?? 'none';
if (isset($_GET['write'])) { $db->query("INSERT INTO wp_hits (page) VALUES ('front')"); }
$hits = $db->query('SELECT COUNT(*) FROM wp_hits')->fetch_row()[0];
$tcp = @new mysqli('127.0.0.1', 'wpuser', 'wp pass', 'wpsite');
$tcpname = $tcp->connect_errno ? 'tcp-error' : $tcp->query("SELECT option_value FROM wp_options WHERE option_name = 'blogname'")->fetch_row()[0];
echo "<html><head><title>$name</title></head><body>";
echo "only=$only hits=$hits tcp=$tcpname upload=" . ini_get('upload_max_filesize') . ' cron=' . (defined('DISABLE_WP_CRON') && DISABLE_WP_CRON ? 'off' : 'on');
echo "</body></html>\n";
`

// TestSiteLabCopiesProduction is the site owner's path end to end: a
// production-like host (its MariaDB with the site's database, a docroot
// owned by www-data with a wp-config.php naming localhost, an nginx vhost
// site.test, a php-fpm pool with pm = static, pm.max_children = 7 and a
// php_admin_value) brought up with lab up --site's options: the lab
// serves the copied data (a row only production had), starts from the
// live pool, turns WP-cron off, takes many writes into its copy, lab
// reset removes them, and production — every table's checksum and row
// count, its Connections counter but for the copy's own, every file of
// the docroot — is unchanged.
func TestSiteLabCopiesProduction(t *testing.T) {
	lab.TestHome(t)
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	www, err := user.Lookup("www-data")
	if err != nil {
		t.Skip("no www-data account")
	}
	uid, _ := strconv.Atoi(www.Uid)
	gid, _ := strconv.Atoi(www.Gid)

	// Production's MariaDB and the site's database.
	prod := hosttest.DebianMariaDB(t, "")
	setup := `CREATE DATABASE wpsite;
CREATE TABLE wpsite.wp_options (option_id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, option_name VARCHAR(191) NOT NULL UNIQUE, option_value LONGTEXT NOT NULL, autoload VARCHAR(20) NOT NULL DEFAULT 'yes') ENGINE=InnoDB;
INSERT INTO wpsite.wp_options (option_name, option_value) VALUES ('blogname', 'Production Blog'), ('siteurl', 'http://site.test'), ('home', 'http://site.test'), ('_transient_x', 'cached');
CREATE TABLE wpsite.wp_posts (ID BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, post_title TEXT, post_content LONGTEXT) ENGINE=InnoDB;
INSERT INTO wpsite.wp_posts (post_title, post_content) VALUES ('Hello', 'first'), ('Second', REPEAT('x', 5000));
CREATE DATABASE seq;
INSERT INTO wpsite.wp_posts (post_title, post_content) SELECT CONCAT('Post ', seq), REPEAT(MD5(seq), 64) FROM seq.seq_1_to_20000;
CREATE TABLE wpsite.wp_postmeta (meta_id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, post_id BIGINT, meta_key VARCHAR(255), meta_value LONGTEXT) ENGINE=InnoDB;
INSERT INTO wpsite.wp_postmeta (post_id, meta_key, meta_value) VALUES (1, '_edit_lock', '1'), (2, '_thumb', '7');
CREATE TABLE wpsite.wp_hits (id INT AUTO_INCREMENT PRIMARY KEY, page VARCHAR(32)) ENGINE=InnoDB;
CREATE USER 'wpuser'@'localhost' IDENTIFIED BY 'wp pass';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, LOCK TABLES, SHOW VIEW, TRIGGER, EVENT ON wpsite.* TO 'wpuser'@'localhost';
INSERT INTO wpsite.wp_options (option_name, option_value) VALUES ('only_in_production', 'copied-row-42');`
	if _, err := prod.Query(setup); err != nil {
		t.Fatal(err)
	}
	tables := []string{"wp_options", "wp_posts", "wp_postmeta", "wp_hits"}
	prodState := func() string {
		var b strings.Builder
		for _, tb := range tables {
			out, err := prod.Query("CHECKSUM TABLE wpsite." + tb + " EXTENDED; SELECT COUNT(*) FROM wpsite." + tb)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(out + "\n")
		}
		return b.String()
	}
	connections := func() int {
		out, err := prod.Query("SHOW GLOBAL STATUS LIKE 'Connections'")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out, "Connections")))
		return n
	}

	// The host: php-fpm with a non-default pool, nginx with the vhost.
	h := hosttest.Debian(t, func(w string) string {
		w = strings.Replace(w, "pm = dynamic", "pm = static", 1)
		w = strings.Replace(w, "pm.max_children = 5", "pm.max_children = 7", 1)
		return w + "\nphp_admin_value[upload_max_filesize] = 33M\n"
	})
	ng := h.Nginx(t)
	parent, err := os.MkdirTemp("/var/lib", "phptune-wpsite-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	docroot := filepath.Join(parent, "site")
	files := map[string]string{
		"index.php":                        strings.Replace(wpLikePage, "DB_HOST_SOCK", "'localhost'", 1),
		"wp-config.php":                    "<?php\ndefine('DB_NAME', 'wpsite');\ndefine('DB_USER', 'wpuser');\ndefine('DB_PASSWORD', 'wp pass');\ndefine('DB_HOST', 'localhost');\n$table_prefix = 'wp_';\n",
		"wp-content/uploads/2026/logo.txt": "logo\n",
	}
	for name, text := range files {
		p := filepath.Join(docroot, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	filepath.Walk(docroot, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Chown(p, uid, gid)
		}
		return err
	})
	vhost := "server {\n\tlisten 127.0.0.1:" + strconv.Itoa(ng.Port+1) + ";\n\tserver_name site.test www.site.test;\n\troot " + docroot + ";\n\tindex index.php;\n" +
		"\tlocation ~ \\.php$ {\n\t\tinclude snippets/fastcgi-php.conf;\n\t\tfastcgi_pass unix:" + h.Socket + ";\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(h.Root, "etc", "nginx", "sites-enabled", "site.test"), []byte(vhost), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	s, err := site.Discover(ctx, site.Host{Root: h.Root}, "site.test")
	if err != nil {
		t.Fatal(err)
	}
	if s.App == nil || s.App.Kind != "wordpress" || s.App.DB.Name != "wpsite" {
		t.Fatalf("discovered app %+v (%s); want WordPress with wpsite", s.App, s.AppError)
	}
	// The test's production server is not at the default socket of this
	// machine: point the copy at it (discovery ties 'localhost' to the
	// machine's own /run/mysqld/mysqld.sock).
	s.DB = &site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: prod.Socket}, Socket: prod.Socket, DataDir: prod.DataDir}
	src, err := dbcopy.SourceFor(s.App, s.DB, dbcopy.Account{})
	if err != nil {
		t.Fatal(err)
	}

	sums := lab.TreeSums(t, docroot)
	before := prodState()
	conns0 := connections()

	live := site.LiveStart(s)
	t0 := time.Now()
	l, err := lab.Up(ctx, lab.Options{Name: "wpsite", Site: s, Live: &live, Set: live.Config.Overrides(), Data: &lab.SiteData{From: &src},
		Progress: func(m string) { t.Log("lab:", m) }})
	if err != nil {
		t.Fatal(err)
	}
	upTime := time.Since(t0)
	conns1 := connections()
	defer lab.Down("wpsite")
	t.Logf("lab up --site with the copy took %v; the copy %+v", upTime.Round(time.Millisecond), l.DBCopy)
	// conns1's own connection is the one after conns0's.
	if got := conns1 - conns0 - 1; l.DBCopy == nil || got != l.DBCopy.ProductionConnections || got != 2 {
		t.Errorf("production saw %d connections during lab up; want the grants' read and the dump's (2), recorded %+v", got, l.DBCopy)
	}

	// The site's page, from the copy.
	if p := l.FrontPage; p == nil || p.Status != 200 || p.Title != "Production Blog" {
		t.Fatalf("front page %+v; want 200 with the title Production Blog", l.FrontPage)
	}
	page, err := l.FetchPage(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"only=copied-row-42", "hits=0", "tcp=Production Blog", "upload=33M", "cron=off"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the lab's page lacks %q: %s", want, page.Body)
		}
	}

	// The live start: pm = static, max_children 7, and its pool line.
	if l.Config["pm"] != "static" || l.Config["pm.max_children"] != "7" {
		t.Errorf("the lab started with pm=%s pm.max_children=%s; want the live pool's static, 7", l.Config["pm"], l.Config["pm.max_children"])
	}
	conf, err := os.ReadFile(filepath.Join(l.Dir, "php-fpm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pm = static", "pm.max_children = 7", `php_admin_value[upload_max_filesize] = "33M"`, `php_admin_value[auto_prepend_file] = "` + filepath.Join(l.Dir, "app", lab.NoCronName) + `"`} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("the lab's php-fpm.conf lacks %q:\n%s", want, conf)
		}
	}
	if knobs, err := os.ReadFile(filepath.Join(l.Dir, lab.LiveKnobsName)); err != nil || !strings.Contains(string(knobs), "pm=static") || !strings.Contains(string(knobs), "pm.max_children=7") {
		t.Errorf("live.knobs: %v\n%s", err, knobs)
	}

	// Writes land in the lab's copy.
	const writers, each = 4, 40
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if p, err := l.FetchPage(ctx, "/?write=1"); err != nil || p.Status != 200 {
					t.Errorf("write request: %v %+v", err, p)
					return
				}
			}
		}()
	}
	wg.Wait()
	page, _ = l.FetchPage(ctx, "/")
	if !strings.Contains(page.Body, "hits="+strconv.Itoa(writers*each)) {
		t.Errorf("after %d writes the lab's page reads: %s", writers*each, page.Body)
	}

	// A bench through the lab, as a user runs it: the site's pages, and
	// its writing page, all into the lab's copy.
	for _, path := range []string{"/", "/?write=1"} {
		var out, errb bytes.Buffer
		code := cli.Main(ctx, []string{"bench", "--lab", "wpsite", "--workload", path, "-c", "4", "-d", "2s", "-q", "--json"}, &out, &errb)
		if code != 0 {
			t.Fatalf("bench --lab wpsite --workload %s: exit %d: %s", path, code, errb.String())
		}
		var res struct {
			Requests, Errors int64
			Target           string
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("bench --json: %v: %s", err, out.String())
		}
		t.Logf("bench %s through the lab: %d requests, %d errors, %s", path, res.Requests, res.Errors, res.Target)
		if res.Requests == 0 || res.Errors != 0 {
			t.Errorf("bench %s: %d requests, %d errors; want the site's 2xx pages only", path, res.Requests, res.Errors)
		}
	}
	page, _ = l.FetchPage(ctx, "/")
	if strings.Contains(page.Body, "hits="+strconv.Itoa(writers*each)+" ") {
		t.Errorf("the bench's writes did not reach the lab's copy: %s", page.Body)
	}
	t.Logf("after the bench: %s", page.Body)

	// lab reset restores the copy.
	if err := l.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	page, _ = l.FetchPage(ctx, "/")
	if !strings.Contains(page.Body, "hits=0") || !strings.Contains(page.Body, "only=copied-row-42") {
		t.Errorf("after lab reset the page reads: %s", page.Body)
	}

	if err := lab.Down("wpsite"); err != nil {
		t.Fatal(err)
	}
	conns2 := connections()
	if got := prodState(); got != before {
		t.Errorf("production's tables changed:\nbefore %s\nafter %s", before, got)
	}
	// Only the test's own reads since conns1.
	if conns2 != conns1+1 {
		t.Errorf("production saw %d connections after lab up; want none", conns2-conns1-1)
	}
	if got := lab.TreeSums(t, docroot); !lab.EqualSums(got, sums) {
		t.Errorf("the real docroot changed: before %v, after %v", sums, got)
	}
	if err := h.Unchanged(); err != nil {
		t.Errorf("the host copy changed: %v", err)
	}
}
