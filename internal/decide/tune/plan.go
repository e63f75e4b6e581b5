package tune

import (
	"fmt"
	"time"
)

// Planning a tune to its time budget: before the first trial the tune
// knows only its trials' duration and warm-up, so it plans with an
// estimate of a trial's wall time, and the phases it cannot afford shrink
// before it starts rather than the search being starved once it runs (a
// short first run that measured the start against itself and called it a
// tune).

// trialOverhead is what a trial costs besides its warm-up and measured
// part: restarting the stack with the candidate, checking its page and
// waiting for the last answers. resetOverhead is added when the workload
// writes and the database is restored before every trial.
const (
	trialOverhead = 2 * time.Second
	resetOverhead = 5 * time.Second
)

// Least phases a tune runs: the start measured once, one search trial, and
// a holdout of two rounds (a ratio needs pairs).
const (
	minDriftRuns     = 1
	minSearchTrials  = 1
	minHoldoutRounds = 2
)

// Plan is how many trials of each phase a tune plans.
type Plan struct {
	// Drift is the start's measurements before the search; HoldoutRounds
	// the rounds of start against recommended after it (two trials each).
	Drift, HoldoutRounds int
	// Search is the trials the budget leaves the search at least; -1
	// without a time budget (the strategy decides).
	Search int
	// PerTrial is the estimated wall time of a trial.
	PerTrial time.Duration
}

// Trials is the plan's total, the search's share included (without a time
// budget, the drift and holdout trials only).
func (p Plan) Trials() int { return p.Drift + max(p.Search, 0) + 2*p.HoldoutRounds }

// String says what the plan runs, for notes and messages.
func (p Plan) String() string {
	search := "a search as long as its strategy asks"
	if p.Search >= 0 {
		search = fmt.Sprintf("at least %d search", p.Search)
	}
	return fmt.Sprintf("%d drift, %s and %d holdout trials (%d rounds)", p.Drift, search, 2*p.HoldoutRounds, p.HoldoutRounds)
}

// BudgetError is a time budget too small for the least tune.
type BudgetError struct {
	Budget, Min, PerTrial time.Duration
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("--time-budget %s is too small to search: the least tune (%d drift, %d search and %d holdout trials) takes %d trials of about %s each, %s; "+
		"give --time-budget %s or more, or shorter trials (--trial-duration, --trial-warmup)",
		e.Budget, minDriftRuns, minSearchTrials, 2*minHoldoutRounds, minTrials(), e.PerTrial.Round(time.Second), e.Min, e.Min)
}

func minTrials() int { return minDriftRuns + minSearchTrials + 2*minHoldoutRounds }

// EstimatePerTrial is a trial's wall time before any was measured: its
// warm-up and measured part, and the restart around them.
func EstimatePerTrial(duration, warmup time.Duration, writes bool) time.Duration {
	d := duration + warmup + trialOverhead
	if writes {
		d += resetOverhead
	}
	return d
}

// PlanBudget fits the drift and holdout to a time budget so that the
// search keeps at least a quarter of the trials the budget affords (and
// never fewer than one): the holdout's rounds shrink first (down to 2), then the
// drift runs (down to 1). A budget below the least tune is a BudgetError
// naming the minimum. Without a budget (0) the plan is the one asked for.
func PlanBudget(budget, perTrial time.Duration, driftRuns, holdoutRounds int) (Plan, error) {
	p := Plan{Drift: driftRuns, HoldoutRounds: holdoutRounds, Search: -1, PerTrial: perTrial}
	if budget <= 0 || perTrial <= 0 {
		return p, nil
	}
	afford := int(budget / perTrial)
	if afford < minTrials() {
		min := time.Duration(minTrials()) * perTrial
		return p, &BudgetError{Budget: budget, Min: min.Round(time.Second), PerTrial: perTrial}
	}
	want := max(minSearchTrials, afford/4)
	search := func() int { return afford - p.Drift - 2*p.HoldoutRounds }
	for search() < want && p.HoldoutRounds > minHoldoutRounds {
		p.HoldoutRounds--
	}
	for search() < want && p.Drift > minDriftRuns {
		p.Drift--
	}
	p.Search = search()
	return p, nil
}

// BudgetPlan is PlanBudget for a tune's options as given (the CLI calls
// it to refuse a budget too small before it starts a lab): their defaults
// filled in as Run fills them.
func (o Options) BudgetPlan() (Plan, error) {
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	switch {
	case o.Warmup < 0: // none
		o.Warmup = 0
	case o.Warmup == 0:
		o.Warmup = 3 * time.Second
	}
	if o.DriftRuns <= 0 {
		o.DriftRuns = 2
	}
	if o.HoldoutRounds <= 0 {
		o.HoldoutRounds = 4
	}
	return o.plan()
}

// plan is PlanBudget for options whose defaults are filled in (a Warmup of
// 0 is none).
func (o Options) plan() (Plan, error) {
	return PlanBudget(o.TimeBudget, EstimatePerTrial(o.Duration, o.Warmup, o.ResetBetween), o.DriftRuns, max(o.HoldoutRounds, minHoldoutRounds))
}
