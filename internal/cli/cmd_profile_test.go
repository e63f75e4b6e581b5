package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/labprofile"
)

// TestProfileCommand runs phptune profile on a lab of its own for one
// short round: it prints the top lists and the overheads, writes the
// JSON, the folded stacks and the flame graph page, and leaves no lab.
func TestProfileCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	home := labtest.Home(t)
	dir := t.TempDir()
	out, errs, code := runCLI(t, "profile", "--app", "strings", "--rounds", "1", "-d", "2s", "--warmup", "1s", "-c", "4", "-o", filepath.Join(dir, "p"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"PHP samples (cpu clock)", "Overhead (against the plain runs of the same rounds)", "php (excimer): CPU per request"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "p", "profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res labprofile.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.PHP == nil || res.PHP.Samples == 0 {
		t.Errorf("no PHP samples in profile.json: %s", res.PHPUnavailable)
	}
	html, err := os.ReadFile(filepath.Join(dir, "p", "profile.html"))
	if err != nil || !strings.Contains(string(html), `id="php-data"`) {
		t.Errorf("profile.html has no PHP flame graph (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p", "php.folded")); err != nil {
		t.Error(err)
	}
	if res.Native != nil && res.Native.Samples > 0 {
		if _, err := os.Stat(filepath.Join(dir, "p", "native.folded")); err != nil {
			t.Error(err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "labs")); len(entries) != 0 {
		t.Errorf("labs left behind: %v", entries)
	}
}
