package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab"
)

// TestSitePHP84OnProductionServer: the site of test/realserver.sh's
// production server (nginx, php-fpm 8.2, MariaDB) measured on the
// distro's PHP 8.2 and on Debian 13's PHP 8.4 (php.build=debian-8.4)
// side by side, each configuration in its own sealed site lab: compare
// gives the intervals and one line of PHP's messages per configuration,
// and production's database and docroot are as before. The server runs
// in a namespace without a network, so the root is made before it starts
// (make test-build: phptune php add 8.4 into PHPTUNE_PHP_ROOT_HOME).
func TestSitePHP84OnProductionServer(t *testing.T) {
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("runs on test/realserver.sh's production server: make test-build")
	}
	home := os.Getenv("PHPTUNE_PHP_ROOT_HOME")
	if home == "" {
		t.Skip("needs a home with PHP 8.4's root made beforehand (make test-build): PHPTUNE_PHP_ROOT_HOME")
	}
	if _, err := os.Stat(filepath.Join(home, "php-roots", "8.4", "manifest.json")); err != nil {
		t.Fatalf("PHPTUNE_PHP_ROOT_HOME=%s has no PHP 8.4 root (phptune php add 8.4 first): %v", home, err)
	}
	t.Setenv("PHPTUNE_HOME", home)
	t.Cleanup(func() {
		hs, _ := lab.List()
		for _, h := range hs {
			lab.Down(h.Lab.Name)
		}
	})
	db := productionDB(t)
	before, conns := productionState(t, db)
	files := docrootSums(t, "/var/www/site")

	out, errs, code := runCLI(t, "compare", "--site", "site.test", "-c", "2", "-d", "2s", "--warmup", "500ms", "--rounds", "2",
		"default", "php84=php.build=debian-8.4")
	t.Logf("compare --site: exit %d\n%s%s", code, out, errs)
	if code != 0 {
		t.Fatalf("compare --site: exit %d", code)
	}
	var row, line84 string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "php84 "):
			row = l
		case strings.HasPrefix(l, "  php84 (PHP 8.4."):
			line84 = l
		}
	}
	if !strings.Contains(row, "[") {
		t.Errorf("compare printed no interval for php84: %q", row)
	}
	if line84 == "" || !strings.Contains(line84, " 0 fatal errors") {
		t.Errorf("the 8.4 configuration's PHP line is missing or has fatal errors: %q", line84)
	}
	final, finalConns := productionState(t, db)
	if final != before {
		t.Errorf("production's database changed:\nbefore %s\nafter  %s", before, final)
	}
	if got := docrootSums(t, "/var/www/site"); got != files {
		t.Errorf("the docroot changed:\nbefore %s\nafter  %s", files, got)
	}
	t.Logf("production: %s; %d connections to production (the copies')", final, finalConns-conns)
}
