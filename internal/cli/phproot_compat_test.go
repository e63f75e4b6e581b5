package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestPHPRootCompat: a docroot with a page that works on both PHPs, one
// whose implicitly nullable parameter type PHP 8.4 deprecates at compile
// time, and one that declares array_find() — a polyfill that PHP 8.4's
// own array_find() makes a fatal error at compile time ("Cannot redeclare
// function"), fine on 8.2. compare of the distro's PHP against
// php.build=debian-8.4 shows, per configuration, the fatal errors of 8.4
// and the file they came from; php lint 8.4 lists the polyfill as failing
// on 8.4 only (a compile-time error, which php -l finds), the deprecation
// as a warning of the other file, and exits 1. Debian 13's production
// php.ini leaves E_DEPRECATED out of error_reporting, so the lab's log has
// no deprecation: php lint is where they show. tune with 8.4 as its
// challenge rejects it for the fatal errors. Build tier: php add 8.4
// fetches from Debian's archive.
func TestPHPRootCompat(t *testing.T) {
	if os.Getenv("PHPTUNE_BUILD_TESTS") != "1" {
		t.Skip("makes a Debian 13 root from the archive (~1 min, network): PHPTUNE_BUILD_TESTS=1 (make test-build)")
	}
	if os.Geteuid() != 0 {
		t.Skip("a PHP root is made as root")
	}
	home := labtest.Home(t)
	t.Setenv("PHPTUNE_HOME", home)
	t.Chdir(t.TempDir())
	if out, errs, code := runCLI(t, "php", "add", "8.4"); code != 0 {
		t.Fatalf("php add 8.4: exit %d\n%s%s", code, out, errs)
	}
	app, err := os.MkdirTemp(labtest.TempParent(), "phptune-compat-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(app)
	os.Chmod(app, 0o755)
	pages := map[string]string{
		"index.php": "<?php echo '<title>Compat</title>ok';\n",
		"dep.php":   "<?php\nfunction f(int $x = null) { return $x ?? 0; }\necho '<title>Dep</title>', f(1);\n",
		"poly.php":  "<?php\nfunction array_find(array $a, callable $f) { foreach ($a as $k => $v) { if ($f($v, $k)) { return $v; } } return null; }\necho '<title>Poly</title>', array_find([1, 2, 3], fn($v) => $v > 1);\n",
	}
	for name, body := range pages {
		if err := os.WriteFile(filepath.Join(app, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile("compat.scenario", []byte("2 GET /index.php\n1 GET /dep.php\n1 GET /poly.php\n"), 0o644)
	os.WriteFile("php84.knobs", []byte("php.build=debian-8.4\n"), 0o644)

	out, errs, code := runCLI(t, "compare", "--docroot", app, "--workload", "compat.scenario", "-c", "2", "-d", "2s", "--warmup", "1s", "--rounds", "2", "default", "php84=php84.knobs")
	t.Logf("compare: exit %d\n%s%s", code, out, errs)
	if code != 0 {
		t.Fatalf("compare: exit %d", code)
	}
	var line84, lineDefault string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "  php84 (PHP 8.4."):
			line84 = l
		case strings.HasPrefix(l, "  default (the distro's PHP)"):
			lineDefault = l
		}
	}
	if !strings.Contains(out, "PHP's messages by configuration") || line84 == "" || lineDefault == "" {
		t.Fatalf("compare printed no line per configuration's PHP")
	}
	if !strings.Contains(line84, "fatal error most from poly.php") || !strings.Contains(line84, "Cannot redeclare") {
		t.Errorf("the 8.4 configuration's line lacks poly.php's fatal error: %s", line84)
	}
	if !strings.Contains(lineDefault, "0 fatal errors") {
		t.Errorf("the distro's PHP logged fatal errors: %s", lineDefault)
	}

	// tune with 8.4 as its challenge: the errors stay under --max-errors
	// (a quarter of the requests), so what rejects 8.4 is its fatal
	// errors the distro's trial of the same round did not log.
	out, errs, code = runCLI(t, "tune", "--docroot", app, "--workload", "compat.scenario", "-c", "2", "--challenges", "php.build=debian-8.4",
		"--time-budget", "2m", "--trial-duration", "2s", "--trial-warmup", "1s", "--baselines", "none", "--curve", "none", "--max-errors", "40%", "-o", "tune-out")
	t.Logf("tune: exit %d\n%s%s", code, out, errs)
	if code != 0 {
		t.Fatalf("tune: exit %d", code)
	}
	var decided string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "php.build=debian-8.4 ") {
			decided = l
		}
	}
	if !strings.Contains(decided, "no ratio (0 rounds): rejected: ") || !strings.Contains(decided, "fatal PHP error") || !strings.Contains(decided, "Cannot redeclare function array_find() in poly.php") {
		t.Errorf("tune's decision on 8.4 does not reject it for its fatal errors: %q", decided)
	}
	if !strings.Contains(out, "  debian-8.4 (PHP 8.4.") || !strings.Contains(out, "fatal error most from poly.php") {
		t.Errorf("tune printed no PHP line for 8.4 naming poly.php's fatal error")
	}
	if knobs, err := os.ReadFile(filepath.Join("tune-out", "recommended.knobs")); err != nil || strings.Contains(string(knobs), "php.build") {
		t.Errorf("tune recommends a PHP build (%v):\n%s", err, knobs)
	}

	out, errs, code = runCLI(t, "php", "lint", "8.4", app)
	t.Logf("php lint: exit %d\n%s%s", code, out, errs)
	if code != 1 || !strings.Contains(errs, "1 file no longer compiles on PHP 8.4.") {
		t.Errorf("php lint: exit %d, want 1 naming one file", code)
	}
	failing, warned, _ := strings.Cut(out, "warnings of PHP 8.4")
	if !strings.Contains(failing, "poly.php\n    line 2: Fatal error: Cannot redeclare function array_find()") {
		t.Errorf("php lint does not list poly.php as failing on 8.4 only")
	}
	if !strings.Contains(warned, "dep.php\n    line 2: Deprecated: f(): Implicitly marking parameter $x as nullable is deprecated") {
		t.Errorf("php lint does not list dep.php's deprecation")
	}
	if !strings.Contains(out, "3 files checked") || !strings.Contains(out, "1 fails on PHP 8.4.") || !strings.Contains(out, "0 already fail on PHP 8.2") {
		t.Errorf("php lint's summary is wrong")
	}
}
