package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/build/phpbuild"
	"github.com/phptune/phptune/internal/report"
)

// fakeBuild puts a complete-looking build into the cache (no compiler
// runs): the listing, the security wording and rm are the CLI's.
func fakeBuild(t *testing.T, id string, older bool) {
	t.Helper()
	dir := filepath.Join(phpbuild.Dir(), id)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := phpbuild.Record{Schema: 1, ID: id, SourceVersion: "8.2.32", Installed: "8.2.36-1~deb12u1", Older: older,
		Variant: "pgo", Minimal: true, Training: "strings:front", Created: "2026-11-23T17:00:00Z"}
	if !older {
		r.SourceVersion, r.ExtraCFLAGS = "8.2.36", "-O3 -march=native"
	}
	data, _ := json.Marshal(&r)
	if err := os.WriteFile(filepath.Join(dir, "record.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuildListAndRm(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	if out, errs, code := runCLI(t, "build", "list"); code != 0 || out != "" || !strings.Contains(errs, "no builds") {
		t.Fatalf("empty list: %d %q %q", code, out, errs)
	}
	fakeBuild(t, "0123456789ab", true)
	fakeBuild(t, "ba9876543210", false)
	// A build in progress and a stage are never listed.
	os.MkdirAll(filepath.Join(phpbuild.Dir(), ".work", "tmp-abc"), 0o755)
	os.MkdirAll(filepath.Join(phpbuild.Dir(), ".stage-cccccccccccc"), 0o755)
	out, errs, code := runCLI(t, "build", "list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("list:\n%s", out)
	}
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "0123456789ab"):
			if !strings.Contains(l, "OLDER than installed 8.2.36-1~deb12u1: missing security fixes") || !strings.Contains(l, "pgo (minimal)") {
				t.Errorf("older build's line: %q", l)
			}
		case strings.HasPrefix(l, "ba9876543210"):
			if strings.Contains(l, "OLDER") || !strings.Contains(l, "pgo (minimal) +-O3 -march=native") {
				t.Errorf("current build's line: %q", l)
			}
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	if out, _, code := runCLI(t, "build", "list", "--json"); code != 0 || !strings.Contains(out, `"older_than_installed": true`) {
		t.Fatalf("list --json: %d\n%s", code, out)
	}
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"build", "rm", "nothex"}, 2, "a build id is 12 hex digits"},
		{[]string{"build", "rm", "ffffffffffff"}, 2, "phptune build list"},
		{[]string{"build", "rm", "0123456789ab"}, 0, "build 0123456789ab removed"},
		{[]string{"build", "rm", "0123456789ab"}, 2, "no such build"},
		{[]string{"build", "--variant", "pgo-lto-bolt", "--minimal"}, 2, "--variant pgo-lto-bolt with --minimal"},
		{[]string{"build", "--variant", "pgo-lto", "--minimal"}, 2, "build it in full"},
		{[]string{"build", "--variant", "fast"}, 2, "choose plain, pgo, pgo-lto, bolt, pgo-bolt, pgo-lto-bolt"},
		{[]string{"build", "--train", "hello"}, 2, "--train is for the trained variants"},
		{[]string{"build", "--variant", "pgo", "--train", "wordpress:/about"}, 2, "front, mix or comment"},
		{[]string{"build", "--variant", "pgo", "--train", "io:mix"}, 2, "app io trains on front"},
		{[]string{"build", "--cflags", "-O3 -Wl,-rpath,/tmp"}, 2, `"-Wl,-rpath,/tmp" is not a compiler flag`},
		{[]string{"build", "--variant", "pgo", "--cflags", "-flto=auto"}, 2, "is chosen by --variant"},
		{[]string{"build", "--variant", "pgo", "--train-duration", "10ms"}, 2, "at least 1s"},
		{[]string{"build", "--train-duration", "2m"}, 2, "--train-duration is for the trained variants"},
	}
	for _, c := range cases {
		_, errs, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.stderr) {
			t.Errorf("%v: exit %d stderr %q; want %d and %q", c.args, code, errs, c.code, c.stderr)
		}
	}
	if out, _, _ := runCLI(t, "build", "list"); strings.Contains(out, "0123456789ab") || !strings.Contains(out, "ba9876543210") {
		t.Errorf("after rm:\n%s", out)
	}
	if out, _, code := runCLI(t, "build", "--help"); code != 0 || !strings.Contains(out, "rewritten by LLVM BOLT") || !strings.Contains(out, "SCHED_IDLE") {
		t.Errorf("help:\n%s", out)
	}
}

// A result names every build its trials ran, with an older source's
// warning, and says so when one is gone from the cache.
func TestBuildsOf(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	fakeBuild(t, "0123456789ab", true)
	got := buildsOf([]map[string]string{
		{"php.build": "distro"}, {"pm": "static"}, {"php.build": "0123456789ab"}, {"php.build": "0123456789ab"}, {"php.build": "ffffffffffff"},
	})
	if len(got) != 2 || got[0].ID != "0123456789ab" || got[0].Variant != "pgo" || got[0].Training != "strings:front" || !got[0].Older ||
		!strings.Contains(got[0].Warning, "OLDER than the installed") || got[1].ID != "ffffffffffff" || !got[1].Missing {
		t.Fatalf("buildsOf = %+v", got)
	}
	var b strings.Builder
	report.BuildsText(&b, got)
	if s := b.String(); !strings.Contains(s, "php.build=0123456789ab: PHP 8.2.32 pgo trained on strings:front") || !strings.Contains(s, "OLDER") ||
		!strings.Contains(s, "php.build=ffffffffffff: no longer in the build cache") {
		t.Errorf("printed:\n%s", s)
	}
}
