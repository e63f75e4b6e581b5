package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// usageCase is a command line that must be refused as a usage error (exit
// 2) whose message names the flag (want) and says what to do (fix).
type usageCase struct {
	args      []string
	want, fix string
}

func checkUsageErrors(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (usage); stdout %q; stderr: %s", code, out, errs)
			}
			for _, w := range []string{c.want, c.fix} {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// checkNothingCreated: no lab, no results database row, and nothing in dir
// but the files the test made (keep).
func checkNothingCreated(t *testing.T, home, dir string, keep ...string) {
	t.Helper()
	if entries, _ := os.ReadDir(filepath.Join(home, "labs")); len(entries) != 0 {
		t.Errorf("refused commands left labs behind: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(home, "results.db")); err == nil {
		db, err := store.Open(context.Background(), filepath.Join(home, "results.db"))
		if err != nil {
			t.Fatal(err)
		}
		runs, _ := db.Runs(context.Background())
		db.Close()
		if len(runs) != 0 {
			t.Errorf("refused commands stored runs: %+v", runs)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !slices.Contains(keep, e.Name()) {
			t.Errorf("a refused command created %s", filepath.Join(dir, e.Name()))
		}
	}
}

// writeFiles writes test inputs into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var badInputs = map[string]string{
	"bad.knobs":    "# tuned\npm=static\npm.max_children=lots\n",
	"spare.knobs":  "pm.max_children=2\n",
	"bad.scenario": "8 GET /index.php\nnonsense\n",
	"a-file":       "not a directory\n",
}

// TestTuneChecksEverythingFirst: every bad input of tune is a usage error
// naming the flag and the fix, found before an output directory, a
// database row or a lab exists.
func TestTuneChecksEverythingFirst(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, dir, badInputs)
	if err := os.Mkdir(filepath.Join(dir, "docroot"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(dir, "docroot"), map[string]string{"index.php": "<?php echo 1;"})
	checkUsageErrors(t, []usageCase{
		{[]string{"tune", "--lab", "nosuch", "-o", "out"}, `--lab nosuch: no such lab "nosuch"`, "phptune lab status"},
		{[]string{"tune", "--lab", "Bad_Name"}, "--lab Bad_Name", "phptune lab status"},
		{[]string{"tune", "--app", "hello", "--workload", "nosuch.scenario", "-o", "out"}, `--workload "nosuch.scenario" is not front, comment, a path`, "Try: --workload front"},
		{[]string{"tune", "--app", "hello", "--workload", "bad.scenario"}, "--workload bad.scenario: line 2", "WEIGHT METHOD PATH"},
		{[]string{"tune", "--docroot", filepath.Join(dir, "docroot"), "--workload", "comment"}, "--workload comment", "--app wordpress"},
		{[]string{"tune", "--app", "hello", "-o", "a-file"}, "-o a-file exists and is not a directory", "Try: -o DIR"},
		{[]string{"tune", "--app", "hello", "-o", "a-file/sub"}, "-o a-file/sub cannot be created: a-file is not a directory", "Try: -o DIR"},
		{[]string{"tune", "--app", "hello", "--knobs", "bad.knobs", "-o", "out"}, `--knobs bad.knobs: line 3: knob pm.max_children: value "lots"`, "phptune knobs"},
		{[]string{"tune", "--app", "hello", "--knobs", "spare.knobs"}, "--knobs spare.knobs: pm.max_spare_servers=3 is greater than pm.max_children=2", "phptune knobs"},
		{[]string{"tune", "--app", "hello", "--knobs", "nosuch.knobs"}, "--knobs nosuch.knobs", "KNOB=VALUE lines"},
		{[]string{"tune", "--app", "hello", "--set", "nosuch=1"}, "--set nosuch=1: unknown knob", "phptune knobs"},
		{[]string{"tune", "--app", "hello", "--set", "pm"}, `--set "pm": write KNOB=VALUE`, "Try: --set pm.max_children=16"},
		{[]string{"tune", "--docroot", filepath.Join(dir, "nosuch")}, "--docroot", "Try: --docroot DIR"},
		{[]string{"tune", "--app", "hello", "--redact", "X-Api-Key: v"}, `--redact "X-Api-Key: v"`, "Try: --redact X-Tenant"},
		{[]string{"tune", "--resume", "nope", "-o", "out"}, "--resume nope: there is no results database", "phptune report --list"},
	})
	checkNothingCreated(t, home, dir, append(slices.Collect(mapsKeys(badInputs)), "docroot")...)
	if _, err := os.Stat(filepath.Join(home, "results.db")); err == nil {
		t.Error("a refused tune created the results database")
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestResumeOfUnknownRun: with a database, an unknown run is a usage error
// and adds no row.
func TestResumeOfUnknownRun(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	db, err := openResults(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	checkUsageErrors(t, []usageCase{
		{[]string{"tune", "--resume", "nope"}, `--resume nope: run "nope": not found`, "phptune report --list"},
	})
	checkNothingCreated(t, home, dir)
}

// TestLabUpInputErrorsExit2: a bad knob, app, docroot, name or port given
// to lab up is a usage error (exit 2), as everywhere else.
func TestLabUpInputErrorsExit2(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, dir, badInputs)
	checkUsageErrors(t, []usageCase{
		{[]string{"lab", "up", "--set", "nosuch=1"}, "--set nosuch=1: unknown knob", "phptune knobs"},
		{[]string{"lab", "up", "--set", "pm=fast"}, `knob pm: value "fast"`, "phptune knobs"},
		{[]string{"lab", "up", "--set", "pm.max_children=2"}, "the configuration of --set: pm.max_spare_servers=3 is greater", "phptune knobs"},
		{[]string{"lab", "up", "--knobs", "bad.knobs"}, "--knobs bad.knobs: line 3:", "phptune knobs"},
		{[]string{"lab", "up", "--knobs", "bad.knobs", "--set", "pm.max_children=4"}, "--knobs bad.knobs: line 3:", "phptune knobs"},
		{[]string{"lab", "up", "--app", "nope"}, `--app "nope" is not a built-in app`, "Choose one of:"},
		{[]string{"lab", "up", "--docroot", filepath.Join(dir, "nosuch")}, "--docroot", "Try: --docroot DIR"},
		{[]string{"lab", "up", "--name", "Bad_Name"}, "--name", "Try: --name mylab"},
		{[]string{"lab", "up", "--port", "80"}, "--port 80", "leave it out"},
		{[]string{"lab", "up", "--set", "fpm.pools=6"}, "fpm.pools=6 is greater than pm.max_children=5", "valid: 1..5"},
		{[]string{"lab", "up", "--set", "pm=static", "--set", "pm.max_children=8", "--set", "nginx.worker_processes=2", "--set", "nginx.fastcgi_keepalive=4"},
			"nginx.fastcgi_keepalive=4 keeps up to 8 idle FastCGI connections", "valid: 0..3"},
		{[]string{"lab", "up", "--set", "server=apache-event-fpm", "--set", "fpm.pools=2"}, "fpm.pools=2 belongs to server nginx-fpm", "set server=nginx-fpm"},
	})
	checkNothingCreated(t, home, dir, slices.Collect(mapsKeys(badInputs))...)
}

// TestCompareChecksEverythingFirst: compare refuses a bad workload or
// configuration before it brings up its lab.
func TestCompareChecksEverythingFirst(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, dir, badInputs)
	checkUsageErrors(t, []usageCase{
		{[]string{"compare", "--workload", "nosuch.scenario", "default"}, `--workload "nosuch.scenario"`, "Try: --workload front"},
		{[]string{"compare", "--workload", "bad.scenario", "default"}, "--workload bad.scenario: line 2", "WEIGHT METHOD PATH"},
		{[]string{"compare", "default", "bad.knobs"}, "configuration bad: bad.knobs: line 3: knob pm.max_children", "phptune knobs"},
		{[]string{"compare", "default", "s=spare.knobs"}, "configuration s: spare.knobs: pm.max_spare_servers=3 is greater", "phptune knobs"},
		{[]string{"compare", "default", "x=nosuch.knobs"}, "configuration x:", "KNOB=VALUE lines"},
		{[]string{"compare", "default", "=bad.knobs"}, `configuration "=bad.knobs"`, "LABEL=FILE"},
		{[]string{"compare", "--redact", "", "default"}, `--redact ""`, "Try: --redact X-Tenant"},
	})
	checkNothingCreated(t, home, dir, slices.Collect(mapsKeys(badInputs))...)
}

// TestTuneLabCheckedBeforeRestart: tune --lab with a bad workload or
// output directory leaves the running lab as it was (no restart, no
// configuration change).
func TestTuneLabCheckedBeforeRestart(t *testing.T) {
	home := labtest.Home(t)
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, dir, badInputs)
	if _, errs, code := runCLI(t, "lab", "up", "--name", "running", "--app", "hello"); code != 0 {
		t.Fatalf("lab up: exit %d\n%s", code, errs)
	}
	before, err := lab.Open("running")
	if err != nil {
		t.Fatal(err)
	}
	checkUsageErrors(t, []usageCase{
		{[]string{"tune", "--lab", "running", "--workload", "bad.scenario"}, "--workload: scenario bad.scenario: line 2", "WEIGHT METHOD PATH"},
		{[]string{"tune", "--lab", "running", "--workload", "comment"}, "--workload: workload comment posts WordPress comments", "Try: --workload front"},
		{[]string{"tune", "--lab", "running", "-o", "a-file"}, "-o a-file exists and is not a directory", "Try: -o DIR"},
		{[]string{"tune", "--lab", "running", "--set", "pm=static"}, "--set: only for a lab of its own (--app, --docroot, --site)", "phptune lab up --set"},
		{[]string{"tune", "--lab", "running", "--slo", "fast"}, "--slo", "Try: --slo 'p99<300ms'"},
	})
	after, err := lab.Open("running")
	if err != nil {
		t.Fatal(err)
	}
	if after.State != before.State || !slices.Equal(pids(after), pids(before)) || len(after.Config) != len(before.Config) {
		t.Errorf("the lab changed: %s %v -> %s %v", before.State, pids(before), after.State, pids(after))
	}
	if _, err := os.Stat(filepath.Join(home, "results.db")); err == nil {
		t.Error("a refused tune created the results database")
	}
	checkNothingCreated(t, t.TempDir(), dir, slices.Collect(mapsKeys(badInputs))...)
}

func pids(l *lab.Lab) []int {
	var out []int
	for _, p := range l.Processes {
		out = append(out, p.PID)
	}
	return out
}

// TestProfileChecksEverythingFirst: every bad input of profile is a usage
// error naming the flag and the fix, found before a lab or a file exists.
func TestProfileChecksEverythingFirst(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, dir, badInputs)
	checkUsageErrors(t, []usageCase{
		{[]string{"profile", "--app", "nosuch"}, `--app "nosuch" is not a built-in app`, "Choose one of"},
		{[]string{"profile", "--app", "hello", "--lab", "x"}, "give exactly one of --lab, --app, --docroot and --site", "Try: phptune profile"},
		{[]string{"profile", "--lab", "nosuch"}, `--lab nosuch: no such lab "nosuch"`, "phptune lab status"},
		{[]string{"profile", "--php-clock", "sometimes"}, `--php-clock "sometimes" is not cpu or wall`, "Try: --php-clock cpu"},
		{[]string{"profile", "--freq", "5000"}, "--freq 5000: use 1..999 Hz", "Try: --freq 49"},
		{[]string{"profile", "--native=false", "--php=false"}, "nothing to sample", "Leave out"},
		{[]string{"profile", "--rounds", "0"}, "--rounds 1..20", "Try: --rounds 3"},
		{[]string{"profile", "-d", "100ms"}, "-d at least 1s", "Try: --rounds 3"},
		{[]string{"profile", "-o", "a-file"}, "-o a-file exists and is not a directory", "Try: -o DIR"},
		{[]string{"profile", "--workload", "bad.scenario"}, "--workload bad.scenario: line 2", "WEIGHT METHOD PATH"},
	})
	checkNothingCreated(t, home, dir, slices.Collect(mapsKeys(badInputs))...)
}
