package tune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/watch/errlog"
)

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
		p.LogErrors = errlog.Headline(tr.Bench.ServerErrors)
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

// spareTrials is what the time budget left affords beyond planned trials,
// two thirds of it (the rest absorbs a phase that takes more trials or
// time than planned): the search's race spends it on more rounds for its
// undecided challengers. 0 without a time budget or a measured trial.
func (s *session) spareTrials(planned int) int {
	if s.opt.TimeBudget <= 0 || s.perTrial == 0 {
		return 0
	}
	afford := int((s.left() - s.capReserve) / s.perTrial)
	return max(0, (afford-planned)*2/3)
}

// budgetLeftFor reports whether n more trials fit in the time budget.
func (s *session) budgetLeftFor(n int) bool {
	if s.opt.TimeBudget <= 0 || s.perTrial == 0 {
		return true
	}
	return s.left()-s.capReserve >= time.Duration(n)*s.perTrial
}
