package tune

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/search/sim"
)

// TestCapacityObjective: a capacity tune of the io page on the simulated
// stack within a 15-minute budget: the search sizes the pool, then the
// start and the recommendation each get a capacity search after the
// holdout, and the verdict carries their ratio (the simulated io page: ~5
// workers' worth against a pool sized to the knee, about 8×).
func TestCapacityObjective(t *testing.T) {
	f := newFixture(t, sim.IOWait(), 21, "")
	budget := 15 * time.Minute
	tn, err := f.tuner.Run(context.Background(), Options{ID: "cap", App: "io", Workload: "front", Conns: 50, Cores: 2,
		Objective: ObjectiveCapacity, SLO: "p99<1s", TimeBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	c := tn.Capacity
	if c == nil || c.Start == nil || c.Recommended == nil {
		t.Fatalf("capacity verdict: %+v", c)
	}
	if c.SLO != "p99<1s" || c.Start.Label != "start" || c.Recommended.Label != "recommended" {
		t.Errorf("verdict labels: %+v", c)
	}
	for _, cc := range []struct {
		name string
		lo   float64
		hi   float64
		got  float64
	}{{"start", 150, 300, c.Start.CapacityRPS}, {"recommended", 1300, 2300, c.Recommended.CapacityRPS}} {
		if cc.got < cc.lo || cc.got > cc.hi {
			t.Errorf("%s capacity %g rps, want %g..%g", cc.name, cc.got, cc.lo, cc.hi)
		}
	}
	if c.Ratio < 5 || c.RatioLow > c.Ratio || (c.RatioHigh > 0 && c.RatioHigh < c.Ratio) {
		t.Errorf("ratio %.2f [%.2f, %.2f]", c.Ratio, c.RatioLow, c.RatioHigh)
	}
	// Phases in order: the capacity steps come last, no curve trials.
	seenCap := false
	steps := 0
	for _, tr := range tn.Trials {
		switch {
		case tr.Phase == PhaseCapacity:
			seenCap = true
			steps++
			if tr.Bench == nil || tr.Bench.Model != "open" {
				t.Errorf("capacity trial %d without an open-model bench", tr.N)
			}
			if (tr.Status == StatusViolates) == (tr.FailReason == "") {
				t.Errorf("capacity trial %d: status %s, reason %q", tr.N, tr.Status, tr.FailReason)
			}
		case tr.Phase == PhaseCurve:
			t.Errorf("trial %d: a capacity tune has no closed-model curve", tr.N)
		case seenCap:
			t.Errorf("trial %d (%s) after the capacity steps", tr.N, tr.Phase)
		}
	}
	if steps != len(c.Start.Steps)+len(c.Recommended.Steps) {
		t.Errorf("%d capacity trials for %d+%d steps", steps, len(c.Start.Steps), len(c.Recommended.Steps))
	}
	if wall := time.Duration(tn.WallS * float64(time.Second)); wall > budget+time.Minute {
		t.Errorf("took %s with a budget of %s", wall, budget)
	}
	if !strings.Contains(tn.Files["recommended.knobs"], "capacity at p99<1s") {
		t.Errorf("knob file comment:\n%s", tn.Files["recommended.knobs"])
	}
	if !strings.Contains(tn.Files["evidence.txt"], "kept for the two capacity searches") {
		t.Errorf("the evidence does not say how the budget was split:\n%s", tn.Files["evidence.txt"])
	}
	t.Logf("capacity tune: %d trials (%d capacity steps), start %g [%g], recommended %g [%g], ratio %.2f, wall %.0fs",
		len(tn.Trials), steps, c.Start.CapacityRPS, c.Start.FirstFailRPS, c.Recommended.CapacityRPS, c.Recommended.FirstFailRPS, c.Ratio, tn.WallS)
}

// TestCapacityObjectiveResume: a capacity tune interrupted in its capacity
// phase resumes without measuring the stored steps again (the search asks
// for the same steps when told the same results).
func TestCapacityObjectiveResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	f := newFixture(t, sim.IOWait(), 22, path)
	ctx, cancel := context.WithCancel(context.Background())
	capSteps := 0
	f.tuner.Progress = func(p Progress) {
		if p.Phase == PhaseCapacity {
			if capSteps++; capSteps == 3 {
				cancel()
			}
		}
	}
	opt := Options{ID: "capr", Conns: 50, Cores: 2, Objective: ObjectiveCapacity, SLO: "p99<1s", Challenges: []string{"pm=dynamic"}}
	if _, err := f.tuner.Run(ctx, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("want an interruption, got %v", err)
	}
	stored, _ := f.db.Trials(context.Background(), "capr")
	g := newFixture(t, sim.IOWait(), 23, path)
	tn, err := g.tuner.Resume(context.Background(), "capr")
	if err != nil {
		t.Fatal(err)
	}
	if g.stack.Measures != len(tn.Trials)-len(stored) {
		t.Errorf("resumed run measured %d, want %d (total %d, %d stored)", g.stack.Measures, len(tn.Trials)-len(stored), len(tn.Trials), len(stored))
	}
	if tn.Capacity == nil || tn.Capacity.Start == nil || tn.Capacity.Recommended == nil || tn.Capacity.Ratio < 4 {
		t.Errorf("resumed capacity verdict: %+v", tn.Capacity)
	}
}

func TestCapacityObjectiveOptions(t *testing.T) {
	for _, o := range []Options{
		{Objective: ObjectiveCapacity},
		{Objective: ObjectiveCapacity, SLO: "p99<500"},
		{Objective: "rate"},
	} {
		if err := o.defaults(time.Now()); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	o := Options{Objective: ObjectiveCapacity, SLO: "p95<1s,errors<0.1%"}
	if err := o.defaults(time.Now()); err != nil || !o.NoCurve || o.CurveConns != nil {
		t.Errorf("capacity options: %v %+v", err, o)
	}
	if o.searchObjective() != "throughput" {
		t.Errorf("a capacity tune searches on %q", o.searchObjective())
	}
}
