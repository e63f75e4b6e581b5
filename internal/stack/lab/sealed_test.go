package lab

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
)

// sitePage is the fixture site's index.php: it reads its database as its
// configuration names it (DB_HOST '127.0.0.1' over TCP, and 'localhost',
// PHP's default socket), inserts a row, writes a file into its own
// directory, calls itself by its name (as WP-cron does) and tries to leave:
// an outside address and a port of the host. HOSTPORT is replaced.
const sitePage = `<?php
mysqli_report(MYSQLI_REPORT_OFF);
if (isset($_GET['inner'])) { echo 'inner-from-lab'; exit; }
$tcp = @new mysqli('127.0.0.1', 'siteuser', 'sitepw', 'sitedb');
$marker = $tcp->connect_errno ? 'tcp-error:' . $tcp->connect_error : $tcp->query('SELECT v FROM marker')->fetch_row()[0];
if (!$tcp->connect_errno) { $tcp->query('INSERT INTO hits VALUES ()'); }
$sock = @new mysqli('localhost', 'siteuser', 'sitepw', 'sitedb');
$smarker = $sock->connect_errno ? 'socket-error:' . $sock->connect_error : $sock->query('SELECT v FROM marker')->fetch_row()[0];
$wrote = @file_put_contents(__DIR__ . '/written-by-lab.txt', 'lab') ? 'ok' : 'failed';
$self = @file_get_contents('http://site.test/?inner=1');
$out = @fsockopen('10.255.255.1', 80, $e1, $s1, 2) ? 'open' : 'refused';
$host = @fsockopen('127.0.0.1', HOSTPORT, $e2, $s2, 2) ? 'open' : 'refused';
echo '<html><head><title>Site Test</title></head><body>';
echo "marker=$marker socket=$smarker write=$wrote self=$self out=$out host=$host ";
echo 'http_host=' . $_SERVER['HTTP_HOST'] . ' port=' . $_SERVER['SERVER_PORT'] . ' https=' . ($_SERVER['HTTPS'] ?? 'off');
echo "</body></html>\n";
`

// siteFixture is a production-like site: a docroot owned by www-data in a
// root-owned directory outside /tmp, and the site as discovery reports it.
func siteFixture(t *testing.T, hostPort int) (*site.Site, string) {
	t.Helper()
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
	docroot := filepath.Join(parent, "site")
	if err := os.Mkdir(docroot, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"index.php":     strings.Replace(sitePage, "HOSTPORT", strconv.Itoa(hostPort), 1),
		"wp-config.php": "<?php\ndefine('DB_NAME', 'sitedb');\ndefine('DB_USER', 'siteuser');\ndefine('DB_PASSWORD', 'sitepw');\ndefine('DB_HOST', '127.0.0.1');\n",
		"style.css":     "body { color: black }\n",
	}
	for name, text := range files {
		p := filepath.Join(docroot, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(docroot, uid, gid); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{
		Query: "site.test", Root: "/", Host: "site.test", Port: 80,
		Vhost:   site.Vhost{Server: "nginx", Names: []string{"site.test", "www.site.test"}, Root: docroot},
		DocRoot: site.DocRoot{Path: docroot, Owner: "www-data", UID: uid},
		Pool:    &site.Pool{Name: "www", User: "www-data", Group: "www-data"},
	}
	return s, docroot
}

// treeSums is the sha256 of every file under dir, by relative path.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mountsUnder are the host's mount points under dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			out = append(out, fields[4])
		}
	}
	return out
}

// TestSiteLabSealed: lab up --site serves a production-like site (docroot
// owned by www-data, its config naming 127.0.0.1 and localhost) from
// inside a seal: the front page is the site's own (its title, the lab
// database's marker through both TCP and the default socket, the site's
// Host and port), its call to itself stays in the lab, its write lands in
// the overlay (the real docroot byte-identical), its attempts to leave
// (an outside address, a port of the host) fail and are counted, the
// production database is untouched, and lab down leaves no process and
// no mount.
func TestSiteLabSealed(t *testing.T) {
	home := testHome(t)
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	// Production: a MariaDB of the host with the same database, another
	// marker, and an empty hits table.
	prod := hosttest.DebianMariaDB(t, "")
	if _, err := prod.Query("CREATE DATABASE sitedb; CREATE TABLE sitedb.marker (v VARCHAR(32)); INSERT INTO sitedb.marker VALUES ('production'); CREATE TABLE sitedb.hits (id INT AUTO_INCREMENT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	prodCounts := func() string {
		out, err := prod.Query("SELECT (SELECT COUNT(*) FROM sitedb.marker), (SELECT COUNT(*) FROM sitedb.hits), (SELECT v FROM sitedb.marker)")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	before := prodCounts()

	// A listener of the host's loopback: the lab must not reach it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	reached := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			reached <- struct{}{}
		}
	}()
	hostPort := ln.Addr().(*net.TCPAddr).Port

	s, docroot := siteFixture(t, hostPort)
	sums := treeSums(t, docroot)
	filled := false
	fill := func(ctx context.Context, db SiteDB) error {
		filled = true
		return fillSiteDB(ctx, db)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := Up(ctx, Options{Name: "site", Site: s, FillDatabase: fill})
	if err != nil {
		t.Fatal(err)
	}
	if !filled {
		t.Error("FillDatabase was not called")
	}
	if !l.Sealed() || l.User != "www-data" || l.Host != "site.test" || !strings.HasPrefix(l.URL, "unix:") {
		t.Errorf("lab state: sealed %v, user %q, host %q, url %q; want sealed, www-data, site.test, unix:", l.Sealed(), l.User, l.Host, l.URL)
	}
	if p := l.FrontPage; p == nil || p.Status != 200 || p.Title != "Site Test" {
		t.Fatalf("front page %+v, want 200 with the title Site Test", l.FrontPage)
	}
	page, err := l.FetchPage(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"marker=lab-copy", "socket=lab-copy", "write=ok", "self=inner-from-lab", "out=refused", "host=refused", "http_host=site.test ", "port=80", "https=off"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the page lacks %q: %s", want, page.Body)
		}
	}
	select {
	case <-reached:
		t.Error("a process of the sealed lab reached a listener of the host")
	default:
	}

	// Attempts: both destinations, counted.
	as, err := l.Attempts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("page: %s", page.Body)
	t.Logf("attempts: %v", as)
	found := map[string]uint64{}
	for _, a := range as {
		found[a.String()] = a.Count
	}
	for _, want := range []string{"tcp 10.255.255.1:80", "tcp 127.0.0.1:" + strconv.Itoa(hostPort)} {
		if found[want] == 0 {
			t.Errorf("attempt %s not counted; counted %v", want, as)
		}
	}
	if found["tcp 127.0.0.1:80"] != 0 || found["tcp 127.0.0.1:3306"] != 0 {
		t.Errorf("the lab's own listeners were counted as attempts: %v", as)
	}

	checkSiteDBAccount(t, l)

	// The write is in the overlay, not the docroot.
	if _, err := os.Stat(filepath.Join(l.Seal, "overlay", "upper", "written-by-lab.txt")); err != nil {
		t.Errorf("the page's write is not in the overlay's upper layer: %v", err)
	}
	if got := treeSums(t, docroot); !equalSums(got, sums) {
		t.Errorf("the real docroot changed: before %v, after %v", sums, got)
	}
	if got := prodCounts(); got != before {
		t.Errorf("production's database changed: before %q, after %q", before, got)
	}

	// Down: no process in the seal, no mount, no directory.
	sl, _ := seal.Open(l.Seal)
	pids := sl.Processes()
	if len(pids) == 0 {
		t.Error("no process found in the seal while the lab runs")
	}
	if err := Down("site"); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the seal survived lab down", pid)
		}
	}
	if m := mountsUnder(t, home); len(m) > 0 {
		t.Errorf("mounts left after lab down: %v", m)
	}
	if _, err := os.Stat(l.Dir); !os.IsNotExist(err) {
		t.Errorf("the lab directory is still there: %v", err)
	}
	if got := treeSums(t, docroot); !equalSums(got, sums) {
		t.Errorf("the real docroot changed after lab down: %v", got)
	}
	if got := prodCounts(); got != before {
		t.Errorf("production's database changed: before %q, after %q", before, got)
	}
}

// checkSiteDBAccount checks that a site lab's MariaDB is out of the site
// account's reach: it runs as DBUser, not the lab's account; its
// datadir, log and tmp directories are DBUser's alone (0700); its socket
// directory is DBUser's, passable by the lab's group only; no
// client.cnf is written, and the root password is in no file of the lab
// but root's secrets.json.
func checkSiteDBAccount(t *testing.T, l *Lab) {
	t.Helper()
	db, err := user.Lookup(DBUser)
	if err != nil {
		t.Fatalf("the account %s: %v", DBUser, err)
	}
	dbUID, _ := strconv.Atoi(db.Uid)
	if l.DBUser != DBUser || l.DBUID != dbUID || l.DBUID == l.UID || l.DBPeerUID() != dbUID {
		t.Errorf("lab state: MariaDB as %q uid %d (peer %d), lab as uid %d; want %s uid %d", l.DBUser, l.DBUID, l.DBPeerUID(), l.UID, DBUser, dbUID)
	}
	for _, p := range l.Processes {
		if p.Component != "mariadb" {
			continue
		}
		if uid := procUID(t, p.PID); uid != db.Uid {
			t.Errorf("mariadbd (pid %d) runs as uid %s, want %s's %s", p.PID, uid, DBUser, db.Uid)
		}
	}
	for d, want := range map[string]string{"mysql": "drwx------", siteDBLogDir: "drwx------", siteDBTmpDir: "drwx------", siteDBRunDir: "drwxr-x---"} {
		st, err := os.Lstat(filepath.Join(l.Dir, d))
		if err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		sys := st.Sys().(*syscall.Stat_t)
		if int(sys.Uid) != dbUID || st.Mode().String() != want {
			t.Errorf("%s is uid %d %v, want %s's %s", d, sys.Uid, st.Mode(), DBUser, want)
		}
		if d == siteDBRunDir && int(sys.Gid) != l.GID {
			t.Errorf("%s has gid %d, want the lab's group %d (the site connects through it)", d, sys.Gid, l.GID)
		}
	}
	if _, err := os.Lstat(filepath.Join(l.Dir, "client.cnf")); !os.IsNotExist(err) {
		t.Errorf("a site lab wrote client.cnf (%v): the root password must be in no file the lab can read", err)
	}
	sec, err := l.ReadSecrets()
	if err != nil || sec.MariaDBRootPassword == "" {
		t.Fatalf("the lab's secrets: %v", err)
	}
	filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || p == filepath.Join(l.Dir, "secrets.json") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), sec.MariaDBRootPassword) {
			t.Errorf("the lab's MariaDB root password is in %s", p)
		}
		return nil
	})
}

// fillSiteDB is the test's FillDatabase (package dbcopy's place): the
// site's database with the lab's marker, and its account as the site's
// configuration names it, over the socket and TCP.
func fillSiteDB(ctx context.Context, db SiteDB) error {
	sql := "CREATE DATABASE sitedb; CREATE TABLE sitedb.marker (v VARCHAR(32)); INSERT INTO sitedb.marker VALUES ('lab-copy');" +
		"CREATE TABLE sitedb.hits (id INT AUTO_INCREMENT PRIMARY KEY);" +
		"CREATE USER 'siteuser'@'localhost' IDENTIFIED BY 'sitepw'; CREATE USER 'siteuser'@'127.0.0.1' IDENTIFIED BY 'sitepw';" +
		"GRANT ALL ON sitedb.* TO 'siteuser'@'localhost'; GRANT ALL ON sitedb.* TO 'siteuser'@'127.0.0.1';"
	return db.Load(ctx, strings.NewReader(sql))
}

// TestSiteLabFromDiscovery: the site as site.Discover finds it on a host
// copy (Debian's nginx and php-fpm started for real, a vhost site.test
// whose docroot www-data owns) comes up sealed as the pool's account and
// serves its own page; the host copy's files are unchanged.
func TestSiteLabFromDiscovery(t *testing.T) {
	testHome(t)
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	h := hosttest.Debian(t)
	ng := h.Nginx(t)
	_, docroot := siteFixture(t, 1)
	vhost := "server {\n\tlisten 127.0.0.1:" + strconv.Itoa(ng.Port+1) + ";\n\tserver_name site.test www.site.test;\n\troot " + docroot + ";\n\tindex index.php;\n" +
		"\tlocation ~ \\.php$ {\n\t\tinclude snippets/fastcgi-php.conf;\n\t\tfastcgi_pass unix:" + h.Socket + ";\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(h.Root, "etc", "nginx", "sites-enabled", "site.test"), []byte(vhost), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := site.Discover(ctx, site.Host{Root: h.Root}, "site.test")
	if err != nil {
		t.Fatal(err)
	}
	if s.Pool == nil || s.Pool.User != "www-data" || s.DocRoot.Path != docroot {
		t.Fatalf("discovered pool %+v (%s), docroot %q; want www-data's pool and %s", s.Pool, s.PoolError, s.DocRoot.Path, docroot)
	}
	sums := treeSums(t, docroot)
	l, err := Up(ctx, Options{Name: "found", Site: s, FillDatabase: fillSiteDB})
	if err != nil {
		t.Fatal(err)
	}
	if l.User != "www-data" || l.Host != "site.test" {
		t.Errorf("lab runs as %q with Host %q; want the pool's www-data and site.test", l.User, l.Host)
	}
	if p := l.FrontPage; p == nil || p.Status != 200 || p.Title != "Site Test" {
		t.Errorf("front page %+v, want 200 with the title Site Test", l.FrontPage)
	}
	if err := Down("found"); err != nil {
		t.Fatal(err)
	}
	if got := treeSums(t, docroot); !equalSums(got, sums) {
		t.Errorf("the real docroot changed: %v", got)
	}
	if err := h.Unchanged(); err != nil {
		t.Errorf("the host copy changed: %v", err)
	}
}

func equalSums(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSiteLabRefusesTmpHome: a site lab is refused before anything starts
// when phptune's home is under /tmp, which the seal replaces inside.
func TestSiteLabRefusesTmpHome(t *testing.T) {
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	t.Setenv("PHPTUNE_HOME", filepath.Join(os.TempDir(), "phptune-never-made"))
	s := &site.Site{Query: "site.test", DocRoot: site.DocRoot{Path: "/var/www/html"}}
	_, err := planUp(Options{Name: "x", Site: s})
	if err == nil || !strings.Contains(err.Error(), "PHPTUNE_HOME") {
		t.Errorf("planUp: %v, want a refusal naming PHPTUNE_HOME", err)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "phptune-never-made")); !os.IsNotExist(err) {
		t.Errorf("the home was created: %v", err)
	}
}
