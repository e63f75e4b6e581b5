package tune

// The phases of a tune in the order it runs them: drift (the start,
// measured first), search (the strategy's candidates), then the holdout
// (holdout.go) and the curve. session.tune strings them together.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// drift measures the start configuration DriftRuns times before anything
// else: its throughputs (for the drift check against the holdout), the
// first usable run (the strategy's baseline) and every run (the baselines'
// inputs).
func (s *session) drift(ctx context.Context, start knob.Config) (before []float64, baseline *results.Bench, benches []*results.Bench, err error) {
	o := s.opt
	for i := 0; i < o.DriftRuns; i++ {
		tr, err := s.trial(ctx, search.Candidate{Phase: PhaseDrift, Label: fmt.Sprintf("start %d/%d", i+1, o.DriftRuns), Config: start, Conns: o.Conns})
		if err != nil {
			return nil, nil, nil, err
		}
		if tr.Bench != nil {
			benches = append(benches, tr.Bench)
		}
		if tr.Bench != nil && tr.Bench.ThroughputRPS > 0 {
			before = append(before, tr.Bench.ThroughputRPS)
			if baseline == nil {
				baseline = tr.Bench
			}
		}
	}
	if baseline == nil {
		s.warn("the start configuration did not run; there is nothing to compare with")
	}
	return before, baseline, benches, nil
}

// search asks the strategy for candidates and measures them until it has
// none left or the time budget must be kept for what comes after
// (reserve trials, the baselines and the curve); stoppedEarly says the
// budget cut it short.
func (s *session) search(ctx context.Context, strat search.Strategy, reserve int) (stoppedEarly bool, err error) {
	searched := 0
	for {
		batch := strat.Ask()
		if len(batch) == 0 {
			return false, nil
		}
		for _, c := range batch {
			// The first search trial runs whatever the budget says: the
			// plan (PlanBudget) made room for it, and a tune without one
			// would compare the start with itself.
			if _, ok := s.stored[len(s.trials)+1]; !ok && searched > 0 && !s.budgetLeftFor(1+reserve+s.baselineReserve()+s.curveReserve()) {
				return true, nil
			}
			searched++
			tr, err := s.trial(ctx, c)
			if err != nil {
				return false, err
			}
			strat.Tell(c, outcome(tr))
		}
	}
}

// curve measures start and recommended at the other concurrencies, one
// trial each, twice the tuned concurrency first (how each behaves past
// it), a pair per level so that a curve the time budget cuts short still
// compares like with like. It gets only what the budget left.
func (s *session) curve(ctx context.Context, start, recCfg knob.Config) error {
	o := s.opt
	curve := []knob.Config{start}
	if !maps.Equal(start, recCfg) {
		curve = append(curve, recCfg)
	}
	levels := slices.Clone(o.CurveConns)
	sort.Sort(sort.Reverse(sort.IntSlice(levels)))
	cut := 0
curveLoop:
	for j, n := range levels {
		for i, cfg := range curve {
			if _, ok := s.stored[len(s.trials)+1]; !ok && !s.budgetLeftFor(1) {
				cut = (len(levels)-j)*len(curve) - i
				break curveLoop
			}
			label := []string{"start", "recommended"}[i]
			if _, err := s.trial(ctx, search.Candidate{Phase: PhaseCurve, Label: fmt.Sprintf("%s c=%d", label, n), Config: cfg, Conns: n}); err != nil {
				return err
			}
		}
	}
	if cut > 0 {
		s.warn("the time budget left out %d of the %d curve trials (start and recommended at other concurrencies than %d)", cut, len(levels)*len(curve), o.Conns)
	}
	return nil
}

// phaseSearch counts the strategy's trials, whatever phases it names them
// (pool, knee, race...): every trial that is not drift, holdout or curve.
const phaseSearch = "search"

// phaseTrials counts the trials run so far by phase: drift, search (the
// strategy's, see phaseSearch), holdout and curve.
func (s *session) phaseTrials() map[string]int {
	n := map[string]int{}
	for _, tr := range s.trials {
		switch tr.Phase {
		case PhaseDrift, PhaseHoldout, PhaseCurve:
			n[tr.Phase]++
		default:
			n[phaseSearch]++
		}
	}
	return n
}

// phaseSummary says how many trials of each phase ran.
func (s *session) phaseSummary() string {
	n := s.phaseTrials()
	return fmt.Sprintf("%d drift, %d search, %d holdout, %d curve", n[PhaseDrift], n[phaseSearch], n[PhaseHoldout], n[PhaseCurve])
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
