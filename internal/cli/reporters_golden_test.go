package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// The text the commands print that a golden CLI case cannot reach
// without starting servers or reading a live host: bench's summary of a
// run (report.BenchText), compare's table (printCompare, printBuilds) and
// advise's text (printAdvice), from stored results. Rewrite with
// go test ./internal/cli -run '^TestGolden' -update.

// loadJSON reads a testdata file into v.
func loadJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestGoldenPrintBench prints a stored bench run (one with errors by
// class) as phptune bench prints it at the end of a run.
func TestGoldenPrintBench(t *testing.T) {
	var b results.Bench
	loadJSON(t, filepath.Join(goldenDir, "runs", "bench-errors.json"), &b)
	var out bytes.Buffer
	_ = report.BenchText(&out, &b)
	goldentest.Check(t, filepath.Join("testdata", "reporters", "bench.text"), out.Bytes())
}

// TestGoldenPrintCompare prints a canned compare result (a baseline, a
// tuned configuration on a PHP build whose backlog the kernel caps, and a
// configuration that failed) as text, as phptune compare prints it, and
// as its --json.
func TestGoldenPrintCompare(t *testing.T) {
	var res results.Compare
	loadJSON(t, filepath.Join("testdata", "reporters", "compare.json"), &res)
	var text bytes.Buffer
	report.CompareText(&text, &res, time.Duration(res.DurationS*float64(time.Second)))
	report.BuildsText(&text, res.Builds)
	goldentest.Check(t, filepath.Join("testdata", "reporters", "compare.text"), text.Bytes())

	var js bytes.Buffer
	e := json.NewEncoder(&js)
	e.SetIndent("", "  ")
	if err := e.Encode(&res); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, filepath.Join("testdata", "reporters", "compare.json.golden"), js.Bytes())
}

// TestGoldenPrintAdvice prints the advice of a canned host (report's
// fixture as JSON: two pools, one too large for the memory, opcache full,
// MariaDB, nginx in front, a stored tune beside it) as phptune advise
// prints it. advise itself reads live processes in /proc: it has no
// golden CLI case.
func TestGoldenPrintAdvice(t *testing.T) {
	var a advise.Advice
	loadJSON(t, filepath.Join("testdata", "reporters", "advice.json"), &a)
	var out bytes.Buffer
	printAdvice(&Env{Stdout: &out, Stderr: &out}, a)
	goldentest.Check(t, filepath.Join("testdata", "reporters", "advice.text"), out.Bytes())
}
