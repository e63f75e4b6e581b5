package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestSiteApacheLabOnProductionServer: test/realserver.sh's Apache site
// (wiki.test on :8080, event MPM, proxy_fcgi to php8.2-fpm, MediaWiki's
// LocalSettings.php, database wiki, a .htaccess rewrite) copied into a
// sealed lab that runs Apache: its front page answers 200 with its title,
// /wiki/Main_Page is rewritten by the docroot's own .htaccess, bench
// measures both through the seal's network namespace, tune runs to a
// verdict with nginx as a challenger, and production's database, its
// connections after the copy and its docroot stay as they were.
func TestSiteApacheLabOnProductionServer(t *testing.T) {
	needRealServerApache(t, "event")
	home := labtest.Home(t)
	t.Setenv("PHPTUNE_HOME", home)
	t.Chdir(t.TempDir()) // bench writes its report in the working directory
	db := productionDB(t)
	before, conns := productionStateOf(t, db, "wiki")
	files := docrootSums(t, "/var/www/wiki")

	out, errs, code := runCLI(t, "lab", "up", "--site", "wiki.test", "--name", "wiki")
	if code != 0 {
		t.Fatalf("lab up --site wiki.test: exit %d\n%s%s", code, out, errs)
	}
	defer runCLI(t, "lab", "down", "wiki")
	t.Logf("lab up --site:\n%s%s", out, errs)
	for _, want := range []string{`answered 200`, `title "Production wiki"`, "server:     apache-event-fpm", "inside the seal", "phptune lab forward wiki"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up's output lacks %q", want)
		}
	}
	if strings.Contains(out+errs, "wiki-secret") {
		t.Errorf("lab up printed the database password")
	}
	_, after := productionStateOf(t, db, "wiki")
	if n := after - conns; n < 1 || n > 2 {
		t.Errorf("lab up opened %d connections to production, want the copy's (grants and dump: 2)", n)
	}
	for _, c := range []struct{ path, expect string }{{"/", "Main_Page: 3 pages"}, {"/wiki/Help", "Help: 3 pages"}} {
		out, errs, code = runCLI(t, "bench", "--lab", "wiki", "--app-path", c.path, "--expect", c.expect, "-c", "2", "-d", "2s", "--warmup", "200ms")
		if code != 0 {
			t.Fatalf("bench %s: exit %d\n%s%s", c.path, code, out, errs)
		}
		if !strings.Contains(out, "200:") || !strings.Contains(out, "(0 errors") || strings.Contains(out, "did not match") {
			t.Errorf("bench %s did not measure the page:\n%s", c.path, out)
		}
	}
	if out, errs, code = runCLI(t, "lab", "down", "wiki"); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}
	// tune --site: a sealed lab of its own, Apache as production runs it,
	// nginx as a challenger, to a verdict.
	_, before2 := productionStateOf(t, db, "wiki")
	tuneOut := filepath.Join(home, "tune")
	out, errs, code = runCLI(t, "tune", "--site", "wiki.test", "--workload", "/wiki/Help", "--expect", "Help: 3 pages", "-c", "2", "--challenges", "server=nginx-fpm",
		"--time-budget", "60s", "--trial-duration", "1s", "--trial-warmup", "300ms", "--holdout-rounds", "2", "--curve", "none", "--baselines", "none", "-o", tuneOut)
	if code != 0 {
		t.Fatalf("tune --site: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("tune --site:\n%s", out)
	for _, want := range []string{"server=nginx-fpm", "verdict:"} {
		if !strings.Contains(out, want) {
			t.Errorf("tune's output lacks %q", want)
		}
	}
	_, after2 := productionStateOf(t, db, "wiki")
	if n := after2 - before2; n < 1 || n > 2 {
		t.Errorf("tune --site opened %d connections to production, want the copy's 2", n)
	}
	after = after2
	final, finalConns := productionStateOf(t, db, "wiki")
	if final != before {
		t.Errorf("production's database changed:\nbefore %s\nafter  %s", before, final)
	}
	if finalConns != after {
		t.Errorf("production's Connections went from %d (after the copy) to %d: the lab reached production", after, finalConns)
	}
	if got := docrootSums(t, "/var/www/wiki"); got != files {
		t.Errorf("the docroot changed:\nbefore %s\nafter  %s", files, got)
	}
}
