// Package tune runs a tune: it drives a search strategy against a stack,
// records every trial in the results database as it finishes, resumes an
// interrupted run, respects a time budget, and closes with the evidence a
// recommendation needs: a drift check, a holdout (start against recommended
// re-measured interleaved), each changed knob's effect with a confidence
// interval and the memory prediction checked against what was measured.
//
// The outside world is behind Stack; package lab (with the generator and
// the observer) implements it for real stacks, package search/sim for tests.
package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/unidiff"
	"github.com/phptune/phptune/internal/decide/interleave"
	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/traffic/load"
)

// Stack is the stack being tuned: the same as an interleaved comparison
// runs (interleave.Stack), so that one lab serves both.
type Stack = interleave.Stack

// Phases the orchestrator adds to the strategy's.
const (
	PhaseDrift   = "drift"
	PhaseHoldout = "holdout"
	// PhaseCurve measures the start and the recommended configuration at
	// other concurrencies than the tuned one, after the holdout: the
	// throughput and p99 curves the report draws.
	PhaseCurve = "curve"
)

// Trial statuses.
const (
	StatusOK       = "ok"
	StatusFailed   = "failed"
	StatusViolates = "violates"
)

// Tuner runs tunes against one stack, recording into one database.
type Tuner struct {
	Stack       Stack
	Store       *store.DB
	Progress    func(Progress)       // optional
	Now         func() time.Time     // optional; tests pass a fake clock
	Environment *results.Environment // optional, copied into the result
	// RenderFiles, when set, adds files to the result for the recommended
	// configuration (the components' own syntax); optional.
	RenderFiles func(start, rec knob.Config) map[string]string
}

func (t *Tuner) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Run starts a new tune.
func (t *Tuner) Run(ctx context.Context, opt Options) (*results.Tune, error) {
	if err := opt.defaults(t.now()); err != nil {
		return nil, err
	}
	// The phases fitted to the time budget before anything runs; stored
	// with the options, so a resumed run keeps them.
	plan, err := opt.plan()
	if err != nil {
		return nil, err
	}
	opt.DriftRuns, opt.HoldoutRounds = plan.Drift, plan.HoldoutRounds
	opt.HoldoutMaxRounds = max(opt.HoldoutMaxRounds, opt.HoldoutRounds)
	raw, err := json.Marshal(opt)
	if err != nil {
		return nil, err
	}
	if err := t.Store.CreateRun(ctx, store.Run{ID: opt.ID, Command: opt.Command, App: opt.App, Workload: opt.Workload, Options: raw}); err != nil {
		return nil, err
	}
	return t.run(ctx, opt, nil)
}

// Resume continues an interrupted tune from its stored trials: the
// strategy is told their outcomes again (it is deterministic, so it asks
// for the same candidates) and only the missing trials are measured.
func (t *Tuner) Resume(ctx context.Context, id string) (*results.Tune, error) {
	r, err := t.Store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Status == store.StatusDone && r.Result != nil {
		return r.Result, nil
	}
	var opt Options
	if err := json.Unmarshal(r.Options, &opt); err != nil {
		return nil, fmt.Errorf("run %s: stored options: %w", id, err)
	}
	if err := opt.defaults(r.CreatedAt); err != nil {
		return nil, err
	}
	stored, err := t.Store.Trials(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := t.Store.SetStatus(ctx, id, store.StatusRunning); err != nil {
		return nil, err
	}
	return t.run(ctx, opt, stored)
}

// session is the state of one tune while it runs.
type session struct {
	t        *Tuner
	opt      Options
	stored   map[int]store.Trial
	trials   []results.Trial
	applied  knob.Config // what the stack runs now; nil unknown
	started  time.Time
	spent    time.Duration // measured time of stored trials (earlier sessions)
	perTrial time.Duration // running mean of a trial's wall time
	measured int
	total    int
	// baselines is how many baselines the holdout will measure if the
	// time budget allows (known after the drift trials).
	baselines int
	best      float64
	bestLbl   string
	// capReserve is the time kept for the capacity searches of a
	// capacity tune (planCapacityReserve).
	capReserve time.Duration
	warnings   []string
	notes      []string // for the evidence: what the tune did and why
}

func (t *Tuner) run(ctx context.Context, opt Options, stored []store.Trial) (*results.Tune, error) {
	s := &session{t: t, opt: opt, stored: map[int]store.Trial{}, started: t.now()}
	for _, st := range stored {
		s.stored[st.N] = st
		s.spent += st.FinishedAt.Sub(st.StartedAt)
	}
	tune, err := s.tune(ctx)
	if err != nil {
		status := store.StatusFailed
		if ctx.Err() != nil {
			status = store.StatusInterrupted
			err = &InterruptedError{RunID: opt.ID, Trials: len(s.trials), Cause: context.Cause(ctx)}
		}
		// The run's status is best effort: ctx may be the cancelled one.
		_ = t.Store.SetStatus(context.WithoutCancel(ctx), opt.ID, status)
		return nil, err
	}
	if err := t.Store.Finish(ctx, opt.ID, store.StatusDone, tune); err != nil {
		return nil, err
	}
	return tune, nil
}

// strategy builds the search strategy and estimates its trials. reserve
// is the trials kept for after the search (the holdout's).
func (s *session) strategy(baseline *results.Bench, reserve int) (search.Strategy, int, error) {
	o := s.opt
	so := search.Options{Start: o.Start, Conns: o.Conns, Cores: o.Cores, Limits: o.Limits, Objective: o.searchObjective(),
		CategoricalTrials: o.CategoricalTrials, SearchTrials: o.SearchTrials, Baseline: baseline, Writes: o.ResetBetween}
	if o.Challenges != nil {
		cs, err := Challenges(o.Challenges)
		if err != nil {
			return nil, 0, err
		}
		so.Challenges = cs
	}
	if o.Strategy == "grid" {
		g, err := search.NewGrid(search.GridOptions{Options: so})
		if err != nil {
			return nil, 0, err
		}
		return g, g.Size(), nil
	}
	est := 8 + o.CategoricalTrials
	if o.CategoricalTrials == 0 {
		est = 8 + 14
	}
	if o.SearchTrials > 0 {
		est = min(est, o.SearchTrials)
	} else {
		// Asked as the race starts, when the pool's trials are done; the
		// grant is stored so that a resumed run races the same rounds.
		so.Spare = func(planned int) int {
			extra := 0
			if o.RaceExtraTrials != nil {
				extra = *o.RaceExtraTrials
			} else {
				// The holdout at twice its planned rounds: an undecided
				// holdout's first extra rounds come before the race's;
				// beyond them it gets what the race leaves
				// (session.holdoutRounds).
				holdout := max(reserve, 2*min(o.HoldoutMaxRounds, 2*o.HoldoutRounds))
				extra = s.spareTrials(planned + holdout + s.baselineReserve() + s.curveReserve())
				if err := s.t.Store.SetOption(context.Background(), o.ID, "race_extra_trials", extra); err != nil {
					s.note("the race gets no spare trials: storing the grant failed (%v)", err)
					extra = 0
				}
				s.opt.RaceExtraTrials = &extra
			}
			s.total += extra
			if extra > 0 {
				s.note("the race of the challenges planned %d trials and may spend %d more that the time budget spares: more rounds for the undecided ones, each look at a stricter level", planned, extra)
			}
			return extra
		}
	}
	d, err := search.NewDomain(so)
	if err != nil {
		return nil, 0, err
	}
	return d, est, nil
}

func (s *session) tune(ctx context.Context) (*results.Tune, error) {
	o := s.opt
	start := o.Start.Clone()
	// Trials kept for after the search: the holdout, and the curve when
	// the budget is large enough (curveReserve).
	reserve := 2 * o.HoldoutRounds
	s.total = o.DriftRuns + 24 + reserve + 2*len(o.CurveConns)

	// Drift, part one: the start configuration before anything else. The
	// first usable run doubles as the strategy's baseline.
	before, baseline, driftBenches, err := s.drift(ctx, start)
	if err != nil {
		return nil, err
	}
	s.planCapacityReserve(before)

	// The rules of thumb, from the drift trials' measurements: what they
	// would set, and which of them the holdout is to measure.
	baselines, baselineCfgs := planBaselines(baselineInputsFrom(o, driftBenches), o.Baselines)
	for _, b := range baselines {
		if b.NotMeasured == "" {
			s.baselines++
		}
	}

	strat, est, err := s.strategy(baseline, reserve)
	if err != nil {
		return nil, err
	}
	defer strat.Close()
	s.planTotal(est, reserve)
	if plan, err := o.plan(); err == nil && plan.Search >= 0 {
		s.note("the time budget of %s planned %s, at about %s a trial", o.TimeBudget, plan, plan.PerTrial.Round(time.Second))
	}
	stoppedEarly, err := s.search(ctx, strat, reserve)
	if err != nil {
		return nil, err
	}
	rec := strat.Recommend()
	if stoppedEarly {
		n := s.phaseTrials()[phaseSearch]
		s.warn("the time budget ran out after %d search %s (besides %d drift %s); the recommendation is the best found so far",
			n, plural(n, "trial"), o.DriftRuns, plural(o.DriftRuns, "trial"))
	}
	// The knobs the search leaves alone, sized from what the stack
	// reported in the recommendation's trials, before the holdout
	// measures them.
	recCfg, sized := s.size(rec.Config, rec.PredictedMemB)

	hold, err := s.holdout(ctx, start, recCfg, baselines, baselineCfgs)
	if err != nil {
		return nil, err
	}
	s.checkSizing(recCfg)

	// Curve: start and recommended at the other concurrencies.
	if err := s.curve(ctx, start, recCfg); err != nil {
		return nil, err
	}
	// Capacity: the time kept for it is now the searches'.
	var capVerdict *results.TuneCapacity
	if o.Objective == ObjectiveCapacity {
		if capVerdict, err = s.capacityPhase(ctx, start, recCfg, stats.Mean(hold.sRPS), stats.Mean(hold.rRPS)); err != nil {
			return nil, err
		}
	}
	return s.record(start, recCfg, rec, hold, before, sized, capVerdict), nil
}

// record writes the tune's result: the configurations, the holdout's
// verdict, the drift check, each change's effect, the memory check, the
// files of the recommendation and the warnings.
func (s *session) record(start, recCfg knob.Config, rec search.Recommendation, hold *holdoutResult, before []float64, sized []results.SizeDecision, capVerdict *results.TuneCapacity) *results.Tune {
	o := s.opt
	tune := &results.Tune{
		SchemaVersion: results.SchemaVersion, Kind: results.KindTune, ID: o.ID, StartedAt: s.started,
		Command: o.Command, App: o.App, Workload: o.Workload, Server: start.Server(), Objective: o.Objective, Limits: o.Limits,
		Start: start, StartFrom: o.StartFrom, Recommended: recCfg, Environment: s.t.Environment, PredictedMemB: rec.PredictedMemB,
	}
	tune.Baselines = hold.baselines
	tune.Capacity = capVerdict
	tune.Sizing = sized
	holdCI := s.holdoutVerdict(tune, hold)
	verdict := results.HoldoutVerdict(tune.Holdout)
	tune.Verdict = &verdict
	s.warnDrift(before, hold.after)

	tune.Changes = effects(start, recCfg, rec.Decisions, holdCI, len(hold.sRPS) > 0)
	kernelEvidence(tune, recCfg, o.Conns, s.warn)
	tune.Decisions = decisionsOf(rec.Decisions)

	s.checkMemory(tune, hold.recBenches, recCfg)

	if len(rec.Curve) > 0 {
		tune.Curves = append(tune.Curves, results.Curve{Label: fmt.Sprintf("knee scan (static pool), knee ≈ %d", rec.Knee), Points: rec.Curve})
	}
	comment := s.recommendationComment(start, tune, holdCI)
	tune.Trials = s.trials
	s.note("trials run: %s", s.phaseSummary())
	s.warnNotThePage()
	tune.Files = map[string]string{"recommended.knobs": knob.FormatFile(recCfg, comment), "evidence.txt": evidence(rec, tune, s.notes)}
	if s.t.RenderFiles != nil {
		for name, text := range s.t.RenderFiles(start, recCfg) {
			tune.Files[name] = text
		}
	}
	tune.Diff = unidiff.Diff("start.knobs", "recommended.knobs", KnobLines(start), KnobLines(recCfg), 3)
	for _, n := range rec.Notes {
		s.warn("search: %s", n)
	}
	tune.Warnings = s.warnings
	tune.WallS = s.elapsed().Seconds()
	return tune
}

// warnDrift compares the start configuration's throughput at the
// beginning (before) and at the end of the tune (after, in the holdout).
func (s *session) warnDrift(before, after []float64) {
	if len(before) == 0 || len(after) == 0 {
		return
	}
	if d, err := stats.Drift(before, after, 0.95, 0.05); err == nil && d.Drifted {
		s.warn("the machine drifted during the tune: the start configuration ran at %.2f× its first speed at the end (%s); comparisons far apart in time are less reliable", d.CI.Ratio, d.CI)
	}
}

// planTotal sets the progress's count of trials once the strategy has
// estimated its own (est), with reserve trials kept for the holdout.
func (s *session) planTotal(est, reserve int) {
	o := s.opt
	s.total = o.DriftRuns + est + reserve + s.baselines*o.HoldoutRounds + 2*len(o.CurveConns)
	if o.Objective == ObjectiveCapacity {
		s.total += 2 * capacityStepsPerSearch
	}
	if o.TimeBudget > 0 && s.perTrial > 0 {
		// The progress counts to what the budget affords, not to what the
		// strategy would ask without one: at least one search trial and
		// the holdout.
		afford := len(s.trials) + int((s.left()-s.capReserve)/s.perTrial)
		s.total = min(s.total, max(afford, len(s.trials)+1+reserve))
	}
}

// holdoutVerdict records the holdout's figures in tune, with the ratios of
// the rules of thumb that are the start itself, and warns when the
// recommendation lost. It returns the throughput ratio's interval (zero
// without a complete round).
func (s *session) holdoutVerdict(tune *results.Tune, hold *holdoutResult) stats.RatioCI {
	o := s.opt
	sRPS, rRPS, sP99, rP99 := hold.sRPS, hold.rRPS, hold.sP99, hold.rP99
	var holdCI stats.RatioCI
	if len(sRPS) > 0 {
		holdCI, _ = stats.PairedRatio(sRPS, rRPS, hold.confidence)
		p99CI, _ := stats.PairedRatio(sP99, rP99, hold.confidence)
		tune.Holdout = &results.Holdout{Rounds: len(sRPS), ThroughputRatio: holdCI.Ratio, ThroughputCILow: holdCI.Low, ThroughputCIHi: holdCI.High,
			P99Ratio: p99CI.Ratio, P99CILow: p99CI.Low, P99CIHigh: p99CI.High, StartRPS: stats.Mean(sRPS), RecommendedRPS: stats.Mean(rRPS),
			StartP99Ms: stats.Mean(sP99), RecommendedP99: stats.Mean(rP99),
			Confidence: hold.confidence, PlannedRounds: o.HoldoutRounds, MaxRounds: hold.maxRounds,
			Statistic: hold.statistic, StackCeilingRPS: hold.ceiling, ShareOfCeiling: hold.ceilShare}
		if hold.cpu.N > 0 {
			tune.Holdout.CPURatio, tune.Holdout.CPUCILow, tune.Holdout.CPUCIHigh = hold.cpu.Ratio, hold.cpu.Low, hold.cpu.High
			if hold.statistic == search.StatCPUSpeed {
				tune.Holdout.RawCPURatio, tune.Holdout.RawCPUCILow, tune.Holdout.RawCPUCIHigh = hold.rawCPU.Ratio, hold.rawCPU.Low, hold.rawCPU.High
			}
			tune.Holdout.StartCPUMs, tune.Holdout.RecommendedCPUMs = 1000*hold.startCPU, 1000*hold.recCPU
		}
		for i, b := range tune.Baselines {
			if b.NotMeasured != "" && strings.HasPrefix(b.NotMeasured, "the same as the start") {
				tune.Baselines[i].Ratio, tune.Baselines[i].CILow, tune.Baselines[i].CIHigh = holdCI.Ratio, holdCI.Low, holdCI.High
				tune.Baselines[i].Confidence, tune.Baselines[i].Rounds, tune.Baselines[i].P99Ratio = holdCI.Confidence, holdCI.N, p99CI.Ratio
			}
		}
		deciding := holdCI
		if search.IsCPU(hold.statistic) {
			deciding = hold.cpu
		}
		if deciding.High < 1 {
			s.warn("in the holdout the recommendation was slower than the start (%s on %s): the search was misled, most likely by noise; keep the start configuration", deciding, hold.statistic)
		}
	} else {
		s.warn("no complete holdout round: the recommendation is not validated")
	}

	return holdCI
}

// decisionsOf are the strategy's decisions as the record lists them.
func decisionsOf(ds []search.Decision) []results.Decision {
	var out []results.Decision
	for _, d := range ds {
		var ch []string
		for _, c := range d.Changes {
			ch = append(ch, fmt.Sprintf("%s: %s -> %s", c.Knob, c.From, c.To))
		}
		out = append(out, results.Decision{Name: d.Name, Changes: strings.Join(ch, ", "),
			Ratio: d.CI.Ratio, CILow: d.CI.Low, CIHigh: d.CI.High, Verdict: d.Verdict, Adopted: d.Adopted, Rounds: d.Rounds, Skipped: d.Skipped,
			Statistic: d.Statistic, Basis: d.Basis})
	}

	return out
}

// checkMemory records the most memory the recommended stack used in its
// runs and warns when it exceeds the prediction or the budget.
func (s *session) checkMemory(tune *results.Tune, recBenches []*results.Bench, recCfg knob.Config) {
	o := s.opt
	for _, b := range recBenches {
		tune.MeasuredMemB = max(tune.MeasuredMemB, measuredMemory(b, recCfg))
	}
	if tune.PredictedMemB > 0 && tune.MeasuredMemB > 0 {
		if float64(tune.MeasuredMemB) > 1.1*float64(tune.PredictedMemB) {
			s.warn("the recommended stack used %d MiB, more than the %d MiB predicted from the workers' PSS p95; leave more headroom", tune.MeasuredMemB>>20, tune.PredictedMemB>>20)
		}
	}
	if b := o.Limits.MemoryBudgetB; b > 0 && tune.MeasuredMemB > b {
		s.warn("the recommended stack used %d MiB, above the memory budget of %d MiB", tune.MeasuredMemB>>20, b>>20)
	}

}

// recommendationComment heads recommended.knobs: what it is for, the
// holdout's and the capacity's verdicts, and how to use it.
func (s *session) recommendationComment(start knob.Config, tune *results.Tune, holdCI stats.RatioCI) string {
	o := s.opt
	comment := fmt.Sprintf("phptune tune %s: recommended for %s %s at %d connections", o.ID, o.App, o.Workload, o.Conns)
	if sv := start.Server(); sv != knob.NginxFPM {
		comment += " behind " + sv
	}
	if tune.Holdout != nil {
		comment += fmt.Sprintf("\nholdout: %.2f× the start's throughput [%.2f, %.2f], p99 %.2f×", holdCI.Ratio, holdCI.Low, holdCI.High, tune.Holdout.P99Ratio)
	}
	if c := tune.Capacity; c != nil && c.Ratio > 0 {
		comment += fmt.Sprintf("\ncapacity at %s: %.2f× the start's", c.SLO, c.Ratio)
		if c.Recommended != nil {
			comment += fmt.Sprintf(" (%g rps)", c.Recommended.CapacityRPS)
		}
	}
	comment += "\nbring it up with: phptune lab up --knobs recommended.knobs"
	return comment
}

// warnNotThePage warns when measured requests answered something else
// than the page.
func (s *session) warnNotThePage() {
	var benches []*results.Bench
	for _, tr := range s.trials {
		benches = append(benches, tr.Bench)
	}
	if bad, all := load.NotThePage(benches...); bad > 0 {
		s.warn("%d of the %d measured requests (%.1f%%) answered a redirect or an error status, not the page (counted as errors: redirect, status_4xx, status_5xx, unexpected_status); a trial above --max-errors was no candidate",
			bad, all, 100*float64(bad)/float64(all))
	}
}
