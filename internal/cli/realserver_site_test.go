package cli

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/watch/proc"
)

// TestSiteOnProductionServer is the site owner's path on a production
// server: test/realserver.sh's nginx on :80 serving site.test from
// /var/www/site (owned by www-data, its wp-config.php pointing at
// localhost), php-fpm, and MariaDB on /run/mysqld/mysqld.sock with the
// site's database. Production traffic (GETs and comment POSTs) writes an
// access log; then lab up --site, a bench of the front page and of the
// writing page, a tune replaying production's log with its POSTs (the
// log lab up offers, named by --workload-from-log vhost), lab
// reset and lab down. Production's database (every table's checksum and
// row count), its Connections counter (the copy's own connections only)
// and every file of the docroot (sha256) must be as before.
func TestSiteOnProductionServer(t *testing.T) {
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("runs on test/realserver.sh's production server: make test-realserver")
	}
	home := labtest.Home(t)
	t.Setenv("PHPTUNE_HOME", home)
	t.Chdir(t.TempDir()) // bench writes its report in the working directory
	for i := 0; i < 20; i++ {
		path := "/"
		if i%5 == 4 {
			path = "/comment.php"
		}
		req, _ := http.NewRequest(map[bool]string{true: "POST", false: "GET"}[path != "/"], "http://127.0.0.1"+path, nil)
		req.Host = "site.test"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("production traffic: %v", err)
		}
		resp.Body.Close()
	}
	db := productionDB(t)
	before, conns := productionState(t, db)
	files := docrootSums(t, "/var/www/site")

	out, errs, code := runCLI(t, "lab", "up", "--site", "site.test", "--name", "prod")
	if code != 0 {
		t.Fatalf("lab up --site: exit %d\n%s%s", code, out, errs)
	}
	defer runCLI(t, "lab", "down", "prod")
	t.Logf("lab up --site:\n%s%s", out, errs)
	if !strings.Contains(out+errs, "Production site") || strings.Contains(out+errs, "answered 301") {
		t.Errorf("lab up's page check is not the site's page:\n%s%s", out, errs)
	}
	// test/realserver.sh's vhost holds a location and a FastCGI parameter
	// the lab's server block does not carry: named, the value not shown.
	if !strings.Contains(out+errs, "nginx vhost: location ~ /\\.ht at ") || !strings.Contains(out+errs, "nginx vhost: fastcgi_param APP_ENV (") || strings.Contains(out+errs, "Zq9") {
		t.Errorf("lab up --site does not name the vhost's rules it leaves out (or shows a parameter's value)")
	}
	if want := "traffic:    production's access log /var/log/nginx/site.access.log (combined): phptune tune --lab prod --workload-from-log /var/log/nginx/site.access.log\n"; !strings.Contains(out, want) {
		t.Errorf("lab up --site does not offer production's access log; want\n%s", want)
	}
	_, after := productionState(t, db)
	copyConns := after - conns
	if copyConns < 1 || copyConns > 2 {
		t.Errorf("lab up opened %d connections to production, want the copy's (grants and dump: 2)", copyConns)
	}

	for _, path := range []string{"/", "/comment.php"} {
		out, errs, code = runCLI(t, "bench", "--lab", "prod", "--app-path", path, "-c", "2", "-d", "2s", "--warmup", "200ms")
		if code != 0 {
			t.Fatalf("bench %s: exit %d\n%s%s", path, code, out, errs)
		}
		if !strings.Contains(out, "200:") || strings.Contains(out, "redirect") {
			t.Errorf("bench %s did not measure 200s:\n%s", path, out)
		}
	}
	tuneOut := filepath.Join(home, "tune")
	// "vhost": the site lab's recorded access log, the one lab up named.
	out, errs, code = runCLI(t, "tune", "--lab", "prod", "--workload-from-log", "vhost", "--allow-post", "-c", "2",
		"--time-budget", "60s", "--trial-duration", "1s", "--trial-warmup", "300ms", "--holdout-rounds", "2", "--curve", "none", "--baselines", "none", "-o", tuneOut)
	if code != 0 {
		t.Fatalf("tune --lab (log replay): exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = runCLI(t, "lab", "reset", "prod"); code != 0 {
		t.Fatalf("lab reset: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = runCLI(t, "lab", "down", "prod"); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}

	final, finalConns := productionState(t, db)
	if final != before {
		t.Errorf("production's database changed:\nbefore %s\nafter  %s", before, final)
	}
	if finalConns != after {
		t.Errorf("production's Connections went from %d (after the copy) to %d: the lab reached production", after, finalConns)
	}
	if got := docrootSums(t, "/var/www/site"); got != files {
		t.Errorf("the docroot changed:\nbefore %s\nafter  %s", files, got)
	}
	t.Logf("production: %s; connections: %d by the copy, 0 after; docroot: %s", final, copyConns, files)
}

// productionDB is one connection to the production MariaDB, kept for the
// whole test so that its own reads add no connection.
func productionDB(t *testing.T) *sql.DB {
	t.Helper()
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	servers, err := livehost.MariaDBServers(fs, "/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := livehost.PickMariaDB(servers, livehost.DefaultMariaDBSocket)
	if err != nil {
		t.Fatal(err)
	}
	db, err := livehost.OpenMariaDB(s)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	t.Cleanup(func() { db.Close() })
	return db
}

// productionState is every table of the site's database with its row
// count and checksum, and the server's Connections counter.
func productionState(t *testing.T, db *sql.DB) (string, int) {
	t.Helper()
	return productionStateOf(t, db, "site")
}

// productionStateOf is productionState of database name.
func productionStateOf(t *testing.T, db *sql.DB, name string) (string, int) {
	t.Helper()
	rows, err := db.Query("SHOW TABLES FROM " + name)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	sort.Strings(tables)
	var parts []string
	for _, tb := range tables {
		var count int
		var sum sql.NullInt64
		if err := db.QueryRow("SELECT COUNT(*) FROM " + name + "." + tb).Scan(&count); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.QueryRow("CHECKSUM TABLE "+name+"."+tb+" EXTENDED").Scan(&got, &sum); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, fmt.Sprintf("%s rows=%d checksum=%d", tb, count, sum.Int64))
	}
	var v string
	var conns int
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Connections'").Scan(&v, &conns); err != nil {
		t.Fatal(err)
	}
	return strings.Join(parts, "; "), conns
}

// docrootSums is every file under dir with its sha256, one digest of all.
func docrootSums(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "%s %x\n", p, sum)
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d files, sha256 of their sums %s", n, hex.EncodeToString(h.Sum(nil))[:16])
}

// TestSiteDocrootOfLiveSiteRefused: --docroot of a live site's document
// root (test/realserver.sh's site.test, /var/www/site), of a directory
// inside it or of one holding it is refused before anything starts,
// naming the site and --site, and so is the panel pool's chdir (no vhost
// names it); --unsealed-production serves it anyway with a warning.
func TestSiteDocrootOfLiveSiteRefused(t *testing.T) {
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("runs on test/realserver.sh's production server: make test-realserver")
	}
	labtest.Home(t)
	os.MkdirAll("/var/www/site/sub", 0o755)
	os.WriteFile("/var/www/site/sub/index.php", []byte("<?php echo 'sub';"), 0o644)
	defer os.RemoveAll("/var/www/site/sub")
	for _, args := range [][]string{
		{"lab", "up", "--docroot", "/var/www/site", "--name", "live"},
		{"tune", "--docroot", "/var/www/site/sub", "--time-budget", "2m"},
		{"compare", "--docroot", "/var/www", "default"},
	} {
		out, errs, code := runCLI(t, args...)
		site := "site.test"
		if args[2] == "/var/www" {
			site = "/var/www/html" // the default vhost's, first
		}
		if code != 2 || !strings.Contains(errs, "the live site "+site) || !strings.Contains(errs, "--site "+site) || !strings.Contains(errs, "--unsealed-production") {
			t.Errorf("%q: exit %d, want 2 naming the live site and --site\n%s%s", args, code, out, errs)
		}
	}
	// The panel's pool serves /var/lib/php-panel/www (its chdir); no vhost names it.
	for _, dir := range []string{"/var/lib/php-panel/www", "/var/lib/php-panel"} {
		out, errs, code := runCLI(t, "lab", "up", "--docroot", dir, "--name", "live")
		if code != 2 || !strings.Contains(errs, "php-fpm pool panel in ") || !strings.Contains(errs, "php-panel.conf (chdir)") ||
			!strings.Contains(errs, "--site /var/lib/php-panel/www") || !strings.Contains(errs, "--unsealed-production") {
			t.Errorf("lab up --docroot %s: exit %d, want 2 naming the panel's pool, its file and the fix\n%s%s", dir, code, out, errs)
		}
	}
	out, errs, code := runCLI(t, "lab", "up", "--docroot", "/var/www/site", "--name", "live", "--unsealed-production")
	if code != 0 {
		t.Fatalf("lab up --unsealed-production: exit %d\n%s%s", code, out, errs)
	}
	runCLI(t, "lab", "down", "live")
}
