package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// The mod_php production test/realserver.sh runs with
// PHPTUNE_REALSERVER_APACHE=modphp: the same wiki.test vhost, its PHP run
// by Debian's php8.2 module in prefork children, with two PHP settings of
// the vhost's own.
const (
	modPHPModule = "/usr/lib/apache2/modules/libphp8.2.so"
	modPHPIni    = "/etc/php/8.2/apache2/php.ini"
)

// TestSiteApacheModPHPLabOnProductionServer: test/realserver.sh's wiki
// served by Apache prefork + mod_php (PHPTUNE_REALSERVER_APACHE=modphp).
// phptune site finds its vhost, mod_php (the module, the prefork MPM, the
// apache2 SAPI's php.ini, the vhost's php_value settings) and MediaWiki's
// database; lab up --site serves its real page from Apache prefork +
// mod_php inside the seal, the vhost's memory_limit taken as the lab's
// knob and its upload_max_filesize carried as the vhost's line; bench
// measures / and the .htaccess-rewritten /wiki/Help; tune --site runs to
// a verdict with the event MPM + php-fpm as a challenger; production's
// database, its connections after each copy (the copy's two), its
// docroot and its Apache and PHP configuration stay as they were.
func TestSiteApacheModPHPLabOnProductionServer(t *testing.T) {
	needRealServerApache(t, "modphp")
	home := labtest.Home(t)
	t.Setenv("PHPTUNE_HOME", home)
	t.Chdir(t.TempDir()) // bench writes its report in the working directory
	db := productionDB(t)
	before, conns := productionStateOf(t, db, "wiki")
	sums := map[string]string{}
	for _, dir := range []string{wikiDocroot, "/etc/apache2", "/etc/php/8.2/apache2"} {
		sums[dir] = docrootSums(t, dir)
	}
	checkModPHPSite(t)

	upModPHPLab(t)
	_, afterLab := productionStateOf(t, db, "wiki")
	if n := afterLab - conns; n < 1 || n > 2 {
		t.Errorf("lab up opened %d connections to production, want the copy's (grants and dump: 2)", n)
	}
	benchModPHPLab(t)
	if out, errs, code := runCLI(t, "lab", "down", "wiki"); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}
	if _, c := productionStateOf(t, db, "wiki"); c != afterLab {
		t.Errorf("production's Connections went from %d (after the copy) to %d while the lab ran: the lab reached production", afterLab, c)
	}

	_, beforeTune := productionStateOf(t, db, "wiki")
	tuneModPHPSite(t, filepath.Join(home, "tune"))
	final, afterTune := productionStateOf(t, db, "wiki")
	if n := afterTune - beforeTune; n < 1 || n > 2 {
		t.Errorf("tune --site opened %d connections to production, want the copy's 2", n)
	}
	if final != before {
		t.Errorf("production's database changed:\nbefore %s\nafter  %s", before, final)
	}
	for dir, was := range sums {
		if got := docrootSums(t, dir); got != was {
			t.Errorf("%s changed:\nbefore %s\nafter  %s", dir, was, got)
		}
	}
}

// checkModPHPSite checks phptune site wiki.test against the mod_php
// production: no pool, PHP in Apache's prefork children by Debian's
// module, the apache2 SAPI's php.ini with the vhost's settings on top,
// MediaWiki's database and the MariaDB that answers there.
func checkModPHPSite(t *testing.T) {
	t.Helper()
	out, errs, code := runCLI(t, "site", "wiki.test")
	if code != 0 {
		t.Fatalf("site wiki.test: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("site wiki.test:\n%s", out)
	noWikiSecrets(t, "site wiki.test", out+errs)
	for _, want := range []string{
		"vhost       apache server at " + wikiVhost + ":1\n",
		"port 8080, http\n",
		"docroot     " + wikiDocroot + " (root at " + wikiVhost + ":4)",
		"pool        none: PHP runs in Apache via mod_php (" + modPHPModule + ", loaded at ",
		"; MPM prefork)\n",
		"php_admin_value[memory_limit] = 192M",
		"php_value[upload_max_filesize] = 32M",
		"php.ini   " + modPHPIni + "\n",
		"app         MediaWiki (database settings from " + wikiSettings + ":",
		"database  wiki, user wiki, password <redacted>, host localhost\n",
		"db          reaches unix:/run/mysqld/mysqld.sock\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("site wiki.test: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "proxy_fcgi") {
		t.Errorf("site wiki.test names proxy_fcgi for a mod_php site:\n%s", out)
	}
}

// liveKnobsLine is lab up's line naming the lab's live.knobs.
var liveKnobsLine = regexp.MustCompile(`start:\s+the live site's configuration \(([^;]+);`)

// upModPHPLab brings up lab wiki of the mod_php wiki (lab down at the
// test's end) and checks what it says and runs: Apache prefork + mod_php
// inside the seal, the real front page, the vhost's memory_limit as the
// lab's knob (live.knobs) and its upload_max_filesize carried as a line of
// the lab's httpd.conf.
func upModPHPLab(t *testing.T) {
	t.Helper()
	out, errs, code := runCLI(t, "lab", "up", "--site", "wiki.test", "--name", "wiki")
	if code != 0 {
		t.Fatalf("lab up --site wiki.test: exit %d\n%s%s", code, out, errs)
	}
	t.Cleanup(func() { runCLI(t, "lab", "down", "wiki") })
	t.Logf("lab up --site:\n%s%s", out, errs)
	for _, want := range []string{`answered 200`, `title "Production wiki"`, "server:     apache-prefork-modphp", "inside the seal",
		"phptune lab forward wiki", "php_value[upload_max_filesize] = 32M: carried as-is"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up's output lacks %q", want)
		}
	}
	if strings.Contains(out+errs, wikiPassword) {
		t.Errorf("lab up printed the database password")
	}
	m := liveKnobsLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("lab up's output names no live.knobs")
	}
	knobs, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server=apache-prefork-modphp\n", "memory_limit=192M\n"} {
		if !strings.Contains(string(knobs), want) {
			t.Errorf("%s lacks %q:\n%s", m[1], want, knobs)
		}
	}
	conf, err := os.ReadFile(filepath.Join(filepath.Dir(m[1]), "httpd.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), `php_value upload_max_filesize "32M"`) {
		t.Errorf("the lab's httpd.conf does not carry the vhost's upload_max_filesize:\n%s", conf)
	}
	if strings.Contains(string(conf), "php_admin_value memory_limit") {
		t.Errorf("the lab's httpd.conf carries the vhost's memory_limit, which is the lab's knob (its php.ini's):\n%s", conf)
	}
}

// benchModPHPLab measures lab wiki's front page and /wiki/Help, which
// the docroot's .htaccess rewrites to index.php.
func benchModPHPLab(t *testing.T) {
	t.Helper()
	for _, c := range []struct{ path, expect string }{{"/", "Main_Page: 3 pages"}, {"/wiki/Help", "Help: 3 pages"}} {
		out, errs, code := runCLI(t, "bench", "--lab", "wiki", "--app-path", c.path, "--expect", c.expect, "-c", "2", "-d", "2s", "--warmup", "200ms")
		if code != 0 {
			t.Fatalf("bench %s: exit %d\n%s%s", c.path, code, out, errs)
		}
		if !strings.Contains(out, "200:") || !strings.Contains(out, "(0 errors") || strings.Contains(out, "did not match") {
			t.Errorf("bench %s did not measure the page:\n%s", c.path, out)
		}
	}
}

// tuneModPHPSite runs tune --site wiki.test into dir, Apache prefork +
// mod_php as production runs it and the event MPM + php-fpm as a
// challenger (measured, not skipped), to a verdict.
func tuneModPHPSite(t *testing.T, dir string) {
	t.Helper()
	out, errs, code := runCLI(t, "tune", "--site", "wiki.test", "--workload", "/wiki/Help", "--expect", "Help: 3 pages", "-c", "2",
		"--challenges", "server=apache-event-fpm", "--time-budget", "60s", "--trial-duration", "1s", "--trial-warmup", "300ms",
		"--holdout-rounds", "2", "--curve", "none", "--baselines", "none", "-o", dir)
	if code != 0 {
		t.Fatalf("tune --site: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("tune --site:\n%s", out)
	for _, want := range []string{"server=apache-event-fpm", "verdict:"} {
		if !strings.Contains(out, want) {
			t.Errorf("tune's output lacks %q", want)
		}
	}
	// The challenger is measured: the event MPM with a php-fpm pool of
	// the sized children's size, not the incumbent's prefork knobs.
	if strings.Contains(out, "skipped: invalid") {
		t.Errorf("tune skipped a challenge as invalid:\n%s", out)
	}
}
