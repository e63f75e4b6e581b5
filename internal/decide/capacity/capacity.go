// Package capacity finds the highest request rate a stack sustains within a
// latency SLO and an error limit, in the open model: requests are sent at a
// fixed rate whatever the server does, and latency counts from each
// request's intended send time, so a server that falls behind shows its
// queue in its latency instead of slowing the load down.
//
// The search (Search) is pure: it plans steps and decides from their
// results, and a Runner runs them (package labstack on a real lab, package
// search/sim on a simulated stack). It is, in order:
//
//  1. ramp: geometric steps from the start rate, ×Growth while the SLO
//     holds (÷Growth while it does not, from a failing start), until a
//     pass and a failure bracket the capacity;
//  2. bisection: the geometric mean of the bracket, until the failing rate
//     is within Tolerance of the passing one;
//  3. confirmation (the drift check): the passing rate and the failing
//     rate are measured again at the end. A machine that slowed down, or a
//     step that passed by luck, fails the first again; a step that failed
//     because a neighbour stole the CPU passes the second. Each rate's
//     verdict is the majority of its measurements (a tie is measured a
//     third time), and when a verdict turns the bracket moves and steps 1
//     and 2 continue from it, up to three confirmation rounds.
//
// A step that fails while the observer saw more than StealLimit percent
// CPU steal is measured again at once, for the same reason.
//
// Each step is a warm-up at the step's rate, then the measured part, long
// enough to fill queues (StepLength): at a rate 10% above capacity the
// queue grows by 0.1 s of work per second, so after 10 × the SLO's latency
// bound the newest requests wait a whole bound longer than at capacity.
// The bracket's tolerance (10% by default) matches that resolution.
package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// Phases of a step (results.CapacityStep.Phase).
const (
	PhaseRamp    = "ramp"
	PhaseBisect  = "bisect"
	PhaseRepeat  = "repeat"
	PhaseConfirm = "confirm"
)

// Outcomes of a search (results.Capacity.Outcome).
const (
	OutcomeBracketed    = "bracketed"
	OutcomeNotConverged = "not converged"
	OutcomeBelowMin     = "below minimum"
	OutcomeAboveMax     = "above maximum"
)

// Plan is one step to run.
type Plan struct {
	N     int // from 1
	Phase string
	// Rate is the asked rate, requests per second.
	Rate float64
	// Warmup runs at Rate and is not measured; Duration is measured.
	Warmup, Duration time.Duration
	// Connections the generator may open (lazily): enough that every
	// connection is busy only when the mean latency is already twice the
	// SLO's largest bound (Little's law), so running out of them is a
	// failure anyway; see Connections.
	Connections int
	// Drain is how long answers to the measured part's requests are
	// awaited after it. Settle is how long to leave the stack idle before
	// the step because the previous one failed: its queues (the
	// listen backlogs, requests php-fpm accepted) empty first.
	Drain, Settle time.Duration
	// Timeout bounds each request (the generator's per-request timeout).
	Timeout time.Duration
}

// Runner runs one step: the open model at p.Rate for p.Warmup then
// p.Duration, and returns the generator's result (with the observer's,
// when there is one: its steal is read). An error stops the search
// (interruption, a generator that could not start); a stack that answers
// badly is a result, not an error.
type Runner interface {
	Step(ctx context.Context, p Plan) (*results.Bench, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, p Plan) (*results.Bench, error)

// Step calls f.
func (f RunnerFunc) Step(ctx context.Context, p Plan) (*results.Bench, error) { return f(ctx, p) }

// Options configure a search. Validate names the field at fault.
type Options struct {
	SLO SLO
	// Errors is the error limit when the SLO has no errors term (the
	// command's --max-errors; zero value: no error at all).
	Errors ErrorLimit
	// StartRate is the first step's rate; StartFrom says how it was
	// chosen (recorded).
	StartRate float64
	StartFrom string
	// MinRate and MaxRate bound every step (defaults 1 and 1,000,000).
	MinRate, MaxRate float64
	// Growth is the ramp's factor (default 1.5, at least 1.1).
	Growth float64
	// Tolerance: the search stops when the failing rate is within
	// (1 + Tolerance) × the passing one (default 0.1; 0.02 to 1).
	Tolerance float64
	// Warmup and Duration of every step; zero: StepLength's rule.
	Warmup, Duration time.Duration
	// MaxSteps bounds the steps (default 24); TimeBudget the planned time
	// of all steps (warm-up, measured part and settling; 0: none).
	MaxSteps   int
	TimeBudget time.Duration
	// StealLimit is the CPU steal (percent) above which a failing step is
	// measured again at once (default 10).
	StealLimit float64
	// ConfirmRounds bounds the re-measurements of the bracket (default 3;
	// negative: none, no drift check).
	ConfirmRounds int
	// OnStep, when set, is called after every step.
	OnStep func(results.CapacityStep)
}

// Defaults for Options.
const (
	DefaultMinRate       = 1
	DefaultMaxRate       = 1e6
	DefaultGrowth        = 1.5
	DefaultTolerance     = 0.1
	DefaultMaxSteps      = 24
	DefaultStealLimit    = 10
	DefaultConfirmRounds = 3
)

// FieldError is an invalid option; Field names it as the Options field.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func (o *Options) defaults() {
	orDefault(&o.MinRate, DefaultMinRate)
	orDefault(&o.MaxRate, DefaultMaxRate)
	orDefault(&o.Growth, DefaultGrowth)
	orDefault(&o.Tolerance, DefaultTolerance)
	orDefault(&o.MaxSteps, DefaultMaxSteps)
	orDefault(&o.StealLimit, DefaultStealLimit)
	orDefault(&o.ConfirmRounds, DefaultConfirmRounds)
}

// orDefault sets *v to def when it is zero (not given).
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Validate fills the defaults and checks o: rates of at least 1 request
// per second, a sane growth and tolerance, steps of at least a second, and
// a time budget that holds at least one step.
func (o *Options) Validate() error {
	o.defaults()
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case bad(o.MinRate) || o.MinRate < 1:
		return &FieldError{"MinRate", fmt.Sprintf("%g requests per second: give at least 1", o.MinRate)}
	case bad(o.MaxRate) || o.MaxRate < o.MinRate:
		return &FieldError{"MaxRate", fmt.Sprintf("%g requests per second: give at least the minimum rate (%g)", o.MaxRate, o.MinRate)}
	case bad(o.StartRate) || o.StartRate < 1:
		return &FieldError{"StartRate", fmt.Sprintf("%g requests per second: give at least 1", o.StartRate)}
	case o.StartRate < o.MinRate || o.StartRate > o.MaxRate:
		return &FieldError{"StartRate", fmt.Sprintf("%g requests per second is outside the rates allowed (%g to %g)", o.StartRate, o.MinRate, o.MaxRate)}
	case bad(o.Growth) || o.Growth < 1.1 || o.Growth > 10:
		return &FieldError{"Growth", fmt.Sprintf("%g: give 1.1 to 10", o.Growth)}
	case bad(o.Tolerance) || o.Tolerance < 0.02 || o.Tolerance > 1:
		return &FieldError{"Tolerance", fmt.Sprintf("%g: give 0.02 to 1", o.Tolerance)}
	case o.Warmup < 0:
		return &FieldError{"Warmup", "must not be negative"}
	case o.Duration != 0 && o.Duration < time.Second:
		return &FieldError{"Duration", fmt.Sprintf("%s: a step needs at least 1s measured", o.Duration)}
	case o.MaxSteps < 1:
		return &FieldError{"MaxSteps", "give at least 1"}
	case o.TimeBudget < 0:
		return &FieldError{"TimeBudget", "must not be negative"}
	case len(o.SLO.Latency) == 0 && o.SLO.Errors == nil:
		return &FieldError{"SLO", "empty: bound a latency percentile (p99<500ms) or the errors"}
	}
	if e := o.SLO.Errors; e != nil && (bad(e.Rate) || e.Rate < 0 || e.Rate > 1) {
		return &FieldError{"SLO", "error limit outside 0 to 100%"}
	}
	if bad(o.Errors.Rate) || o.Errors.Rate < 0 || o.Errors.Rate > 1 {
		return &FieldError{"Errors", fmt.Sprintf("%g: give a rate from 0 to 1", o.Errors.Rate)}
	}
	if o.TimeBudget > 0 {
		p := o.plan(0, "", o.StartRate)
		if one := p.Warmup + p.Duration; o.TimeBudget < one {
			return &FieldError{"TimeBudget", fmt.Sprintf("%s is shorter than one step at %g rps (%s warm-up + %s measured)", o.TimeBudget, o.StartRate, p.Warmup, p.Duration)}
		}
	}
	return nil
}

// MinTailSamples is how many requests a step should have beyond its
// highest bounded percentile (5: p99 from at least 500 requests), so that
// the percentile rests on more than one or two slow requests.
const MinTailSamples = 5

// Step length bounds.
const (
	MinStep = 5 * time.Second
	MaxStep = 60 * time.Second
)

// StepLength is the rule for a step at rate under slo: the measured part
// lasts 10 × the largest latency bound (1 s when the SLO bounds only
// errors), so that an overload of 10% has built a whole bound of queueing
// by its end, and long enough to hold MinTailSamples requests beyond the
// highest percentile at that rate, within MinStep and MaxStep; the warm-up
// runs 2 × the bound, 2 s to 10 s, at the same rate (caches, connections;
// an overload's queue starts building in it). Rule says so in a line.
func StepLength(slo SLO, rate float64) (warmup, duration time.Duration, rule string) {
	l := slo.MaxLatencyBound()
	if l == 0 {
		l = time.Second
	}
	duration = 10 * l
	tail := (100 - slo.topPercentile()) / 100
	need := time.Duration(float64(MinTailSamples) / tail / math.Max(rate, 1) * float64(time.Second))
	duration = min(max(duration, need, MinStep), MaxStep).Round(100 * time.Millisecond)
	warmup = min(max(2*l, 2*time.Second), 10*time.Second)
	rule = fmt.Sprintf("each step: %s warm-up (2 × the %s bound, 2-10 s) and %s measured: 10 × the bound, so that a rate 10%% above capacity has queued a whole bound of work by the end, and at least %d requests beyond p%s (%d-%d s)",
		warmup, l, duration, MinTailSamples, fmtPct(slo.topPercentile()), int(MinStep.Seconds()), int(MaxStep.Seconds()))
	return warmup, duration, rule
}

// Connections is how many connections a step at rate may use: twice what
// Little's law puts in flight when the mean latency equals the SLO's
// largest bound, plus 8, at most 4096. Connections are opened only when a
// request finds none idle, so a passing step uses a few.
func Connections(slo SLO, rate float64) int {
	l := slo.MaxLatencyBound()
	if l == 0 {
		l = time.Second
	}
	return min(4096, int(math.Ceil(2*rate*l.Seconds()))+8)
}

// plan is the step at rate: its lengths, connections, drain and settling.
func (o *Options) plan(n int, phase string, rate float64) Plan {
	w, d, _ := StepLength(o.SLO, rate)
	if o.Warmup > 0 {
		w = o.Warmup
	}
	if o.Duration > 0 {
		d = o.Duration
	}
	l := o.SLO.MaxLatencyBound()
	return Plan{N: n, Phase: phase, Rate: rate, Warmup: w, Duration: d, Connections: Connections(o.SLO, rate),
		Drain: max(2*time.Second, 2*l), Timeout: max(10*time.Second, 4*l)}
}

// settleAfterFailure is how long the stack is left idle after a failing
// step: twice the largest latency bound, at least 2 s.
func (o *Options) settleAfterFailure() time.Duration {
	return max(2*time.Second, 2*o.SLO.MaxLatencyBound())
}

// errStop ends a search whose steps or time budget ran out.
var errStop = errors.New("capacity: budget exhausted")

// ErrBudget, wrapped in a Runner's error, says that the caller's own time
// budget has no room for the step: the search stops as when its own
// budget runs out (not converged, or bracketed but unconfirmed) instead
// of failing, and the error's text says why.
var ErrBudget = errors.New("no time left for the step")

type searcher struct {
	o       Options
	r       Runner
	res     *results.Capacity
	votes   map[float64][]bool
	planned time.Duration
	stop    string // why the budget stopped it
}

// Search runs the capacity search with r and returns the result; on an
// error from r (interruption) it returns what was measured so far with the
// error. The result's ID, StartedAt, Command, Target and Environment are
// the caller's to fill.
func Search(ctx context.Context, r Runner, o Options) (*results.Capacity, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	w, d, rule := StepLength(o.SLO, o.StartRate)
	if o.Warmup > 0 || o.Duration > 0 {
		if o.Warmup > 0 {
			w = o.Warmup
		}
		if o.Duration > 0 {
			d = o.Duration
		}
		rule = fmt.Sprintf("each step: %s warm-up and %s measured, as given", w, d)
	}
	errLimit := o.Errors
	if o.SLO.Errors != nil {
		errLimit = *o.SLO.Errors
	}
	s := &searcher{o: o, r: r, votes: map[float64][]bool{}, res: &results.Capacity{
		SchemaVersion: results.SchemaVersion, Kind: results.KindCapacity,
		SLO: sloWithErrors(o.SLO, errLimit), SLOTerms: slices.Clone(o.SLO.Latency), MaxErrorRate: errLimit.Rate,
		StartRateRPS: o.StartRate, StartFrom: o.StartFrom, MinRateRPS: o.MinRate, MaxRateRPS: o.MaxRate,
		Growth: o.Growth, Tolerance: o.Tolerance, StepWarmupS: w.Seconds(), StepS: d.Seconds(), StepRule: rule,
	}}
	err := s.run(ctx)
	if errors.Is(err, errStop) {
		err = nil
		p, f := s.bracket()
		if f > 0 && p > 0 && f <= p*(1+o.Tolerance)*(1+1e-9) {
			// Bracketed, but the drift check could not finish.
			s.res.Outcome = OutcomeBracketed
			s.warn("the drift check (re-measuring both ends) could not finish: %s; the bracket is unconfirmed", s.stop)
		} else {
			s.res.Outcome = OutcomeNotConverged
			s.warn("the search stopped before the bracket was within %.0f%%: %s", 100*o.Tolerance, s.stop)
		}
	}
	s.finish()
	return s.res, err
}

// sloWithErrors is the SLO as searched: with the error limit as a term.
func sloWithErrors(s SLO, e ErrorLimit) string {
	s.Errors = &e
	return s.String()
}

func (s *searcher) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(s.res.Warnings, w) {
		s.res.Warnings = append(s.res.Warnings, w)
	}
}

// round keeps 4 significant digits: rates that read well, and a bisection
// that still has room at the smallest tolerance.
func round(r float64) float64 {
	if r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return r
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 4, 64), 64)
	return v
}

// verdict is the majority of a rate's measurements; ok is false when it
// was never measured. A tie (only when the budget cut the tie-break) is a
// failure: capacity is claimed only on evidence.
func (s *searcher) verdict(rate float64) (pass, ok bool) {
	v := s.votes[rate]
	if len(v) == 0 {
		return false, false
	}
	n := 0
	for _, p := range v {
		if p {
			n++
		}
	}
	return 2*n > len(v), true
}

// step runs one step and records it.
func (s *searcher) step(ctx context.Context, phase string, rate float64) (results.CapacityStep, error) {
	p := s.o.plan(len(s.res.Steps)+1, phase, rate)
	if n := len(s.res.Steps); n > 0 && !s.res.Steps[n-1].Pass {
		p.Settle = s.o.settleAfterFailure()
	}
	cost := p.Settle + p.Warmup + p.Duration
	switch {
	case len(s.res.Steps) >= s.o.MaxSteps:
		s.stop = fmt.Sprintf("all %d steps were used", s.o.MaxSteps)
		return results.CapacityStep{}, errStop
	case s.o.TimeBudget > 0 && s.planned+cost > s.o.TimeBudget:
		s.stop = fmt.Sprintf("the time budget (%s) left no room for another step of %s", s.o.TimeBudget, cost)
		return results.CapacityStep{}, errStop
	}
	s.planned += cost
	b, err := s.r.Step(ctx, p)
	if errors.Is(err, ErrBudget) {
		s.stop = err.Error()
		return results.CapacityStep{}, errStop
	}
	if err != nil {
		return results.CapacityStep{}, err
	}
	st := results.CapacityStep{N: p.N, Phase: phase, RateRPS: rate, Bench: b}
	if b != nil {
		st.AchievedRPS = b.RateAchievedRPS
		st.StealPct = stealOf(b)
	}
	st.FailReasons = s.o.SLO.Check(b, s.o.Errors)
	st.Pass = len(st.FailReasons) == 0
	if !st.Pass {
		s.planned += p.Drain // answers were awaited after it
	}
	s.res.Steps = append(s.res.Steps, st)
	s.votes[rate] = append(s.votes[rate], st.Pass)
	if s.o.OnStep != nil {
		s.o.OnStep(st)
	}
	return st, nil
}

// measure gives rate's verdict, measuring it unless known (or always, with
// again): a failure under steal is measured once more at once, and a tie
// between a rate's measurements is broken by another.
func (s *searcher) measure(ctx context.Context, phase string, rate float64, again bool) (bool, error) {
	if _, known := s.verdict(rate); !known || again {
		st, err := s.step(ctx, phase, rate)
		if err != nil {
			return false, err
		}
		if !st.Pass && st.StealPct > s.o.StealLimit {
			if _, err := s.step(ctx, PhaseRepeat, rate); err != nil {
				return false, err
			}
		}
	}
	for {
		v := s.votes[rate]
		n := 0
		for _, p := range v {
			if p {
				n++
			}
		}
		if 2*n != len(v) {
			break
		}
		if _, err := s.step(ctx, PhaseRepeat, rate); err != nil {
			return false, err
		}
	}
	pass, _ := s.verdict(rate)
	return pass, nil
}

// bracket is the highest rate whose verdict is a pass and the lowest
// failing rate above it (0 when there is none).
func (s *searcher) bracket() (pass, fail float64) {
	for r := range s.votes {
		if v, _ := s.verdict(r); v && r > pass {
			pass = r
		}
	}
	for r := range s.votes {
		if v, _ := s.verdict(r); !v && r > pass && (fail == 0 || r < fail) {
			fail = r
		}
	}
	return pass, fail
}

func (s *searcher) run(ctx context.Context) error {
	o := s.o
	if _, err := s.measure(ctx, PhaseRamp, round(o.StartRate), false); err != nil {
		return err
	}
	for round := 0; ; round++ {
		if err := s.narrow(ctx); err != nil {
			return err
		}
		if s.res.Outcome != OutcomeBracketed || o.ConfirmRounds < 0 {
			return nil
		}
		if round >= o.ConfirmRounds {
			s.warn("the bracket moved at each of %d re-measurements: the machine is too noisy for a stable capacity; the last bracket is reported unconfirmed", o.ConfirmRounds)
			return nil
		}
		// The drift check: both ends again, the passing one first.
		p, f := s.bracket()
		pass, err := s.measure(ctx, PhaseConfirm, p, true)
		if err != nil {
			return err
		}
		if !pass {
			continue // p turned: the bracket moved down
		}
		if pass, err = s.measure(ctx, PhaseConfirm, f, true); err != nil {
			return err
		}
		if !pass {
			s.res.Confirmed = true
			return nil
		}
	}
}

// narrow ramps and bisects from the current verdicts until the bracket is
// within the tolerance, the bounds are reached, or the budget runs out.
func (s *searcher) narrow(ctx context.Context) error {
	o := s.o
	for {
		p, f := s.bracket()
		var next float64
		phase := PhaseRamp
		switch {
		case p == 0: // nothing passed yet: down from the lowest failure
			if f <= o.MinRate {
				s.res.Outcome = OutcomeBelowMin
				return nil
			}
			next = max(round(f/o.Growth), o.MinRate)
		case f == 0: // nothing failed above the best pass: up
			if p >= o.MaxRate {
				s.res.Outcome = OutcomeAboveMax
				return nil
			}
			next = min(round(p*o.Growth), o.MaxRate)
		case f <= p*(1+o.Tolerance)*(1+1e-9):
			s.res.Outcome = OutcomeBracketed
			return nil
		default:
			phase = PhaseBisect
			next = round(math.Sqrt(p * f))
			if next <= p || next >= f {
				s.res.Outcome = OutcomeBracketed
				return nil
			}
		}
		if _, err := s.measure(ctx, phase, next, false); err != nil {
			return err
		}
	}
}

// finish fills the capacity and the warnings from the steps.
func (s *searcher) finish() {
	p, f := s.bracket()
	s.res.CapacityRPS, s.res.FirstFailRPS = p, f
	if s.res.Outcome == "" {
		s.res.Outcome = OutcomeNotConverged
	}
	switch s.res.Outcome {
	case OutcomeBelowMin:
		s.warn("the SLO failed even at the minimum rate (%s rps): the stack does not meet it at any rate tried", fmtRPS(s.o.MinRate))
	case OutcomeAboveMax:
		s.warn("the SLO held up to the maximum rate (%s rps): the capacity is at least that", fmtRPS(s.o.MaxRate))
	}
	stolen := 0
	for _, st := range s.res.Steps {
		if st.StealPct > s.o.StealLimit {
			stolen++
		}
		if st.Pass && st.Bench != nil && st.Bench.Generator.Saturated && st.RateRPS >= p {
			s.warn("the load generator was saturated at %s rps: the capacity found may be the generator's, not the stack's (give the generator its own CPUs, or measure from another machine)", fmtRPS(st.RateRPS))
		}
	}
	if stolen > 0 {
		s.warn("%d of %d steps ran with more than %.0f%% CPU steal (a neighbour on the host took the CPU)", stolen, len(s.res.Steps), s.o.StealLimit)
	}
}

func stealOf(b *results.Bench) float64 {
	if b == nil || b.Observation == nil {
		return 0
	}
	m := b.Observation.Derived.MaxStealPct
	for _, x := range b.Observation.Samples {
		m = math.Max(m, x.Machine.StealPct)
	}
	return m
}

func fmtRPS(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
