package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestPHPRootLab: from an empty cache, phptune php add 8.4 makes Debian
// 13's PHP root; a WordPress lab on php.build=debian-8.4 serves its real
// front page with no fatal error in PHP's log; compare measures it beside
// the distro's PHP 8.2 with intervals; php remove takes the root away and
// the knob is then refused. Build tier: it fetches from Debian's archive.
func TestPHPRootLab(t *testing.T) {
	if os.Getenv("PHPTUNE_BUILD_TESTS") != "1" {
		t.Skip("makes a Debian 13 root from the archive (~1 min, network): PHPTUNE_BUILD_TESTS=1 (make test-build)")
	}
	if os.Geteuid() != 0 {
		t.Skip("a PHP root is made as root")
	}
	home := labtest.Home(t)
	t.Setenv("PHPTUNE_HOME", home)
	out, errs, code := runCLI(t, "php", "add", "8.4")
	if code != 0 {
		t.Fatalf("php add 8.4: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("php add 8.4:\n%s%s", out, errs)
	if out, _, code = runCLI(t, "php", "list"); code != 0 || !strings.Contains(out, "8.4") {
		t.Fatalf("php list: exit %d\n%s", code, out)
	}

	out, errs, code = runCLI(t, "lab", "up", "--app", "wordpress", "--name", "php84", "--set", "php.build=debian-8.4")
	if code != 0 {
		t.Fatalf("lab up on php.build=debian-8.4: exit %d\n%s%s", code, out, errs)
	}
	defer runCLI(t, "lab", "down", "php84")
	if !strings.Contains(out, "answered 200") || !strings.Contains(out, "A WordPress seeded by phptune") || !strings.Contains(errs, "PHP 8.4.") {
		t.Errorf("lab up did not serve WordPress on PHP 8.4:\n%s%s", out, errs)
	}
	logs, _ := filepath.Glob(filepath.Join(home, "labs", "php84", "log", "*"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if strings.Contains(string(b), "PHP Fatal") {
			t.Errorf("%s has a fatal error:\n%s", l, b)
		}
	}
	if out, errs, code = runCLI(t, "lab", "down", "php84"); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}

	knobs := filepath.Join(home, "php84.knobs")
	if err := os.WriteFile(knobs, []byte("php.build=debian-8.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, "compare", "--app", "wordpress", "-c", "4", "-d", "2s", "--rounds", "2", "default", "php84="+knobs)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("compare:\n%s", out)
	for _, want := range []string{"php84", "PHP speed ratio", "php.build=debian-8.4: PHP 8.4."} {
		if !strings.Contains(out, want) {
			t.Errorf("compare's output lacks %q", want)
		}
	}

	if out, errs, code = runCLI(t, "php", "remove", "8.4"); code != 0 {
		t.Fatalf("php remove 8.4: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = runCLI(t, "lab", "up", "--app", "hello", "--name", "gone", "--set", "php.build=debian-8.4")
	if code == 0 || !strings.Contains(errs, "php add 8.4") {
		runCLI(t, "lab", "down", "gone")
		t.Errorf("php.build=debian-8.4 after php remove: exit %d, want a refusal naming php add 8.4:\n%s", code, errs)
	}
}
