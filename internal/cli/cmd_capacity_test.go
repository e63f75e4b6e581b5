package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestCapacityRefusesBadInput: every invalid command line is a usage
// error naming the flag and its valid form, and nothing is started or
// stored.
func TestCapacityRefusesBadInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	checkUsageErrors(t, []usageCase{
		{[]string{"capacity"}, "give exactly one of --lab, --app, --docroot and --site", "Try: phptune capacity --app hello"},
		{[]string{"capacity", "--app", "hello", "--lab", "x"}, "give exactly one of", "Try:"},
		{[]string{"capacity", "--app", "nosuch"}, "--app \"nosuch\"", "Choose one of"},
		{[]string{"capacity", "--app", "hello", "--slo", "p99"}, "--slo \"p99\"", "Try: --slo 'p99<500ms'"},
		{[]string{"capacity", "--app", "hello", "--slo", "p99<500"}, "has no unit", "the grammar: p99<500ms"},
		{[]string{"capacity", "--app", "hello", "--slo", "p98<1s"}, "choose p50, p90, p95, p99 or p99.9", "Try: --slo"},
		{[]string{"capacity", "--app", "hello", "--slo", "p99<1s,errors<0%"}, "errors<=0%", "Try: --slo"},
		{[]string{"capacity", "--app", "hello", "--slo", "p99<1s,errors<1%", "--max-errors", "0"}, "both limit the errors", "without --max-errors"},
		{[]string{"capacity", "--app", "hello", "--max-errors", "200%"}, "--max-errors", "Try: --max-errors 0.1%"},
		{[]string{"capacity", "--app", "hello", "--start-rate", "0.5"}, "--start-rate 0.5: the rate schedule starts below 1 request per second", "Try: --start-rate 100"},
		{[]string{"capacity", "--app", "hello", "--min-rate", "0.2"}, "--min-rate: 0.2 requests per second: give at least 1", "Try: --min-rate 1"},
		{[]string{"capacity", "--app", "hello", "--min-rate", "0"}, "--min-rate 0: must be positive", "Try: --min-rate 1"},
		{[]string{"capacity", "--app", "hello", "--max-rate", "0.5"}, "--max-rate", "Try: --max-rate"},
		{[]string{"capacity", "--app", "hello", "--start-rate", "50", "--max-rate", "20"}, "--start-rate: 50 requests per second is outside the rates allowed", "Try: --start-rate"},
		{[]string{"capacity", "--app", "hello", "--growth", "1"}, "--growth: 1: give 1.1 to 10", "Try: --growth 1.5"},
		{[]string{"capacity", "--app", "hello", "--tolerance", "5"}, "--tolerance", "Try: --tolerance 0.1"},
		{[]string{"capacity", "--app", "hello", "--step", "200ms"}, "--step", "Try: --step 10s"},
		{[]string{"capacity", "--app", "hello", "--step-warmup", "-1s"}, "--step-warmup", "Try: --step-warmup 2s"},
		{[]string{"capacity", "--app", "hello", "--max-steps", "0"}, "--max-steps 0", "Try: --max-steps 24"},
		{[]string{"capacity", "--app", "hello", "--time-budget", "5s"}, "--time-budget 5s: too small for the 7s probe and one step", "Try: --time-budget 10m"},
		{[]string{"capacity", "--app", "hello", "--start-rate", "100", "--time-budget", "5s"}, "--time-budget: 5s is shorter than one step", "Try: --time-budget"},
		{[]string{"capacity", "--app", "hello", "--slo", "p99<2s", "--start-rate", "100", "--time-budget", "20s"}, "shorter than one step at 100 rps (4s warm-up + 20s measured)", "Try: --time-budget"},
		{[]string{"capacity", "--app", "hello", "--probe-connections", "0"}, "--probe-connections 0", "Try: --probe-connections 50"},
		{[]string{"capacity", "--lab", "x", "--set", "pm=static"}, "--set: only for a lab of its own", "phptune lab up --set"},
		{[]string{"capacity", "--app", "hello", "--set", "pm.max_children=0"}, "--set pm.max_children=0", "phptune knobs"},
		{[]string{"capacity", "--lab", "nosuch"}, "--lab nosuch", "phptune lab status"},
		{[]string{"capacity", "--app", "hello", "--workload", "comment"}, "--workload comment", "--app wordpress"},
		{[]string{"capacity", "--app", "hello", "--expect", "(("}, "--expect", "Try: --expect"},
		{[]string{"capacity", "--app", "hello", "--redact", "X-Key: v"}, "--redact", "Try: --redact"},
	})
	checkNothingCreated(t, home, dir)
}

// TestCapacityHello runs a real capacity search on the hello app with
// short steps: the command ramps, bisects and re-measures on a real lab,
// stores the result, writes its report, prints JSON of kind capacity,
// and takes its lab down. It asserts no rate (the machine is shared and
// noisy), only that the search did what its steps say.
func TestCapacityHello(t *testing.T) {
	home := labtest.Home(t)
	dir := t.TempDir()
	t.Chdir(dir)
	out, errs, code := runCLI(t, "capacity", "--app", "hello", "--slo", "p99<200ms", "--start-rate", "300",
		"--growth", "4", "--tolerance", "0.5", "--step", "2s", "--step-warmup", "1s", "--max-steps", "10", "--json")
	if code != 0 {
		t.Fatalf("capacity: exit %d\n%s", code, errs)
	}
	var res results.Capacity
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("capacity --json: %v\n%s", err, out)
	}
	if res.Kind != results.KindCapacity || res.App != "hello" || res.SLO != "p99<200ms,errors<=0%" || res.StartRateRPS != 300 || res.StepS != 2 {
		t.Errorf("result header: %+v", res)
	}
	if len(res.Steps) < 2 || res.Steps[0].RateRPS != 300 || res.Steps[0].Phase != "ramp" {
		t.Fatalf("steps: %+v", res.Steps)
	}
	for _, s := range res.Steps {
		if s.Bench == nil || s.Bench.Model != "open" || s.Bench.Requests+s.Bench.RequestsUnsent+s.Bench.RequestsUnanswered <= 0 || s.Bench.RateAskedRPS != s.RateRPS {
			t.Errorf("step %d: %+v", s.N, s.Bench)
		}
		if s.Pass != (len(s.FailReasons) == 0) {
			t.Errorf("step %d: pass %v with reasons %q", s.N, s.Pass, s.FailReasons)
		}
		if s.Bench != nil && s.Bench.Observation == nil {
			t.Errorf("step %d was not observed", s.N)
		}
	}
	switch res.Outcome {
	case "bracketed":
		if res.CapacityRPS <= 0 || res.FirstFailRPS <= res.CapacityRPS || res.FirstFailRPS > 1.5*res.CapacityRPS*1.0001 {
			t.Errorf("bracket [%g, %g] is not within the 50%% tolerance", res.CapacityRPS, res.FirstFailRPS)
		}
		phases := map[string]bool{}
		for _, s := range res.Steps {
			phases[s.Phase] = true
		}
		if !phases["confirm"] {
			t.Errorf("a bracketed search without its confirmation steps: %+v", res.Steps)
		}
	case "not converged", "above maximum", "below minimum":
		t.Logf("outcome %s: %v", res.Outcome, res.Warnings)
	default:
		t.Errorf("outcome %q", res.Outcome)
	}
	if !strings.Contains(errs, "step 1 (ramp) 300 rps") || !strings.Contains(errs, "stored as run "+res.ID) {
		t.Errorf("progress:\n%s", errs)
	}
	reports, _ := filepath.Glob(filepath.Join(dir, "phptune-report-capacity-*.html"))
	if len(reports) != 1 {
		t.Errorf("reports written: %v", reports)
	}
	db, err := store.Open(context.Background(), filepath.Join(home, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Run(context.Background(), res.ID)
	db.Close()
	if err != nil || r.Kind != store.KindCapacity || r.Capacity == nil || len(r.Capacity.Steps) != len(res.Steps) {
		t.Errorf("stored run: %v %+v", err, r)
	}
	// phptune report renders it again, as text.
	text, errs, code := runCLI(t, "report", res.ID, "--format", "text")
	if code != 0 || !strings.Contains(text, "rate rps") || !strings.Contains(text, "capacity  ") {
		t.Errorf("report --format text: exit %d\n%s\n%s", code, text, errs)
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Errorf("capacity left labs running: %+v", hs)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "labs")); len(entries) != 0 {
		t.Errorf("lab directories left: %v", entries)
	}
}
