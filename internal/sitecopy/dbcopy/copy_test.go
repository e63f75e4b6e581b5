package dbcopy

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// appPassword has every character an option file and an SQL string make
// special.
const appPassword = `s3cr'et "pa ss"#;\word`

// fixture is the "production" database: tables with utf8mb4 text and
// binary blobs, a view, a trigger, a procedure and a function, and the
// app's own account with all privileges on it.
var fixture = []string{
	"CREATE DATABASE shop CHARACTER SET utf8mb4",
	"CREATE USER 'app'@'localhost' IDENTIFIED BY '" + sqlEscape(appPassword) + "'",
	"GRANT ALL PRIVILEGES ON shop.* TO 'app'@'localhost'",
	"CREATE TABLE shop.posts (id INT PRIMARY KEY AUTO_INCREMENT, title VARCHAR(200), body MEDIUMTEXT, n INT DEFAULT 0) ENGINE=InnoDB",
	"CREATE TABLE shop.files (id INT PRIMARY KEY, data LONGBLOB) ENGINE=InnoDB",
	"CREATE TABLE shop.log (id INT PRIMARY KEY AUTO_INCREMENT, post INT, at DATETIME) ENGINE=InnoDB",
	"CREATE TABLE shop.legacy (k VARCHAR(20) PRIMARY KEY, v TEXT) ENGINE=Aria",
	"SET NAMES utf8mb4; INSERT INTO shop.posts (title, body) SELECT CONCAT('Ünïcødé 🚀 post ', seq), REPEAT('naïve café — 日本語 😀 ', seq) FROM shop.seq_1_to_300",
	"INSERT INTO shop.files SELECT seq, RANDOM_BYTES(seq) FROM shop.seq_1_to_200",
	"INSERT INTO shop.files VALUES (1000, UNHEX('00FF27225C0A0D1A'))",
	"INSERT INTO shop.legacy VALUES ('a', 'x\\'y'), ('b', NULL)",
	"CREATE DEFINER='app'@'localhost' VIEW shop.titles AS SELECT id, title FROM shop.posts WHERE id % 2 = 0",
	"CREATE DEFINER='app'@'localhost' TRIGGER shop.posts_log AFTER UPDATE ON shop.posts FOR EACH ROW INSERT INTO shop.log (post, at) VALUES (NEW.id, NOW())",
	"CREATE DEFINER='app'@'localhost' PROCEDURE shop.bump(IN p INT) UPDATE shop.posts SET n = n + 1 WHERE id = p",
	"CREATE DEFINER='app'@'localhost' FUNCTION shop.twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
}

// labServer is a second copy of Debian's MariaDB playing the lab's: its
// root also logs in with a password, as a lab's does.
func labServer(t *testing.T) (*hosttest.MariaDB, string) {
	m := hosttest.DebianMariaDB(t, "")
	pw := "labroot" + strconv.Itoa(os.Getpid())
	if _, err := m.Query("ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('" + pw + "')"); err != nil {
		t.Fatal(err)
	}
	return m, pw
}

// state is what must not change on production: each table's row count
// and checksum.
func state(t *testing.T, m *hosttest.MariaDB, db string) map[string]string {
	t.Helper()
	out, err := m.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = '" + db + "' AND table_type = 'BASE TABLE' ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	s := map[string]string{}
	for _, tbl := range strings.Fields(out) {
		sum, err := m.Query(fmt.Sprintf("CHECKSUM TABLE %s.%s EXTENDED; SELECT COUNT(*) FROM %s.%s", db, tbl, db, tbl))
		if err != nil {
			t.Fatal(err)
		}
		s[tbl] = strings.Join(strings.Fields(strings.ReplaceAll(sum, db+"."+tbl, "")), " ")
	}
	if len(s) == 0 {
		t.Fatalf("no table in %s", db)
	}
	return s
}

// counters are production's writes and connections.
var counters = []string{"Connections", "Com_insert", "Com_update", "Com_delete", "Com_replace", "Com_create_table",
	"Com_drop_table", "Com_alter_table", "Com_create_user", "Com_grant", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted"}

func status(t *testing.T, m *hosttest.MariaDB) map[string]int64 {
	t.Helper()
	out, err := m.Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('" + strings.Join(counters, "','") + "')")
	if err != nil {
		t.Fatal(err)
	}
	s := map[string]int64{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			s[k], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return s
}

// watchCmdlines polls every process's command line and environment until
// stop is closed and reports whether secret appeared in any.
func watchCmdlines(secret string) (stop func() (seen string, polls int)) {
	var mu sync.Mutex
	var found string
	var n atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				if _, err := strconv.Atoi(e.Name()); err != nil {
					continue
				}
				for _, f := range []string{"cmdline", "environ"} {
					b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), f))
					if bytes.Contains(b, []byte(secret)) {
						mu.Lock()
						found = fmt.Sprintf("/proc/%s/%s: %q", e.Name(), f, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
						mu.Unlock()
					}
				}
			}
			n.Add(1)
		}
	}()
	return func() (string, int) {
		close(done)
		wg.Wait()
		return found, int(n.Load())
	}
}

func TestDumpAndLoad(t *testing.T) {
	prod := hosttest.DebianMariaDB(t, "")
	lab, labRoot := labServer(t)
	acct := testAccount(t)
	var started atomic.Int32 // the caller's way of starting (the lab's cgroup) is used
	acct.Start = func(c *exec.Cmd) error { started.Add(1); return c.Start() }
	for _, q := range fixture {
		if _, err := prod.Query(q); err != nil {
			t.Fatal(err)
		}
	}
	before := state(t, prod, "shop")
	start := time.Now()
	app := &site.App{Kind: "wordpress", File: "/var/www/site/wp-config.php",
		DB: site.Database{Name: "shop", User: "app", Password: site.NewSecret(appPassword), Host: "localhost"}}
	src, err := SourceFor(app, &site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: prod.Socket}, SizeBytes: 1 << 20}, acct)
	if err != nil {
		t.Fatal(err)
	}

	s0 := status(t, prod)
	stopWatch := watchCmdlines(appPassword)
	var dump bytes.Buffer
	var calls int
	var lastDone, lastTotal int64
	err = Dump(context.Background(), src, &dump, func(done, total int64) { calls, lastDone, lastTotal = calls+1, done, total })
	seen, polls := stopWatch()
	if err != nil {
		t.Fatal(err)
	}
	s1 := status(t, prod)
	if seen != "" {
		t.Errorf("the app's password was visible during the dump in %s", seen)
	}
	if polls < 2 {
		t.Errorf("/proc was polled only %d times during the dump", polls)
	}
	if calls == 0 || lastDone != int64(dump.Len()) || lastTotal != 1<<20 {
		t.Errorf("progress: %d calls, last (%d, %d), want the dump's %d bytes of %d", calls, lastDone, lastTotal, dump.Len(), 1<<20)
	}
	for _, c := range counters {
		want := s0[c]
		if c == "Connections" {
			want += 2 // the dump's, and status()'s own
		}
		if s1[c] != want {
			t.Errorf("production's %s went %d → %d, want %d (the dump only reads, on one connection)", c, s0[c], s1[c], want)
		}
	}
	if got := state(t, prod, "shop"); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("production changed:\n%v\nwas\n%v", got, before)
	}
	for _, w := range []string{"CREATE TABLE `posts`", "VIEW `titles`", "posts_log", "PROCEDURE `bump`", "FUNCTION `twice`", "0x00FF27225C0A0D1A", "🚀"} {
		if !bytes.Contains(dump.Bytes(), []byte(w)) {
			t.Errorf("the dump lacks %q", w)
		}
	}

	// Production's grants, read as the app: one more connection.
	s1 = status(t, prod)
	grants, notes, err := ReadGrants(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if hosts := AccountHosts(grants); len(hosts) != 1 || hosts[0] != "localhost" || len(notes) != 0 {
		t.Errorf("grants %+v notes %q: want the app's, at localhost", grants, notes)
	}
	if s2 := status(t, prod); s2["Connections"] != s1["Connections"]+2 || s2["Com_grant"] != s1["Com_grant"] {
		t.Errorf("reading the grants: Connections %d → %d (want +2: its own and status()'s)", s1["Connections"], s2["Connections"])
	}

	dst := Target{Socket: lab.Socket, RootPassword: labRoot, DB: "shop", User: "app", Password: app.DB.Password,
		Hosts: AccountHosts(grants), Grants: grants, RunAs: acct}
	check := func(what string) {
		t.Helper()
		if got := state(t, lab, "shop"); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("%s: the lab's copy differs:\n%v\nproduction:\n%v", what, got, before)
		}
		for q, want := range map[string]string{
			"SELECT COUNT(*) FROM shop.titles": "150",
			"SELECT shop.twice(21)":            "42",
			"SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = 'shop'": "1",
			"SET NAMES utf8mb4; SELECT title FROM shop.posts WHERE id = 7":                   "Ünïcødé 🚀 post 7",
		} {
			if got, err := lab.Query(q); err != nil || got != want {
				t.Errorf("%s: %s = %q (%v), want %q", what, q, got, err, want)
			}
		}
		// The app's own account, with its password, as the app connects.
		db := appConn(t, lab.Socket)
		defer db.Close()
		if _, err := db.Exec("CALL bump(3)"); err != nil {
			t.Errorf("%s: the app's account in the lab: %v", what, err)
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM log").Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: the trigger fired %d times (%v), want 1", what, n, err)
		}
		if _, err := db.Exec("CREATE DATABASE elsewhere"); err == nil {
			t.Errorf("%s: the app's account can create another database: its grants were widened", what)
		}
	}
	if err := Load(context.Background(), dst, bytes.NewReader(dump.Bytes())); err != nil {
		t.Fatal(err)
	}
	check("plain dump")
	if state(t, prod, "shop")["log"] != before["log"] {
		t.Error("the app's call in the lab reached production")
	}

	// A gzip dump loads the same, into a server that already holds an
	// older copy (lab reset's case).
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write(dump.Bytes())
	z.Close()
	if _, err := lab.Query("DROP DATABASE shop"); err != nil {
		t.Fatal(err)
	}
	if err := Load(context.Background(), dst, &gz); err != nil {
		t.Fatal(err)
	}
	check("gzip dump")

	// A dump's shell command does not run.
	marker := filepath.Join(t.TempDir(), "ran")
	os.Chmod(filepath.Dir(marker), 0o777)
	hostile := "CREATE TABLE evil (id INT);\n\\! touch " + marker + "\nsystem touch " + marker + "\n"
	err = Load(context.Background(), dst, strings.NewReader(hostile))
	if _, serr := os.Stat(marker); serr == nil {
		t.Errorf("a shell command in the dump ran (load: %v)", err)
	}

	if n := started.Load(); n != 5 {
		t.Errorf("Account.Start ran %d programs, want 5 (dump, grants, three loads)", n)
	}
	if found := filesHolding(t, appPassword, start, os.TempDir(), prod.Root, lab.Root); found != "" {
		t.Errorf("the password was left in %s", found)
	}
}

// appConn connects to the lab's server as the app does.
func appConn(t *testing.T, socket string) *sql.DB {
	t.Helper()
	c := mysql.NewConfig()
	c.Net, c.Addr, c.User, c.Passwd, c.DBName = "unix", socket, "app", appPassword, "shop"
	conn, err := mysql.NewConnector(c)
	if err != nil {
		t.Fatal(err)
	}
	return sql.OpenDB(conn)
}

// filesHolding names a regular file below dirs, modified since start,
// that holds secret.
func filesHolding(t *testing.T, secret string, start time.Time, dirs ...string) string {
	found := ""
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || found != "" || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.ModTime().Before(start) || info.Size() > 64<<20 {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(secret)) {
				found = p
			}
			return nil
		})
	}
	return found
}

func TestBudgetRefusesALargeDatabase(t *testing.T) {
	prod := hosttest.DebianMariaDB(t, "")
	for _, q := range []string{"CREATE DATABASE big", "CREATE TABLE big.t (id INT PRIMARY KEY, b LONGBLOB)",
		"INSERT INTO big.t SELECT seq, RANDOM_BYTES(1024) FROM big.seq_1_to_4096"} {
		if _, err := prod.Query(q); err != nil {
			t.Fatal(err)
		}
	}
	// The size as package site reads it: the database's directory.
	var size int64
	ents, _ := os.ReadDir(filepath.Join(prod.DataDir, "big"))
	for _, e := range ents {
		if i, err := e.Info(); err == nil {
			size += i.Size()
		}
	}
	if size < 4<<20 {
		t.Fatalf("big is %d bytes on disk", size)
	}
	b, err := NewBudget(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(size); err != nil {
		t.Errorf("a %d-byte database refused on a disk with %d free: %v", size, b.FreeBytes, err)
	}
	b.FreeBytes = size // the lab's filesystem nearly full
	if err := b.Check(size); err == nil || !strings.Contains(err.Error(), "does not fit the lab") {
		t.Errorf("a database as large as the free space: %v", err)
	}
	b.FreeBytes, b.MemoryBytes = 1<<40, size/2
	if err := b.Check(size); err == nil || !strings.Contains(err.Error(), "--memory-max") {
		t.Errorf("a database twice the memory cap: %v", err)
	}
}
