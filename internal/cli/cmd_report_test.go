package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// storeFixtures fills a fresh results database with the report package's
// fixtures: a finished tune, a bench and an interrupted tune without a
// result.
func storeFixtures(t *testing.T) (tuneID, benchID string) {
	t.Helper()
	var tn results.Tune
	var b results.Bench
	for p, v := range map[string]any{"../report/testdata/tune.json": &tn, "../report/testdata/bench.json": &b} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	ctx := context.Background()
	if _, err := lab.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, resultsDBPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(ctx, store.Run{ID: tn.ID, Command: tn.Command, App: tn.App, Workload: tn.Workload, CreatedAt: tn.StartedAt}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range tn.Trials {
		if err := db.SaveTrial(ctx, tn.ID, store.Trial{Trial: tr, Key: tr.Phase, StartedAt: tn.StartedAt, FinishedAt: tn.StartedAt}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Finish(ctx, tn.ID, store.StatusDone, &tn); err != nil {
		t.Fatal(err)
	}
	b.StartedAt = tn.StartedAt.Add(time.Hour) // the newest finished run
	if err := db.SaveBench(ctx, &b, "hello", "/"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(ctx, store.Run{ID: "interrupted-1", App: "io", CreatedAt: tn.StartedAt.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetStatus(ctx, "interrupted-1", store.StatusInterrupted); err != nil {
		t.Fatal(err)
	}
	return tn.ID, b.ID
}

func TestReportCommand(t *testing.T) {
	tuneID, benchID := storeFixtures(t)

	t.Run("list", func(t *testing.T) {
		out, errs, code := runCLI(t, "report", "--list")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, want := range []string{tuneID, benchID, "interrupted-1", "] on throughput", "rps, p99"} {
			if !strings.Contains(out, want) {
				t.Errorf("--list lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("html default file", func(t *testing.T) {
		out, errs, code := runCLI(t, "report", tuneID)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		want, _ := filepath.Abs("phptune-report-" + tuneID + ".html")
		if strings.TrimSpace(out) != want {
			t.Fatalf("printed %q, want the report's path %q", out, want)
		}
		data, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "<!DOCTYPE html>") || !strings.Contains(string(data), "Holdout") {
			t.Errorf("%s is not the tune's HTML report", want)
		}
	})

	t.Run("text to stdout", func(t *testing.T) {
		out, errs, code := runCLI(t, "report", tuneID, "--format", "text")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, want := range []string{"throughput rps", "latency p99 ms", "errors", "memory", "ratio (95% CI)"} {
			if !strings.Contains(out, want) {
				t.Errorf("text report lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("json of a bench to a file", func(t *testing.T) {
		out, errs, code := runCLI(t, "report", benchID, "--format", "json", "-o", "b.json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.HasSuffix(strings.TrimSpace(out), "b.json") {
			t.Errorf("printed %q, want the file's path", out)
		}
		var b results.Bench
		data, _ := os.ReadFile("b.json")
		if err := json.Unmarshal(data, &b); err != nil || b.Kind != results.KindBench || b.SchemaVersion != results.SchemaVersion || b.ID != benchID {
			t.Errorf("b.json: %v %+v", err, b.ID)
		}
	})

	t.Run("latest is the newest run with a result", func(t *testing.T) {
		out, errs, code := runCLI(t, "report", "latest", "--format", "text")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(out, "(run "+benchID+")") {
			t.Errorf("latest rendered:\n%s", out)
		}
	})

	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown run", []string{"report", "nosuchrun"}, 2, "phptune report --list"},
		{"no run named", []string{"report"}, 2, "phptune report --list"},
		{"bad format", []string{"report", tuneID, "--format", "pdf"}, 2, "html, json or text"},
		{"unwritable output", []string{"report", tuneID, "-o", "/nonexistent/dir/r.html"}, 2, "-o /nonexistent/dir/r.html"},
		{"interrupted run", []string{"report", "interrupted-1"}, 1, "phptune tune --resume interrupted-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errs, c.code, c.stderr)
			}
		})
	}
}

func TestReportWithoutDatabase(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	_, errs, code := runCLI(t, "report", "latest")
	if code == 0 || !strings.Contains(errs, "phptune bench or phptune tune first") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(resultsDBPath()); err == nil {
		t.Error("report created a results database")
	}
}

func TestReportSaveBenchRun(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	b := &results.Bench{SchemaVersion: results.SchemaVersion, Kind: results.KindBench, ID: "bench-x", Target: "http://127.0.0.1:8080/",
		Command: "phptune bench -c 4 http://127.0.0.1:8080/", StartedAt: time.Now(), ThroughputRPS: 10, Requests: 100}
	path, err := saveBenchRun(context.Background(), b, "hello", "/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("report: %v", err)
	}
	out, errs, code := runCLI(t, "report", "bench-x", "--format", "text")
	if code != 0 || !strings.Contains(out, "phptune bench http://127.0.0.1:8080/  (run bench-x)") {
		t.Errorf("exit %d, %s%s", code, out, errs)
	}
}

// A lab's password echoed into a stored result (an error body, a log) is
// removed from the report even where it does not look like a credential.
func TestReportRemovesLabPasswords(t *testing.T) {
	labtest.Home(t)
	t.Chdir(t.TempDir())
	// A real lab with a database: its secrets are phptune's own file.
	l, err := lab.Up(context.Background(), lab.Options{Name: "wp1", App: "io"})
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Down(l.Name)
	sec, err := l.ReadSecrets()
	if err != nil {
		t.Fatal(err)
	}
	b := &results.Bench{SchemaVersion: results.SchemaVersion, Kind: results.KindBench, ID: "bench-leak", Target: "http://127.0.0.1:8080/",
		StartedAt: time.Now(), Warnings: []string{"error body: Access denied (using " + sec.DBPassword + ") root " + sec.MariaDBRootPassword}}
	if _, err := saveBenchRun(context.Background(), b, "wordpress", "/", "r.html", nil); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile("r.html")
	for _, format := range []string{"text", "json"} {
		out, errs, code := runCLI(t, "report", "bench-leak", "--format", format)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for name, doc := range map[string]string{format: out, "html": string(html)} {
			if strings.Contains(doc, sec.DBPassword) || strings.Contains(doc, sec.MariaDBRootPassword) {
				t.Errorf("the %s report contains a lab password", name)
			}
		}
	}
}
