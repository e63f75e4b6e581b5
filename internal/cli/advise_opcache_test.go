package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
)

// scriptParent is a root-owned directory the copy's pool can reach, for
// --opcache-dir (the test's own temporary directory is private).
func scriptParent(t *testing.T) string {
	d := t.TempDir()
	os.Chmod(filepath.Dir(d), 0o755)
	os.Chmod(d, 0o755)
	return d
}

// TestAdviseOpcacheHostCopy reads opcache through the Debian copy's pool
// (enabled, as Debian ships it), leaves no script behind, refuses a pool
// whose open_basedir excludes the script's directory with the reason, and
// writes the offline report.
func TestAdviseOpcacheHostCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	h := hosttest.Debian(t)
	parent := scriptParent(t)
	start := time.Now()
	_, _, _ = runCLI(t, "advise", "--fpm-config", h.Conf)
	plain := time.Since(start)
	start = time.Now()
	out, errs, code := runCLI(t, "advise", "--fpm-config", h.Conf, "--opcache", "--opcache-dir", parent, "--json")
	t.Logf("advise took %v, with --opcache %v", plain, time.Since(start))
	if code != 0 {
		t.Fatalf("advise --opcache: exit %d\n%s%s", code, out, errs)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(a.Opcache) != 1 {
		t.Fatalf("opcache %+v", a.Opcache)
	}
	o := a.Opcache[0]
	if o.Error != "" || o.Through != "www" || o.Reading == nil || !o.Reading.Enable || o.Reading.Status == nil || o.Reading.MemoryConsumptionB != 128<<20 ||
		!strings.HasPrefix(o.Reading.PHPVersion, h.Version) || len(o.Knobs) != 0 {
		t.Errorf("opcache of the copy: %+v %+v", o, o.Reading)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("the status script's directory was left behind: %v", entries)
	}
	text := ""
	for _, f := range a.Findings {
		text += f.Message + "\n"
	}
	for _, w := range []string{"opcache (pools www): memory:", "hit rate", "revalidate_freq 2", "the JIT is off"} {
		if !strings.Contains(text, w) {
			t.Errorf("findings lack %q:\n%s", w, text)
		}
	}

	dir := t.TempDir()
	page := filepath.Join(dir, "advice.html")
	out, errs, code = runCLI(t, "advise", "--fpm-config", h.Conf, "--opcache", "--opcache-dir", parent, "--html", page, "-o", filepath.Join(dir, "out"))
	if code != 0 || !strings.Contains(out, "opcache (pools www)") {
		t.Fatalf("advise --html -o: exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), "phptune advise — pool www") || !strings.Contains(string(b), `id="opcache"`) || strings.Contains(string(b), "<script") {
		t.Errorf("--html: %v\n%.400s", err, b)
	}
	for _, name := range []string{"advice.json", "advice.html", "advice.txt"} {
		if st, err := os.Stat(filepath.Join(dir, "out", name)); err != nil || st.Size() == 0 {
			t.Errorf("-o: %s: %v", name, err)
		}
	}
	if txt, _ := os.ReadFile(filepath.Join(dir, "out", "advice.txt")); !strings.Contains(string(txt), "www   dynamic  5") {
		t.Errorf("advice.txt:\n%s", txt)
	}

	jailed := hosttest.Debian(t, func(www string) string {
		return www + "\nphp_admin_value[open_basedir] = /srv/site/\n"
	})
	out, errs, code = runCLI(t, "advise", "--fpm-config", jailed.Conf, "--opcache", "--opcache-dir", parent)
	want := "php_admin_value[open_basedir] = /srv/site/ excludes " + parent
	if code != 0 || !strings.Contains(out, "opcache (pools www): not read: through pool www: refused: pool www's "+want) {
		t.Errorf("a pool whose open_basedir excludes the script: exit %d\n%s%s", code, out, errs)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a refused read left a directory behind: %v", entries)
	}

	open := t.TempDir()
	os.Chmod(open, 0o777)
	checkUsageErrors(t, []usageCase{
		{[]string{"advise", "--opcache", "--opcache-dir", "relative"}, "--opcache-dir relative: not an absolute path", "only root can write"},
		{[]string{"advise", "--opcache", "--opcache-dir", open}, "can be written by other accounts", "only root can write"},
		{[]string{"advise", "--html", "/nonexistent/dir/a.html"}, "--html /nonexistent/dir/a.html: its directory does not exist", "existing directory"},
		{[]string{"advise", "--tune", "20260101-000000-x"}, "there is no results database", "Run phptune tune first"},
	})
}

// TestAdviseBesideStoredTune: a tune of the host's PHP version in the
// results database is put beside the advice (the newest one, or --tune's),
// with the difference explained; a tune of another PHP branch is not.
func TestAdviseBesideStoredTune(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm")
	}
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	h := hosttest.Debian(t)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	stored := func(id, php, size string, at time.Time) {
		if err := db.CreateRun(ctx, store.Run{ID: id, App: "wordpress", Workload: "front", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		tu := &results.Tune{ID: id, Kind: "tune", App: "wordpress", Workload: "front", Recommended: map[string]string{"pm": "static", "pm.max_children": size},
			Curves:      []results.Curve{{Label: "knee scan (static pool), knee ≈ 9"}},
			Holdout:     &results.Holdout{StartRPS: 50, RecommendedRPS: 80},
			Trials:      []results.Trial{{Phase: "holdout", Connections: 16}},
			Decisions:   []results.Decision{{Name: "opcache.validate_timestamps=off", Ratio: 1.01, CILow: 0.95, CIHigh: 1.08, Verdict: "no significant difference", Rounds: 4}},
			Environment: &results.Environment{Cores: 2, MemoryB: 4 << 30, Versions: map[string]string{"php-fpm": php}}}
		if err := db.Finish(ctx, id, store.StatusDone, tu); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	stored("old-82", h.Version+".1", "6", now.Add(-2*time.Hour))
	stored("new-82", h.Version+".36", "8", now.Add(-time.Hour))
	stored("newest-other", "7.4.33", "3", now)
	db.Close()

	out, errs, code := runCLI(t, "advise", "--fpm-config", h.Conf, "--json", "--opcache", "--opcache-dir", scriptParent(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if a.Tune == nil || a.Tune.RunID != "new-82" || a.Tune.MaxChildren != 8 || a.Tune.Knee != 9 || len(a.Tune.Pools) != 1 ||
		a.Tune.Pools[0].Advise != 5 || a.Tune.Pools[0].Tune != 8 || !strings.Contains(a.Tune.Selected, "the newest finished tune of PHP "+h.Version) {
		t.Fatalf("tune beside the advice: %+v", a.Tune)
	}
	if !strings.Contains(a.Tune.Pools[0].Why, "never reached pm.max_children") {
		t.Errorf("why: %s", a.Tune.Pools[0].Why)
	}
	found := false
	for _, f := range a.Findings {
		found = found || strings.Contains(f.Message, "The stored tune measured opcache.validate_timestamps=off: throughput ×1.01 [0.95, 1.08]")
	}
	if !found {
		t.Errorf("the tune's measurement of validate_timestamps is not quoted: %+v", a.Findings)
	}

	out, errs, code = runCLI(t, "advise", "--fpm-config", h.Conf, "--tune", "old-82", "--opcache", "--opcache-dir", scriptParent(t))
	t.Logf("advise --tune old-82:\n%s", out)
	if code != 0 || !strings.Contains(out, "Beside the stored tune old-82 (--tune old-82)") || !strings.Contains(out, "pool www: configured 5, advise 5, tune 6") {
		t.Errorf("--tune old-82: exit %d\n%s%s", code, out, errs)
	}
	checkUsageErrors(t, []usageCase{
		{[]string{"advise", "--fpm-config", h.Conf, "--tune", "newest-other"}, "--tune newest-other was measured on PHP 7.4.33; this host's php-fpm is " + h.Version, "tune again here"},
		{[]string{"advise", "--fpm-config", h.Conf, "--tune", "nope"}, "--tune nope: no such run", "phptune report --list"},
	})
}
