package servercompare

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/observe"
)

// rounds measures one configuration over rounds with throughput rps[r]
// (0: not measured that round), the rest as in r.
func rounds(r run, rps ...float64) []*results.Bench {
	out := make([]*results.Bench, len(rps))
	for i, v := range rps {
		if v > 0 {
			x := r
			x.rps = v
			out[i] = x.bench()
		}
	}
	return out
}

func byLabel(t *testing.T, cs []results.ServerConfig, label string) results.ServerConfig {
	t.Helper()
	for _, c := range cs {
		if c.Label == label {
			return c
		}
	}
	t.Fatalf("no row %q", label)
	return results.ServerConfig{}
}

func TestSummarize(t *testing.T) {
	even := run{p99: 100, workerCPU: []float64{50, 50, 50, 50}, cpu: fpmCPU(0.001, 0.009, 0), workerPSS: 20 << 20}
	ms := []Measured{
		{Label: "nginx-fpm tuned", Server: knob.NginxFPM, Role: results.RoleTuned, Runs: rounds(even, 200, 210, 190, 205)},
		{Label: "nginx-fpm default", Server: knob.NginxFPM, Role: results.RoleDefault, Runs: rounds(even, 150, 160, 140, 155)},
		// Measured in rounds 1, 2 and 4 only: its ratios pair those.
		{Label: "unit default", Server: knob.UnitPHP, Role: results.RoleDefault, Runs: rounds(even, 100, 104, 0, 98)},
		{Label: "apache-event-fpm default", Server: knob.ApacheEventFPM, Role: results.RoleDefault, Failed: "failed to start: no apache2", Runs: make([]*results.Bench, 4)},
	}
	sum := Summarize(ms)
	if sum.Best != "nginx-fpm tuned" {
		t.Fatalf("best %q", sum.Best)
	}
	if len(sum.Configs) != 4 {
		t.Fatalf("%d rows: a failed configuration must keep its row", len(sum.Configs))
	}
	best := byLabel(t, sum.Configs, "nginx-fpm tuned")
	if best.Rank != 1 || best.VsBest != nil || best.Rounds != 4 {
		t.Errorf("best: rank %d, vs best %v, rounds %d", best.Rank, best.VsBest, best.Rounds)
	}
	if v := best.Throughput; !(v.Low < v.Value && v.Value < v.High) || v.Value < 190 || v.Value > 210 {
		t.Errorf("best throughput %+v", v)
	}
	def := byLabel(t, sum.Configs, "nginx-fpm default")
	if def.Rank != 2 || def.VsBest == nil || def.VsBest.Rounds != 4 || !Slower(def.VsBest) {
		t.Errorf("default: rank %d, vs best %+v", def.Rank, def.VsBest)
	}
	unit := byLabel(t, sum.Configs, "unit default")
	if unit.Rank != 3 || unit.Rounds != 3 || unit.VsBest == nil || unit.VsBest.Rounds != 3 {
		t.Errorf("unit: rank %d, rounds %d, vs best %+v", unit.Rank, unit.Rounds, unit.VsBest)
	}
	if r := unit.VsBest.Ratio; r < 0.45 || r > 0.55 {
		t.Errorf("unit vs best %.3f, want about 0.5", r)
	}
	failed := byLabel(t, sum.Configs, "apache-event-fpm default")
	if failed.Rank != 0 || failed.Failed == "" || failed.VsBest != nil {
		t.Errorf("failed row %+v", failed)
	}
	tvd := sum.TunedVsDefault[knob.NginxFPM]
	if tvd == nil || tvd.Rounds != 4 || tvd.Ratio < 1.25 || tvd.Ratio > 1.45 || !Faster(tvd) {
		t.Errorf("tuned vs default %+v", tvd)
	}
	if _, ok := sum.TunedVsDefault[knob.UnitPHP]; ok {
		t.Errorf("unit has no tuned configuration but a tuned vs default ratio")
	}
	// Medians of the figures; per-worker CPU of the median round.
	if !near(best.CPUPHPMs, 9) || !near(best.CPUWebMs, 1) || best.Workers != 4 || best.WorkerPSSB != 20<<20 || !near(best.Imbalance, 0.25) {
		t.Errorf("best figures: PHP %v web %v workers %d PSS %d imbalance %v", best.CPUPHPMs, best.CPUWebMs, best.Workers, best.WorkerPSSB, best.Imbalance)
	}
	if want := 0.010 * 202.5; best.StackCores < want*0.98 || best.StackCores > want*1.02 {
		t.Errorf("stack cores %v, want about %v", best.StackCores, want)
	}
	if len(best.WorkerCPUPct) != 4 {
		t.Errorf("worker CPU %v", best.WorkerCPUPct)
	}
}

func TestSummarizeOneRoundAndNothing(t *testing.T) {
	r := run{p99: 10, workerCPU: []float64{10}, cpu: fpmCPU(0, 0.001, 0)}
	sum := Summarize([]Measured{
		{Label: "a", Role: results.RoleTuned, Server: "x", Runs: rounds(r, 100)},
		{Label: "b", Role: results.RoleDefault, Server: "x", Runs: rounds(r, 50)},
	})
	b := byLabel(t, sum.Configs, "b")
	// One round: a ratio, no interval (never +Inf in JSON), undecided.
	if b.VsBest == nil || b.VsBest.High != 0 || b.VsBest.Low != 0 || Slower(b.VsBest) {
		t.Errorf("one round: %+v", b.VsBest)
	}
	if b.Throughput.High != 0 || b.Throughput.Value != 50 {
		t.Errorf("one round's throughput %+v", b.Throughput)
	}
	if sum := Summarize([]Measured{{Label: "a", Failed: "did not start", Runs: []*results.Bench{nil}}}); sum.Best != "" || sum.Configs[0].Rank != 0 {
		t.Errorf("nothing measured: %+v", sum)
	}
}

func TestSummarizeWarningsDeduplicated(t *testing.T) {
	var rs []*results.Bench
	for i := range 3 {
		r := run{rps: 100, p99: 10, workerCPU: []float64{10}, warnings: []string{"same every round"}}
		for j := range 3 {
			r.warnings = append(r.warnings, strings.Repeat("x", i*3+j+1))
		}
		rs = append(rs, r.bench())
	}
	c := Summarize([]Measured{{Label: "a", Runs: rs}}).Configs[0]
	if len(c.Warnings) != maxWarnings+1 || c.Warnings[0] != "same every round (3 of 3 rounds)" || c.Warnings[1] != "x (1 of 3 rounds)" || !strings.Contains(c.Warnings[maxWarnings], "4 more kinds") {
		t.Errorf("warnings %q", c.Warnings)
	}
	// The observer's finding with other counts each round is one warning.
	var again []*results.Bench
	for i := range 2 {
		again = append(again, run{rps: 1, warnings: []string{strings.Replace("pool www ran with every worker busy (N of 5) in 1 samples", "N", string(rune('3'+i)), 1)}}.bench())
	}
	c = Summarize([]Measured{{Label: "b", Runs: again}}).Configs[0]
	if len(c.Warnings) != 1 || c.Warnings[0] != "pool www ran with every worker busy (3 of 5) in 1 samples (2 of 2 rounds)" {
		t.Errorf("warnings %q", c.Warnings)
	}
}

func TestDiagnose(t *testing.T) {
	// The best: 10 fpm workers sharing two cores evenly.
	best := results.ServerConfig{Label: "nginx-fpm static 10", Server: knob.NginxFPM, Rounds: 4, Workers: 10, Imbalance: 0.11,
		StackCores: 1.9, CPUStackMs: 9.5, CPUWebMs: 1, CPUPHPMs: 8.5}
	slower := &results.Ratio{Ratio: 0.54, Low: 0.5, High: 0.58, Confidence: 0.95, Rounds: 4}
	cases := []struct {
		name  string
		c     results.ServerConfig
		cause string
		want  []string
	}{
		{"seed 002: one of Unit's processes busy at a time", results.ServerConfig{Label: "unit 20", Server: knob.UnitPHP, Rounds: 4, VsBest: slower,
			Workers: 20, Imbalance: 0.62, StackCores: 1.0, CPUStackMs: 9.3, QueuedRounds: 4, MaxQueued: 8, AllBusyShare: 0.1},
			CauseImbalance, []string{"unit 20 lost against nginx-fpm static 10", "busiest of its 20 workers did 62%", "even share is 5%", "1.00 cores against 1.90", "requests waited"}},
		{"a pool too small: requests wait while CPU idles", results.ServerConfig{Label: "nginx-fpm default", Server: knob.NginxFPM, Rounds: 4, VsBest: slower,
			Workers: 5, Imbalance: 0.21, StackCores: 0.9, CPUStackMs: 9.5, QueuedRounds: 4, MaxQueued: 45, AllBusyShare: 0.95},
			CauseQueueing, []string{"requests queued while CPU stood idle", "in 4 of 4 rounds (up to 45 at once)", "95% of the samples", "its 5 PHP workers"}},
		{"both busy, more CPU per request", results.ServerConfig{Label: "apache-prefork-modphp tuned", Server: knob.ApachePreforkModPHP, Rounds: 4, VsBest: slower,
			Workers: 3, Imbalance: 0.34, StackCores: 1.85, CPUStackMs: 17, CPUWebMs: 0.1, CPUPHPMs: 16.9, QueuedRounds: 4, AllBusyShare: 0.9},
			CauseCPU, []string{"each request cost more CPU: 17.00 ms", "against 9.50 ms", "mostly in PHP (with mod_php"}},
		{"nothing the figures explain", results.ServerConfig{Label: "x", Server: knob.NginxFPM, Rounds: 4, VsBest: slower,
			Workers: 4, Imbalance: 0.26, StackCores: 1.0, CPUStackMs: 9.6, QueuedRounds: 1},
			CauseUndetermined, []string{"no single cause", "1.00 cores against 1.90", "queued in 1 of 4 rounds"}},
		{"one worker is not imbalance", results.ServerConfig{Label: "one", Server: knob.NginxFPM, Rounds: 4, VsBest: slower,
			Workers: 1, Imbalance: 1, StackCores: 0.95, CPUStackMs: 9.5, QueuedRounds: 4, AllBusyShare: 1},
			CauseQueueing, []string{"its 1 PHP worker is too few"}},
		{"a 1-slot Apache cannot answer its status page: nothing said of it", results.ServerConfig{Label: "prefork-1", Server: knob.ApachePreforkModPHP, Rounds: 3, VsBest: slower,
			Workers: 1, Imbalance: 1, StackCores: 0.8, CPUStackMs: 9.5, QueuedRounds: 3, MaxQueued: 8},
			CauseQueueing, []string{"in 3 of 3 rounds (up to 8 at once), and its stack used 0.80 cores"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := Diagnose([]results.ServerConfig{best, c.c}, best.Label)
			if len(ds) != 1 {
				t.Fatalf("%d diagnoses", len(ds))
			}
			d := ds[0]
			if d.Cause != c.cause || d.Label != c.c.Label {
				t.Errorf("cause %q for %q, want %q\n%s", d.Cause, d.Label, c.cause, d.Text)
			}
			for _, w := range c.want {
				if !strings.Contains(d.Text, w) {
					t.Errorf("the diagnosis lacks %q:\n%s", w, d.Text)
				}
			}
		})
	}
	// Not significantly slower (its interval includes 1), or no interval:
	// no diagnosis, whatever its figures.
	for _, vs := range []*results.Ratio{{Ratio: 0.9, Low: 0.7, High: 1.1, Rounds: 4}, {Ratio: 0.5, Rounds: 1}, nil} {
		c := results.ServerConfig{Label: "close", Rounds: 4, VsBest: vs, Workers: 20, Imbalance: 0.9, StackCores: 0.5}
		if ds := Diagnose([]results.ServerConfig{best, c}, best.Label); len(ds) != 0 {
			t.Errorf("vs best %+v: diagnosed %+v", vs, ds)
		}
	}
	// Nothing served: no ratio, but a diagnosis all the same.
	best.Throughput.Value = 200
	none := results.ServerConfig{Label: "prefork-1", Rounds: 3, Workers: 1, QueuedRounds: 3, MaxQueued: 13}
	if ds := Diagnose([]results.ServerConfig{best, none}, best.Label); len(ds) != 1 || ds[0].Cause != CauseQueueing || !strings.Contains(ds[0].Text, "served no successful response in its 3 rounds") || !strings.Contains(ds[0].Text, "its 1 PHP worker did not") {
		t.Errorf("nothing served: %+v", ds)
	}
	if ds := Diagnose([]results.ServerConfig{best}, "nobody"); ds != nil {
		t.Errorf("without the best: %+v", ds)
	}
}

// TestSummarizeDiagnoseSeed002 runs the figures of seed 002's shape
// through the whole pure chain: Unit with 20 processes, one busy at a
// time, against php-fpm static 10 sharing the CPU.
func TestSummarizeDiagnoseSeed002(t *testing.T) {
	fpm := run{p99: 90, workerCPU: []float64{19, 20, 21, 19, 18, 20, 21, 19, 20, 21}, cpu: fpmCPU(0.0008, 0.0092, 0), workerPSS: 14 << 20}
	unitWorkers := append([]float64{97}, make([]float64, 19)...)
	for i := 1; i < 20; i++ {
		unitWorkers[i] = 0.5
	}
	unit := run{p99: 180, workerCPU: unitWorkers, cpu: map[string]float64{observe.GroupUnitRouter: 0.0009, observe.GroupUnitMain: 0, observe.GroupUnitWorkers: 0.0091}, workerPSS: 30 << 20}
	ms := []Measured{
		{Label: "fpm-static-10", Server: knob.NginxFPM, Role: results.RoleAdded, Runs: rounds(fpm, 201, 198, 205)},
		{Label: "unit-20", Server: knob.UnitPHP, Role: results.RoleAdded, Runs: rounds(unit, 108, 104, 110)},
	}
	sum := Summarize(ms)
	ds := Diagnose(sum.Configs, sum.Best)
	if sum.Best != "fpm-static-10" || len(ds) != 1 || ds[0].Cause != CauseImbalance {
		t.Fatalf("best %q, diagnoses %+v", sum.Best, ds)
	}
	u := byLabel(t, sum.Configs, "unit-20")
	if u.Workers != 20 || u.Imbalance < 0.85 || u.WorkerCPUPct[0] != 97 {
		t.Errorf("unit: workers %d, imbalance %v, busiest %v", u.Workers, u.Imbalance, u.WorkerCPUPct)
	}
}
