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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/search"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/store"
)

// Stack is the stack being tuned.
type Stack interface {
	// Apply restarts the stack with cfg. If the stack fails to start, the
	// error should carry the components' log lines: the trial is recorded
	// as failed with it and the tune goes on.
	Apply(ctx context.Context, cfg knob.Config) error
	// Measure loads the running stack with conns connections for warmup
	// (not measured) and then d, and returns what the generator and the
	// observer saw.
	Measure(ctx context.Context, conns int, d, warmup time.Duration) (*results.Bench, error)
	// Reset restores the application's state (the database) so that a
	// writing workload starts every trial alike.
	Reset(ctx context.Context) error
}

// Phases the orchestrator adds to the strategy's.
const (
	PhaseDrift   = "drift"
	PhaseHoldout = "holdout"
	// PhaseCurve measures the start and the recommended configuration at
	// other concurrencies than the tuned one, after the holdout: the
	// throughput and p99 curves the report draws (seed 000's table).
	PhaseCurve = "curve"
)

// Trial statuses.
const (
	StatusOK       = "ok"
	StatusFailed   = "failed"
	StatusViolates = "violates"
)

// Options are a tune's inputs. They are stored with the run, so --resume
// needs only the run's ID; keep them JSON-serialisable.
type Options struct {
	ID       string `json:"id"` // empty: made from the start time
	Command  string `json:"command,omitempty"`
	App      string `json:"app,omitempty"`
	Workload string `json:"workload,omitempty"`
	// Lab and DocRoot record how the caller built the stack (a lab the
	// user runs, or a lab of its own for App or DocRoot), so --resume can
	// build it again. The tuner does not read them.
	Lab     string `json:"lab,omitempty"`
	DocRoot string `json:"docroot,omitempty"`
	// User is the account the lab of its own runs php-fpm as (--user);
	// CPUs and MemoryMaxB its caps (--cpus, --memory-max).
	User       string `json:"user,omitempty"`
	CPUs       string `json:"cpus,omitempty"`
	MemoryMaxB int64  `json:"memory_max_bytes,omitempty"`
	// Expect is the --expect regular expression every 2xx body must match.
	Expect    string      `json:"expect,omitempty"`
	Objective string      `json:"objective,omitempty"` // "throughput" (default) or "latency"
	Start     knob.Config `json:"start,omitempty"`     // nil: the distro defaults
	// Conns is the workload's concurrency (default 50).
	Conns int `json:"conns,omitempty"`
	// Cores of the machine under test (default runtime.NumCPU()).
	Cores  int            `json:"cores,omitempty"`
	Limits results.Limits `json:"limits"`
	// TimeBudget bounds the whole tune (0: none). The search stops early
	// to leave time for the holdout.
	TimeBudget time.Duration `json:"time_budget_ns,omitempty"`
	// Duration and Warmup of each trial (default 10 s and 3 s).
	Duration time.Duration `json:"duration_ns,omitempty"`
	Warmup   time.Duration `json:"warmup_ns,omitempty"`
	// ResetBetween resets the stack's state before every measurement
	// (writing workloads: seed 004's comments table).
	ResetBetween bool `json:"reset_between,omitempty"`
	// DriftRuns is how often the start configuration is measured before
	// the search (default 2); the holdout re-measures it at the end.
	DriftRuns int `json:"drift_runs,omitempty"`
	// HoldoutRounds of start vs recommended (default 4).
	HoldoutRounds int `json:"holdout_rounds,omitempty"`
	// HoldoutMaxRounds caps the rounds a holdout whose interval is
	// undecided (it includes 1 and is wider than the equivalence margin)
	// may grow to while the time budget allows (default 2 × HoldoutRounds;
	// equal to HoldoutRounds: never more). Every look is then at the
	// stricter per-look confidence of stats.Compare.
	HoldoutMaxRounds int `json:"holdout_max_rounds,omitempty"`
	// Baselines are the rules of thumb (KnownBaselines) measured in the
	// holdout beside start and recommended when they fit the memory
	// budget and the time budget allows; nil: none (runs stored before
	// they existed). What the calculator formula would set is reported
	// either way.
	Baselines []string `json:"baselines,omitempty"`
	// MemAvailableB is the machine's MemAvailable at the start, for the
	// calculator formula; 0: the largest the observer saw in the drift
	// trials.
	MemAvailableB int64 `json:"mem_available_bytes,omitempty"`
	// Strategy is "domain" (default) or "grid".
	Strategy string `json:"strategy,omitempty"`
	// Challenges are the categorical challenges to try, each a name from
	// search.KnownChallenges or knob assignments separated by ";" (see
	// ParseChallenge); nil: the defaults (with the write challenges when
	// ResetBetween says the workload writes).
	Challenges []string `json:"challenges,omitempty"`
	// CategoricalTrials is the domain strategy's budget for the
	// categorical rounds (0: its default).
	CategoricalTrials int `json:"categorical_trials,omitempty"`
	// CurveConns are the concurrencies, besides Conns, at which the start
	// and the recommended configuration are measured once each at the end
	// (nil: Conns/4, Conns/2 and 2×Conns). NoCurve skips that phase.
	CurveConns []int `json:"curve_conns,omitempty"`
	NoCurve    bool  `json:"no_curve,omitempty"`
}

// DefaultCurveConns are the concurrencies of the curve phase for a
// workload at conns: a quarter, a half and twice, without conns itself
// (the holdout measured it) and without duplicates.
func DefaultCurveConns(conns int) []int {
	var out []int
	for _, n := range []int{max(1, conns/4), max(1, conns/2), 2 * conns} {
		if n != conns && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func (o *Options) defaults(now time.Time) error {
	if o.Start == nil {
		o.Start = knob.Defaults()
	}
	if err := o.Start.Validate(); err != nil {
		return fmt.Errorf("start configuration: %w", err)
	}
	if o.ID == "" {
		o.ID = now.UTC().Format("20060102-150405")
	}
	if o.Objective == "" {
		o.Objective = "throughput"
	}
	if o.Objective != "throughput" && o.Objective != "latency" {
		return fmt.Errorf("objective %q: want throughput or latency", o.Objective)
	}
	if o.Conns <= 0 {
		o.Conns = 50
	}
	if o.Cores <= 0 {
		o.Cores = runtime.NumCPU()
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = 3 * time.Second
	}
	if o.DriftRuns <= 0 {
		o.DriftRuns = 2
	}
	if o.HoldoutRounds <= 0 {
		o.HoldoutRounds = 4
	}
	if o.HoldoutRounds < 2 {
		o.HoldoutRounds = 2
	}
	if o.HoldoutMaxRounds == 0 {
		o.HoldoutMaxRounds = 2 * o.HoldoutRounds
	}
	o.HoldoutMaxRounds = max(o.HoldoutMaxRounds, o.HoldoutRounds)
	if err := CheckBaselines(o.Baselines); err != nil {
		return err
	}
	if o.NoCurve {
		o.CurveConns = nil
	} else if o.CurveConns == nil {
		o.CurveConns = DefaultCurveConns(o.Conns)
	}
	for _, n := range o.CurveConns {
		if n <= 0 {
			return fmt.Errorf("curve concurrency %d: want connections > 0", n)
		}
	}
	if o.Strategy == "" {
		o.Strategy = "domain"
	}
	if o.Strategy != "domain" && o.Strategy != "grid" {
		return fmt.Errorf("strategy %q: want domain or grid", o.Strategy)
	}
	if _, err := Challenges(o.Challenges); err != nil {
		return err
	}
	return nil
}

// Progress is one update for a progress display.
type Progress struct {
	RunID     string
	Phase     string
	Trial     int // trials done so far, this one included
	Total     int // estimate
	Label     string
	Reused    bool // taken from the database on resume, not measured
	Status    string
	RPS       float64
	BestRPS   float64 // best usable throughput measured so far
	BestLabel string
	Elapsed   time.Duration
	Left      time.Duration // of the time budget; 0 without one
}

// InterruptedError is returned when the context is cancelled mid-tune.
// Every finished trial is stored; Resume continues the run.
type InterruptedError struct {
	RunID  string
	Trials int
	Cause  error
}

// Error says how to resume.
func (e *InterruptedError) Error() string {
	return fmt.Sprintf("tune %s interrupted after %d trials (%v); every finished trial is saved, continue with: phptune tune --resume %s",
		e.RunID, e.Trials, e.Cause, e.RunID)
}

// Unwrap returns the cancellation's cause.
func (e *InterruptedError) Unwrap() error { return e.Cause }

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
	warnings  []string
	notes     []string // for the evidence: what the tune did and why
}

func (s *session) elapsed() time.Duration { return s.spent + s.t.now().Sub(s.started) }

func (s *session) left() time.Duration {
	if s.opt.TimeBudget <= 0 {
		return 0
	}
	return max(0, s.opt.TimeBudget-s.elapsed())
}

func (s *session) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

func (s *session) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(s.warnings, w) {
		s.warnings = append(s.warnings, w)
	}
}

// key identifies a candidate, so a resumed run can tell that the trial it
// finds stored under a number is the one it is about to measure.
func key(phase string, conns int, cfg knob.Config) string {
	h := sha256.New()
	for _, l := range KnobLines(cfg) {
		h.Write([]byte(l + "\n"))
	}
	return fmt.Sprintf("%s/%d/%s", phase, conns, hex.EncodeToString(h.Sum(nil))[:16])
}

// ErrResumeMismatch means the stored trials do not match what the tune
// asks for now (a different phptune version or edited database).
var ErrResumeMismatch = errors.New("stored trials do not match this tune")

// trial measures one candidate (or takes it from the database on resume)
// and stores it. The returned error is only for interruption and storage;
// a stack that fails is a failed trial, not an error.
func (s *session) trial(ctx context.Context, c search.Candidate) (results.Trial, error) {
	n := len(s.trials) + 1
	k := key(c.Phase, c.Conns, c.Config)
	if st, ok := s.stored[n]; ok {
		if st.Key != k {
			return results.Trial{}, fmt.Errorf("%w: trial %d was %s (%s), now %s; start a new run", ErrResumeMismatch, n, st.Label, st.Key, k)
		}
		s.trials = append(s.trials, st.Trial)
		s.report(c, st.Trial, true)
		return st.Trial, nil
	}
	if err := ctx.Err(); err != nil {
		return results.Trial{}, err
	}
	begin := s.t.now()
	tr := results.Trial{N: n, Phase: c.Phase, Config: c.Config.Clone(), Connections: c.Conns, Status: StatusOK}
	fail := func(reason string, err error) {
		tr.Status, tr.FailReason, tr.Log = StatusFailed, reason, err.Error()
	}
	if err := c.Config.Validate(); err != nil {
		fail("invalid configuration", err)
	} else if s.applied == nil || !maps.Equal(s.applied, c.Config) || c.Phase == PhaseHoldout {
		// Same config as running: no restart (the knee scan only changes
		// connections). The holdout always restarts: fresh processes.
		s.applied = nil
		if err := s.t.Stack.Apply(ctx, c.Config); err != nil {
			if ctx.Err() != nil {
				return results.Trial{}, ctx.Err()
			}
			fail("the stack did not start with this configuration", err)
		} else {
			s.applied = c.Config.Clone()
		}
	}
	if tr.Status == StatusOK && s.opt.ResetBetween {
		if err := s.t.Stack.Reset(ctx); err != nil {
			if ctx.Err() != nil {
				return results.Trial{}, ctx.Err()
			}
			fail("resetting the application's state failed", err)
		}
	}
	if tr.Status == StatusOK {
		b, err := s.t.Stack.Measure(ctx, c.Conns, s.opt.Duration, s.opt.Warmup)
		switch {
		case ctx.Err() != nil:
			return results.Trial{}, ctx.Err()
		case err != nil:
			fail("the measurement failed", err)
			s.applied = nil // the stack may be broken: restart next time
		default:
			tr.Bench = b
			if v := search.Violation(s.opt.Limits, b); v != "" {
				tr.Status, tr.FailReason = StatusViolates, v
			}
		}
	}
	end := s.t.now()
	if err := s.t.Store.SaveTrial(ctx, s.opt.ID, store.Trial{Trial: tr, Key: k, Label: c.Label, StartedAt: begin, FinishedAt: end}); err != nil {
		return results.Trial{}, err
	}
	s.measured++
	d := end.Sub(begin)
	s.perTrial += (d - s.perTrial) / time.Duration(s.measured)
	s.trials = append(s.trials, tr)
	s.report(c, tr, false)
	return tr, nil
}

func (s *session) report(c search.Candidate, tr results.Trial, reused bool) {
	if tr.Bench != nil {
		if st := maxSteal(tr.Bench); st > search.StealLimit {
			s.warn("trial %d (%s) ran with %.0f%% CPU steal: a neighbour took the CPU; its figures are less trustworthy", tr.N, c.Label, st)
		}
		if tr.Bench.Generator.Saturated {
			s.warn("trial %d (%s): the load generator was saturated; the figure measures the generator, not the stack", tr.N, c.Label)
		}
		if tr.Status == StatusOK && tr.Bench.ThroughputRPS > s.best && c.Phase != PhaseHoldout && c.Phase != PhaseCurve {
			s.best, s.bestLbl = tr.Bench.ThroughputRPS, c.Label
		}
	}
	if s.t.Progress == nil {
		return
	}
	p := Progress{RunID: s.opt.ID, Phase: c.Phase, Trial: len(s.trials), Total: max(s.total, len(s.trials)), Label: c.Label,
		Reused: reused, Status: tr.Status, BestRPS: s.best, BestLabel: s.bestLbl, Elapsed: s.elapsed(), Left: s.left()}
	if tr.Bench != nil {
		p.RPS = tr.Bench.ThroughputRPS
	}
	s.t.Progress(p)
}

func maxSteal(b *results.Bench) float64 {
	st := 0.0
	if b.Observation != nil {
		st = b.Observation.Derived.MaxStealPct
		for _, x := range b.Observation.Samples {
			st = math.Max(st, x.Machine.StealPct)
		}
	}
	if b.Environment != nil {
		st = math.Max(st, b.Environment.MaxStealPc)
	}
	return st
}

func outcome(tr results.Trial) search.Outcome {
	if tr.Bench == nil {
		return search.Outcome{Err: strings.TrimSpace(tr.FailReason + ": " + firstLine(tr.Log))}
	}
	return search.Outcome{Bench: tr.Bench}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// curveReserve is how many trials the search leaves for the curve: all of
// them when the work after the search (drift, holdout with its baselines,
// curve) takes at most a third of the time budget, else none (the curve
// then gets what is left: the search comes first).
func (s *session) curveReserve() int {
	o := s.opt
	n := 2 * len(o.CurveConns)
	if o.TimeBudget <= 0 || s.perTrial == 0 {
		return n
	}
	if time.Duration(o.DriftRuns+(2+s.baselines)*o.HoldoutRounds+n)*s.perTrial*3 > o.TimeBudget {
		return 0
	}
	return n
}

// baselineReserve is how many trials the search leaves for the baselines
// in the holdout: all of them when the drift and the holdout with them
// take at most a third of the time budget, else none (they then get what
// the search left, and the summary says when that was not enough).
func (s *session) baselineReserve() int {
	o := s.opt
	n := s.baselines * o.HoldoutRounds
	if o.TimeBudget <= 0 || s.perTrial == 0 {
		return n
	}
	if time.Duration(o.DriftRuns+(2+s.baselines)*o.HoldoutRounds)*s.perTrial*3 > o.TimeBudget {
		return 0
	}
	return n
}

// budgetLeftFor reports whether n more trials fit in the time budget.
func (s *session) budgetLeftFor(n int) bool {
	if s.opt.TimeBudget <= 0 || s.perTrial == 0 {
		return true
	}
	return s.left() >= time.Duration(n)*s.perTrial
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

func (s *session) strategy(baseline *results.Bench) (search.Strategy, int, error) {
	o := s.opt
	so := search.Options{Start: o.Start, Conns: o.Conns, Cores: o.Cores, Limits: o.Limits, Objective: o.Objective,
		CategoricalTrials: o.CategoricalTrials, Baseline: baseline, Writes: o.ResetBetween}
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
	d, err := search.NewDomain(so)
	if err != nil {
		return nil, 0, err
	}
	est := 8 + o.CategoricalTrials
	if o.CategoricalTrials == 0 {
		est = 8 + 14
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
	var before []float64
	var baseline *results.Bench
	var driftBenches []*results.Bench
	for i := 0; i < o.DriftRuns; i++ {
		tr, err := s.trial(ctx, search.Candidate{Phase: PhaseDrift, Label: fmt.Sprintf("start %d/%d", i+1, o.DriftRuns), Config: start, Conns: o.Conns})
		if err != nil {
			return nil, err
		}
		if tr.Bench != nil {
			driftBenches = append(driftBenches, tr.Bench)
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

	// The rules of thumb, from the drift trials' measurements: what they
	// would set, and which of them the holdout is to measure.
	baselines, baselineCfgs := planBaselines(baselineInputsFrom(o, driftBenches), o.Baselines)
	for _, b := range baselines {
		if b.NotMeasured == "" {
			s.baselines++
		}
	}

	strat, est, err := s.strategy(baseline)
	if err != nil {
		return nil, err
	}
	defer strat.Close()
	s.total = o.DriftRuns + est + reserve + s.baselines*o.HoldoutRounds + 2*len(o.CurveConns)
	stoppedEarly := false
search:
	for {
		batch := strat.Ask()
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			if _, ok := s.stored[len(s.trials)+1]; !ok && !s.budgetLeftFor(1+reserve+s.baselineReserve()+s.curveReserve()) {
				stoppedEarly = true
				break search
			}
			tr, err := s.trial(ctx, c)
			if err != nil {
				return nil, err
			}
			strat.Tell(c, outcome(tr))
		}
	}
	rec := strat.Recommend()
	if stoppedEarly {
		s.warn("the time budget ran out after %d search trials; the recommendation is the best found so far", rec.Trials)
	}
	recCfg := rec.Config

	hold, err := s.holdout(ctx, start, recCfg, baselines, baselineCfgs)
	if err != nil {
		return nil, err
	}
	sRPS, rRPS, sP99, rP99, after, recBenches := hold.sRPS, hold.rRPS, hold.sP99, hold.rP99, hold.after, hold.recBenches

	// Curve: start and recommended at the other concurrencies, one trial
	// each, twice the tuned concurrency first (how each behaves past it),
	// a pair per level so that a curve the time budget cuts short still
	// compares like with like. It gets only what the budget left.
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
				return nil, err
			}
		}
	}
	if cut > 0 {
		s.warn("the time budget left out %d of the %d curve trials (start and recommended at other concurrencies than %d)", cut, len(levels)*len(curve), o.Conns)
	}

	tune := &results.Tune{
		SchemaVersion: results.SchemaVersion, Kind: results.KindTune, ID: o.ID, StartedAt: s.started,
		Command: o.Command, App: o.App, Workload: o.Workload, Objective: o.Objective, Limits: o.Limits,
		Start: start, Recommended: recCfg, Environment: s.t.Environment, PredictedMemB: rec.PredictedMemB,
	}
	tune.Baselines = hold.baselines
	var holdCI stats.RatioCI
	if len(sRPS) > 0 {
		holdCI, _ = stats.PairedRatio(sRPS, rRPS, hold.confidence)
		p99CI, _ := stats.PairedRatio(sP99, rP99, hold.confidence)
		tune.Holdout = &results.Holdout{Rounds: len(sRPS), ThroughputRatio: holdCI.Ratio, ThroughputCILow: holdCI.Low, ThroughputCIHi: holdCI.High,
			P99Ratio: p99CI.Ratio, P99CILow: p99CI.Low, P99CIHigh: p99CI.High, StartRPS: stats.Mean(sRPS), RecommendedRPS: stats.Mean(rRPS),
			StartP99Ms: stats.Mean(sP99), RecommendedP99: stats.Mean(rP99),
			Confidence: hold.confidence, PlannedRounds: o.HoldoutRounds, MaxRounds: o.HoldoutMaxRounds,
			Statistic: hold.statistic, StackCeilingRPS: hold.ceiling, ShareOfCeiling: hold.ceilShare}
		if hold.cpu.N > 0 {
			tune.Holdout.CPURatio, tune.Holdout.CPUCILow, tune.Holdout.CPUCIHigh = hold.cpu.Ratio, hold.cpu.Low, hold.cpu.High
			tune.Holdout.StartCPUMs, tune.Holdout.RecommendedCPUMs = 1000*hold.startCPU, 1000*hold.recCPU
		}
		for i, b := range tune.Baselines {
			if b.NotMeasured != "" && strings.HasPrefix(b.NotMeasured, "the same as the start") {
				tune.Baselines[i].Ratio, tune.Baselines[i].CILow, tune.Baselines[i].CIHigh = holdCI.Ratio, holdCI.Low, holdCI.High
				tune.Baselines[i].Confidence, tune.Baselines[i].Rounds, tune.Baselines[i].P99Ratio = holdCI.Confidence, holdCI.N, p99CI.Ratio
			}
		}
		deciding := holdCI
		if hold.statistic == search.StatCPU {
			deciding = hold.cpu
		}
		if deciding.High < 1 {
			s.warn("in the holdout the recommendation was slower than the start (%s on %s): the search was misled, most likely by noise; keep the start configuration", deciding, hold.statistic)
		}
	} else {
		s.warn("no complete holdout round: the recommendation is not validated")
	}

	// Drift: the start configuration at the beginning against the end.
	if len(before) > 0 && len(after) > 0 {
		if d, err := stats.Drift(before, after, 0.95, 0.05); err == nil && d.Drifted {
			s.warn("the machine drifted during the tune: the start configuration ran at %.2f× its first speed at the end (%s); comparisons far apart in time are less reliable", d.CI.Ratio, d.CI)
		}
	}

	tune.Changes = effects(start, recCfg, rec.Decisions, holdCI, len(sRPS) > 0)
	for _, d := range rec.Decisions {
		var ch []string
		for _, c := range d.Changes {
			ch = append(ch, fmt.Sprintf("%s: %s -> %s", c.Knob, c.From, c.To))
		}
		tune.Decisions = append(tune.Decisions, results.Decision{Name: d.Name, Changes: strings.Join(ch, ", "),
			Ratio: d.CI.Ratio, CILow: d.CI.Low, CIHigh: d.CI.High, Verdict: d.Verdict, Adopted: d.Adopted, Rounds: d.Rounds, Skipped: d.Skipped,
			Statistic: d.Statistic, Basis: d.Basis})
	}

	// Memory: the prediction against what the recommended stack used.
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

	if len(rec.Curve) > 0 {
		tune.Curves = append(tune.Curves, results.Curve{Label: fmt.Sprintf("knee scan (static pool), knee ≈ %d", rec.Knee), Points: rec.Curve})
	}
	comment := fmt.Sprintf("phptune tune %s: recommended for %s %s at %d connections", o.ID, o.App, o.Workload, o.Conns)
	if tune.Holdout != nil {
		comment += fmt.Sprintf("\nholdout: %.2f× the start's throughput [%.2f, %.2f], p99 %.2f×", holdCI.Ratio, holdCI.Low, holdCI.High, tune.Holdout.P99Ratio)
	}
	comment += "\nbring it up with: phptune lab up --knobs recommended.knobs"
	tune.Trials = s.trials
	tune.Files = map[string]string{"recommended.knobs": knob.FormatFile(recCfg, comment), "evidence.txt": evidence(rec, tune, s.notes)}
	if s.t.RenderFiles != nil {
		for name, text := range s.t.RenderFiles(start, recCfg) {
			tune.Files[name] = text
		}
	}
	tune.Diff = UnifiedDiff("start.knobs", "recommended.knobs", KnobLines(start), KnobLines(recCfg), 3)
	for _, n := range rec.Notes {
		s.warn("search: %s", n)
	}
	tune.Warnings = s.warnings
	tune.WallS = s.elapsed().Seconds()
	return tune, nil
}

// measuredMemory is the stack's peak PSS in a run: the largest sum over
// the observer's groups (the generator excluded) in any sample, or, without
// samples, the derived per-worker figure times the pool plus the rest.
func measuredMemory(b *results.Bench, cfg knob.Config) int64 {
	if b == nil || b.Observation == nil {
		return 0
	}
	var peak int64
	for _, smp := range b.Observation.Samples {
		var sum int64
		for _, g := range smp.Groups {
			if !strings.Contains(strings.ToLower(g.Name), "generator") {
				sum += g.PSSB
			}
		}
		peak = max(peak, sum)
	}
	if peak == 0 {
		d := b.Observation.Derived
		peak = d.OtherPSSB + cfg.Int("pm.max_children")*d.WorkerPSSP95B
	}
	return peak
}

// effects gives each changed knob its measured effect. A knob set by an
// adopted challenge gets that paired comparison's interval; a knob whose
// challenge back to the start's value lost or tied gets the inverse of that
// comparison; the rest (the pool size and its spares, which were sized
// together) get the holdout's interval, which measures all changes at once.
func effects(start, rec knob.Config, decs []search.Decision, hold stats.RatioCI, haveHold bool) []results.Effect {
	var out []results.Effect
	for _, ch := range knob.Diff(start, rec) {
		if !rec.Relevant(ch.Knob) {
			continue // e.g. spare settings of a pool that became static
		}
		e := results.Effect{Knob: ch.Knob, From: ch.From, To: ch.To}
		var ci stats.RatioCI
		found := false
		for _, d := range decs {
			if d.Rounds == 0 {
				continue
			}
			for _, dc := range d.Changes {
				if dc.Knob != ch.Knob {
					continue
				}
				switch {
				case d.Adopted && dc.To == ch.To:
					ci, found = d.CI, true
				case !d.Adopted && dc.From == ch.To && dc.To == ch.From:
					ci, found = stats.RatioCI{Ratio: 1 / d.CI.Ratio, Low: 1 / d.CI.High, High: inv(d.CI.Low), Confidence: d.CI.Confidence, N: d.CI.N}, true
				}
			}
			if found {
				break
			}
		}
		if !found {
			if !haveHold {
				e.Verdict = "not measured"
				out = append(out, e)
				continue
			}
			ci = hold
			e.Verdict = "(holdout, all changes together) "
		}
		e.Ratio, e.CILow, e.CIHigh, e.Confidence = ci.Ratio, ci.Low, ci.High, ci.Confidence
		switch {
		case ci.Low > 1:
			e.Verdict += "better"
		case ci.High < 1:
			e.Verdict += "worse"
		default:
			e.Verdict += "no significant difference"
		}
		out = append(out, e)
	}
	return out
}

func inv(x float64) float64 {
	if x == 0 {
		return math.Inf(1)
	}
	return 1 / x
}

// evidence renders what the search decided and why, for people: the knee
// scan, each categorical comparison with its interval (including the ones
// that kept the default), and the holdout.
func evidence(rec search.Recommendation, t *results.Tune, notes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tune %s: %d trials\n", t.ID, len(t.Trials))
	if len(rec.Curve) > 0 {
		fmt.Fprintf(&b, "\nknee scan (static pool): knee ≈ %d connections\n", rec.Knee)
		for _, p := range rec.Curve {
			fmt.Fprintf(&b, "  %5d conns  %9.1f rps  p99 %8.1f ms\n", p.Connections, p.ThroughputRPS, p.P99Ms)
		}
	}
	if rec.MemoryCap > 0 {
		fmt.Fprintf(&b, "\nmemory budget allows at most %d workers\n", rec.MemoryCap)
	}
	if len(rec.Decisions) > 0 {
		b.WriteString("\npaired comparisons against the sized pool (challenger/incumbent):\n")
		for _, d := range rec.Decisions {
			switch {
			case d.Skipped != "":
				fmt.Fprintf(&b, "  %-34s skipped: %s\n", d.Name, d.Skipped)
			case d.Rounds == 0:
				fmt.Fprintf(&b, "  %-34s %s\n", d.Name, d.Verdict)
			default:
				adopted := "kept the incumbent"
				if d.Adopted {
					adopted = "adopted"
				}
				fmt.Fprintf(&b, "  %-34s %.3f× [%.3f, %.3f] over %d rounds: %s, %s\n", d.Name, d.CI.Ratio, d.CI.Low, d.CI.High, d.Rounds, d.Verdict, adopted)
				if d.Basis != "" {
					fmt.Fprintf(&b, "  %-34s %s\n", "", d.Basis)
				}
			}
		}
	}
	if h := t.Holdout; h != nil {
		fmt.Fprintf(&b, "\nholdout, %d interleaved rounds: throughput %.0f → %.0f rps, %.2f× [%.2f, %.2f]; p99 %.1f → %.1f ms, %.2f×\n",
			h.Rounds, h.StartRPS, h.RecommendedRPS, h.ThroughputRatio, h.ThroughputCILow, h.ThroughputCIHi, h.StartP99Ms, h.RecommendedP99, h.P99Ratio)
		if h.CPURatio > 0 {
			fmt.Fprintf(&b, "  stack CPU per request %.2f → %.2f ms, %.2f× faster [%.2f, %.2f]\n", h.StartCPUMs, h.RecommendedCPUMs, h.CPURatio, h.CPUCILow, h.CPUCIHigh)
		}
		if h.Statistic != "" {
			why := "the page is not CPU-bound (the stack left cores idle), so throughput decides"
			if h.Statistic == search.StatCPU {
				why = "both configurations were CPU-bound (≥ 90% of their stack ceiling) in most rounds, so stack CPU per request decides: steal moves throughput, not it"
			}
			fmt.Fprintf(&b, "  deciding statistic: %s (%s)\n", h.Statistic, why)
		}
		if h.StackCeilingRPS > 0 {
			fmt.Fprintf(&b, "  stack ceiling of the recommendation: %.0f rps ((cores − steal − softirq − generator) ÷ stack CPU per request); it reached %.0f%% of it\n", h.StackCeilingRPS, 100*h.ShareOfCeiling)
		}
		if h.Confidence > 0 && h.MaxRounds > h.PlannedRounds {
			fmt.Fprintf(&b, "  (%d rounds planned, up to %d while undecided: intervals at %.1f%% per look, 95%% over all looks)\n", h.PlannedRounds, h.MaxRounds, 100*h.Confidence)
		}
	}
	if len(t.Baselines) > 0 {
		b.WriteString("\nrules of thumb (recommended/baseline throughput):\n")
		for _, bl := range t.Baselines {
			fmt.Fprintf(&b, "  %-11s %s\n", bl.Name, bl.Rule)
			if len(bl.Settings) > 0 {
				fmt.Fprintf(&b, "  %-11s sets %s\n", "", strings.Join(bl.Settings, ", "))
			}
			switch {
			case bl.Rounds > 0:
				fmt.Fprintf(&b, "  %-11s %.2f× [%.2f, %.2f] over %d rounds; p99 %.2f×\n", "", bl.Ratio, bl.CILow, bl.CIHigh, bl.Rounds, bl.P99Ratio)
			case bl.NotMeasured != "":
				fmt.Fprintf(&b, "  %-11s not measured: %s\n", "", bl.NotMeasured)
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if t.PredictedMemB > 0 {
		fmt.Fprintf(&b, "memory: predicted %d MiB, measured %d MiB\n", t.PredictedMemB>>20, t.MeasuredMemB>>20)
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
