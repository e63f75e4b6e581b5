// Package interleave measures N configurations of one stack side by side:
// round after round, each configuration once per round in fresh processes,
// the order rotated every round (A B C, B C A, C A B, ...), so that a noisy
// machine (a neighbour's load, CPU steal, slow drift) disturbs them alike.
// It gives each configuration's runs and paired ratios against another
// with confidence intervals from package stats, and can add rounds while a
// comparison is undecided, with the sequential correction repeated looks
// need (stats.Compare).
//
// phptune compare and the tune's holdout are its two users. What running
// one configuration once means is behind Runner: StackRunner restarts a
// Stack and measures it (compare); the tune records each run as a trial.
package interleave

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

// Stack is a stack that can be restarted with a configuration and loaded:
// what a comparison runs and a tune tunes (tune.Stack is this type), which
// package labstack implements.
type Stack interface {
	// Apply restarts the stack with cfg (fresh processes). If the stack
	// fails to start, the error should carry the components' log lines: a
	// tune records the trial as failed with it and goes on.
	Apply(ctx context.Context, cfg knob.Config) error
	// Measure loads the running stack with conns connections for warmup
	// (not measured) and then d, and returns what the generator and the
	// observer saw.
	Measure(ctx context.Context, conns int, d, warmup time.Duration) (*results.Bench, error)
	// Reset restores the application's state (the database) so that a
	// writing workload starts every trial alike.
	Reset(ctx context.Context) error
}

// Config is one configuration being compared.
type Config struct {
	Label  string
	Config knob.Config
}

// Run is one configuration's turn in one round.
type Run struct {
	Round int // from 0
	Index int // of the configuration in the session
	Config
}

// Outcome is what one run gave: a measurement, or why there is none.
type Outcome struct {
	Bench *results.Bench
	// Failed says why the configuration did not run (it did not start,
	// the measurement failed); empty when Bench is set.
	Failed string
}

// OK reports whether the run measured something.
func (o Outcome) OK() bool { return o.Bench != nil && o.Failed == "" }

// Runner runs one configuration once. A configuration that fails is an
// Outcome with Failed set; the error is for what stops the whole session
// (interruption, a reset or a store that failed).
type Runner interface {
	Run(ctx context.Context, r Run) (Outcome, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, r Run) (Outcome, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, r Run) (Outcome, error) { return f(ctx, r) }

// StackRunner runs configurations on a Stack: restart with the
// configuration, reset the application's state when Reset is set, measure.
type StackRunner struct {
	Stack    Stack
	Conns    int
	Duration time.Duration
	Warmup   time.Duration
	// Reset restores the application's state before every measurement.
	Reset bool
}

// Run restarts the stack with r's configuration and measures it.
func (s StackRunner) Run(ctx context.Context, r Run) (Outcome, error) {
	if err := s.Stack.Apply(ctx, r.Config.Config); err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		return Outcome{Failed: "failed to start: " + err.Error()}, nil
	}
	if s.Reset {
		if err := s.Stack.Reset(ctx); err != nil {
			return Outcome{}, fmt.Errorf("resetting the application's state: %w", err)
		}
	}
	b, err := s.Stack.Measure(ctx, s.Conns, s.Duration, s.Warmup)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		return Outcome{Failed: err.Error()}, nil
	}
	return Outcome{Bench: b}, nil
}

// Session is an interleaved comparison in progress.
type Session struct {
	configs []Config
	runner  Runner
	// DropFailed stops measuring a configuration after its first failure
	// (compare); otherwise it is tried again every round and the failed
	// round is left out of its pairs (the tune's holdout).
	DropFailed bool
	// OnRun, when set, is called after every run.
	OnRun func(Run, Outcome)
	// outcomes[i][r] is configuration i's outcome in round r; nil when it
	// was not measured in that round.
	outcomes [][]*Outcome
	failed   []string
	rounds   int
}

// New starts a session comparing configs (the first is the usual base of
// the ratios) with runner.
func New(configs []Config, runner Runner) *Session {
	return &Session{configs: slices.Clone(configs), runner: runner,
		outcomes: make([][]*Outcome, len(configs)), failed: make([]string, len(configs))}
}

// Rounds is the number of rounds run so far.
func (s *Session) Rounds() int { return s.rounds }

// Order is the order in which round r measures the configurations of
// which (indices into the session's configurations, in their order):
// rotated by one every round, so each comes first equally often.
func Order(r int, which []int) []int {
	out := make([]int, len(which))
	for k := range which {
		out[k] = which[(k+r)%len(which)]
	}
	return out
}

// Round runs one more round of the configurations named by which (nil:
// all), in the rotated order. A configuration dropped after a failure
// (DropFailed) is skipped.
func (s *Session) Round(ctx context.Context, which []int) error {
	if which == nil {
		for i := range s.configs {
			which = append(which, i)
		}
	}
	r := s.rounds
	for i := range s.outcomes {
		s.outcomes[i] = append(s.outcomes[i], nil)
	}
	s.rounds++
	for _, i := range Order(r, which) {
		if s.DropFailed && s.failed[i] != "" {
			continue
		}
		run := Run{Round: r, Index: i, Config: s.configs[i]}
		o, err := s.runner.Run(ctx, run)
		if err != nil {
			return err
		}
		if !o.OK() && o.Failed == "" {
			o.Failed = "no measurement"
		}
		s.outcomes[i][r] = &o
		if o.Failed != "" && s.failed[i] == "" {
			s.failed[i] = o.Failed
		}
		if s.OnRun != nil {
			s.OnRun(run, o)
		}
	}
	return nil
}

// Run runs n rounds of every configuration.
func (s *Session) Run(ctx context.Context, n int) error {
	for range n {
		if err := s.Round(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// Failed is configuration i's first failure, or "".
func (s *Session) Failed(i int) string { return s.failed[i] }

// Outcome is configuration i's outcome in round r; nil when it was not
// measured in that round.
func (s *Session) Outcome(i, r int) *Outcome { return s.outcomes[i][r] }

// Metric picks one figure of a run; values <= 0 count as missing.
type Metric func(*results.Bench) float64

// Throughput is requests per second; P99 the 99th percentile latency.
var (
	Throughput Metric = func(b *results.Bench) float64 { return b.ThroughputRPS }
	P99        Metric = func(b *results.Bench) float64 { return b.Latency.P99Ms }
)

// Values are m of configuration i's successful runs, in round order.
func (s *Session) Values(i int, m Metric) []float64 {
	var out []float64
	for _, o := range s.outcomes[i] {
		if o != nil && o.OK() {
			out = append(out, m(o.Bench))
		}
	}
	return out
}

// Benches are configuration i's successful runs, in round order.
func (s *Session) Benches(i int) []*results.Bench {
	var out []*results.Bench
	for _, o := range s.outcomes[i] {
		if o != nil && o.OK() {
			out = append(out, o.Bench)
		}
	}
	return out
}

// Paired are the values of m for configurations i and j in the rounds in
// which both ran and every metric in ms (m first) is positive for both:
// a[k] and b[k] were measured in the same round.
func (s *Session) Paired(i, j int, ms ...Metric) (a, b []float64) {
	if len(ms) == 0 {
		return nil, nil
	}
	for r := 0; r < s.rounds; r++ {
		oi, oj := s.outcomes[i][r], s.outcomes[j][r]
		if oi == nil || oj == nil || !oi.OK() || !oj.OK() {
			continue
		}
		ok := true
		for _, m := range ms {
			ok = ok && m(oi.Bench) > 0 && m(oj.Bench) > 0
		}
		if ok {
			a, b = append(a, ms[0](oi.Bench)), append(b, ms[0](oj.Bench))
		}
	}
	return a, b
}

// ErrNoPairs means no round measured both configurations.
var ErrNoPairs = errors.New("interleave: no round measured both configurations")

// Ratio is j/i of m over the rounds in which both ran (see Paired), with
// its interval at confidence (stats.PairedRatio). require are further
// metrics a round must have for both to count (the holdout keeps the same
// rounds for throughput and p99).
func (s *Session) Ratio(i, j int, m Metric, confidence float64, require ...Metric) (stats.RatioCI, error) {
	a, b := s.Paired(i, j, append([]Metric{m}, require...)...)
	if len(a) == 0 {
		return stats.RatioCI{}, ErrNoPairs
	}
	return stats.PairedRatio(a, b, confidence)
}

// Sequential is how Extend adds rounds to an undecided comparison.
type Sequential struct {
	// Compare are the decision's options; MinRounds are the rounds
	// already planned, MaxRounds the most that may be run. The per-look
	// confidence follows from their difference (stats.Compare).
	Compare stats.CompareOptions
	// Metric of the decision (Throughput when nil); Require as in Ratio.
	Metric  Metric
	Require []Metric
	// More reports whether the budget allows one more round; nil: yes.
	More func() bool
	// Which configurations an added round measures (nil: all).
	Which []int
}

// Extend adds rounds while the comparison of j against i is undecided
// (stats.NeedMore), MaxRounds is not reached and More allows, and returns
// the last decision with its interval at the per-look confidence. The
// rounds so far count as looked at once: call it after the planned rounds.
func (s *Session) Extend(ctx context.Context, i, j int, q Sequential) (stats.Decision, error) {
	m := q.Metric
	if m == nil {
		m = Throughput
	}
	for {
		a, b := s.Paired(i, j, append([]Metric{m}, q.Require...)...)
		var d stats.Decision
		var err error
		if len(a) > 0 {
			d, err = stats.Compare(a, b, q.Compare)
			if err != nil {
				return d, err
			}
		}
		if len(a) > 0 && d.Verdict != stats.NeedMore {
			return d, nil
		}
		if s.rounds >= q.Compare.MaxRounds || (q.More != nil && !q.More()) {
			return d, nil
		}
		if err := s.Round(ctx, q.Which); err != nil {
			return d, err
		}
	}
}
