package tune

import (
	"context"
	"fmt"

	"errors"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"strings"
	"testing"
	"time"
)

func TestPlanBudget(t *testing.T) {
	const per = 18 * time.Second // 10 s + 3 s warm-up + the restart
	tests := []struct {
		name                  string
		budget                time.Duration
		drift, holdout        int
		wantDrift, wantSearch int
		wantHoldout           int
		refusedWithMinimumOf  time.Duration
	}{
		{"no budget: as asked", 0, 2, 4, 2, -1, 4, 0},
		{"a long budget keeps the defaults", 30 * time.Minute, 2, 4, 2, 90, 4, 0},
		{"a budget for 20 trials keeps the holdout", 6 * time.Minute, 2, 4, 2, 10, 4, 0},
		{"12 trials: the holdout shrinks first", 12 * per, 2, 4, 2, 4, 3, 0},
		{"the 2-minute first run: one drift, one search, two rounds", 2 * time.Minute, 2, 4, 1, 1, 2, 0},
		{"eight trials: the search gets two", 8 * per, 2, 4, 2, 2, 2, 0},
		{"too small: the minimum named", 90 * time.Second, 2, 4, 0, 0, 0, 6 * per},
		{"asked rounds above the budget's", 10 * per, 3, 10, 3, 3, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanBudget(tc.budget, per, tc.drift, tc.holdout)
			if tc.refusedWithMinimumOf > 0 {
				var be *BudgetError
				if !errors.As(err, &be) || be.Min != tc.refusedWithMinimumOf || !strings.Contains(err.Error(), "--time-budget "+tc.refusedWithMinimumOf.String()) {
					t.Fatalf("%+v, %v; want a refusal naming %s", p, err, tc.refusedWithMinimumOf)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Drift != tc.wantDrift || p.Search != tc.wantSearch || p.HoldoutRounds != tc.wantHoldout {
				t.Fatalf("plan %+v (%s), want %d drift, %d search, %d rounds", p, p, tc.wantDrift, tc.wantSearch, tc.wantHoldout)
			}
			if tc.budget > 0 && time.Duration(p.Trials())*per > tc.budget {
				t.Fatalf("plan %s takes %d trials, more than the budget affords", p, p.Trials())
			}
		})
	}
}

func TestBudgetPlanDefaults(t *testing.T) {
	p, err := Options{TimeBudget: 2 * time.Minute}.BudgetPlan()
	if err != nil || p.PerTrial != 15*time.Second || p.Search < 1 {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := (Options{TimeBudget: time.Minute}).BudgetPlan(); err == nil {
		t.Fatal("a 1-minute budget for 15 s trials was accepted")
	}
	if p, err := (Options{TimeBudget: time.Minute, Duration: 2 * time.Second, Warmup: -1}).BudgetPlan(); err != nil || p.Search < 1 {
		t.Fatalf("short trials in a minute: %+v %v", p, err)
	}
}

// TestShortBudgetSearches: the 2-minute first run measures at least one
// search trial, says what ran, and a budget below the least tune is
// refused before any trial.
func TestShortBudgetSearches(t *testing.T) {
	f := newFixture(t, sim.CPUBound(), 14, "")
	tn, err := f.tuner.Run(context.Background(), Options{ID: "short", Conns: 4, Cores: 2, TimeBudget: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]int{}
	for _, tr := range tn.Trials {
		phases[tr.Phase]++
	}
	plan, err := Options{TimeBudget: 2 * time.Minute}.BudgetPlan()
	if err != nil {
		t.Fatal(err)
	}
	search := len(tn.Trials) - phases[PhaseDrift] - phases[PhaseHoldout] - phases[PhaseCurve]
	if search < 1 || phases[PhaseDrift] != plan.Drift || phases[PhaseHoldout] < 2*plan.HoldoutRounds {
		t.Fatalf("trials by phase %v: want the plan's %s", phases, plan)
	}
	if ev := tn.Files["evidence.txt"]; !strings.Contains(ev, fmt.Sprintf("trials run: %d drift, %d search, %d holdout", plan.Drift, search, phases[PhaseHoldout])) ||
		!strings.Contains(ev, "planned "+plan.String()) {
		t.Errorf("evidence does not say what ran:\n%s", ev)
	}
	for _, w := range tn.Warnings {
		if strings.Contains(w, "ran out after") && !strings.Contains(w, fmt.Sprintf("after %d search", search)) {
			t.Errorf("warning miscounts: %s", w)
		}
	}
	g := newFixture(t, sim.CPUBound(), 14, "")
	var be *BudgetError
	if _, err := g.tuner.Run(context.Background(), Options{ID: "tiny", Conns: 4, Cores: 2, TimeBudget: time.Minute}); !errors.As(err, &be) {
		t.Fatalf("a 1-minute budget: %v", err)
	}
}
