package tune

// The capacity objective (Options.Objective "capacity"): what the tune
// recommends is judged by the highest request rate it sustains within the
// SLO in the open model (package capacity), not by closed-model
// throughput.
//
// What it changes, and what it does not:
//   - the search (knee, pool size, categorical race) still measures the
//     closed model at the workload's concurrency and scores throughput:
//     a capacity search per candidate (~8-10 open-model steps) would leave a
//     15-minute WordPress tune three or four candidates. Throughput at
//     saturation is the service rate that bounds capacity, so it ranks
//     pool sizes and CPU savings the same way on pages whose latency is
//     service time plus queueing; the SLO is not applied as a closed-model
//     p99 limit (at 50 connections the closed model queues by design).
//   - after the holdout, the start and the recommendation each get a
//     capacity search (phase "capacity", one trial per step) from half
//     their holdout throughput, and the result carries both with the
//     ratio (results.TuneCapacity); a recommendation whose capacity is
//     below the start's is flagged, as a slower holdout is.
//   - the time budget: the searches' time is reserved from the start of
//     the search phase (capacityReserve: 2 configurations × 10 steps of the
//     step length at the start's throughput, at most 40% of the budget),
//     the curve phase is left out, and each search gets what is left when
//     it starts (the start leaves half the reserve to the recommendation).
//     Only new steps are checked against the clock, so a resumed tune
//     replays its stored steps and asks for the same ones.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/decide/capacity"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
	"github.com/phptune/phptune/internal/model/store"
)

// ObjectiveCapacity is the capacity objective.
const ObjectiveCapacity = "capacity"

// PhaseCapacity is a step of the capacity searches after the holdout.
const PhaseCapacity = "capacity"

// RateStack is a stack that can also be loaded in the open model, which
// the capacity objective needs (labstack.Stack and sim.Stack are).
type RateStack interface {
	MeasureRate(ctx context.Context, p capacity.Plan) (*results.Bench, error)
}

// capacityStepsPerSearch is the estimate the time reserve rests on: three
// ramp steps, three of bisection, two of confirmation and two more for a
// tie or a turned verdict, as the searches on the simulated and the real
// stacks take (a real io search took 9 and 10).
const capacityStepsPerSearch = 10

// capacitySLO parses the capacity objective's SLO, with the tune's error
// limit when the SLO has no errors term.
func (o *Options) capacitySLO() (capacity.SLO, capacity.ErrorLimit, error) {
	slo, err := capacity.ParseSLO(o.SLO)
	if err != nil {
		return slo, capacity.ErrorLimit{}, fmt.Errorf("objective capacity: slo %q: %w", o.SLO, err)
	}
	return slo, capacity.ErrorLimit{Rate: o.Limits.MaxErrorRate}, nil
}

// searchObjective is what the strategy scores: capacity tunes search on
// closed-model throughput (see the top of this file).
func (o *Options) searchObjective() string {
	if o.Objective == ObjectiveCapacity {
		return "throughput"
	}
	return o.Objective
}

// planCapacityReserve sets the time kept for the capacity searches, from
// the start's throughput in the drift trials: 2 configurations ×
// capacityStepsPerSearch steps of the step length at half that rate, plus
// a restart each, at most 40% of the time budget.
func (s *session) planCapacityReserve(driftRPS []float64) {
	o := s.opt
	if o.Objective != ObjectiveCapacity || o.TimeBudget <= 0 {
		return
	}
	slo, _, err := o.capacitySLO()
	if err != nil {
		return
	}
	rate := 1.0
	if len(driftRPS) > 0 {
		rate = math.Max(1, stats.Mean(driftRPS)/2)
	}
	w, d, _ := capacity.StepLength(slo, rate)
	step := w + d + time.Second
	r := 2 * (capacityStepsPerSearch*step + 5*time.Second)
	s.capReserve = min(r, o.TimeBudget*2/5)
	s.note("capacity objective: %s of the %s time budget kept for the two capacity searches (%d steps each of %s warm-up + %s measured at the start's rate), the rest for the search and the holdout",
		s.capReserve.Round(time.Second), o.TimeBudget, capacityStepsPerSearch, w, d)
}

// capacityPhase runs the capacity searches of start and recommended,
// each from half its holdout throughput, in fresh processes, every step a
// trial. It returns the verdict for the result.
func (s *session) capacityPhase(ctx context.Context, start, rec knob.Config, startRPS, recRPS float64) (*results.TuneCapacity, error) {
	o := s.opt
	slo, errs, err := o.capacitySLO()
	if err != nil {
		return nil, err
	}
	rs, ok := s.t.Stack.(RateStack)
	if !ok {
		return nil, fmt.Errorf("objective capacity: the stack cannot be loaded in the open model")
	}
	reserve := s.capReserve
	s.capReserve = 0 // the time kept is now the searches'
	tc := &results.TuneCapacity{SLO: slo.String(), BudgetS: reserve.Seconds()}
	type which struct {
		label string
		cfg   knob.Config
		rps   float64
	}
	todo := []which{{"start", start, startRPS}}
	if !maps.Equal(start, rec) {
		todo = append(todo, which{"recommended", rec, recRPS})
	}
	for i, wc := range todo {
		// Fresh processes, as the holdout's runs.
		s.applied = nil
		// The start's search leaves the recommendation's half of the
		// reserve. The budget is checked by the runner for new steps
		// only, so a resumed tune replays its stored steps whatever the
		// clock says and asks for the same ones.
		var keep time.Duration
		if i == 0 && len(todo) == 2 {
			keep = reserve / 2
		}
		startRate := math.Max(1, math.Round(wc.rps/2))
		co := capacity.Options{SLO: slo, Errors: errs, StartRate: startRate,
			StartFrom: fmt.Sprintf("half the %s configuration's mean holdout throughput (%.1f rps)", wc.label, wc.rps)}
		if wc.rps <= 0 {
			co.StartRate, co.StartFrom = 1, "no holdout throughput: from 1 rps"
		}
		if err := co.Validate(); err != nil {
			s.warn("no capacity search of the %s configuration: %v", wc.label, err)
			continue
		}
		began := s.t.now()
		runner := capacity.RunnerFunc(func(ctx context.Context, p capacity.Plan) (*results.Bench, error) {
			return s.rateTrial(ctx, rs, wc.label, wc.cfg, p, slo, errs, keep)
		})
		c, err := capacity.Search(ctx, runner, co)
		if err != nil {
			return nil, err
		}
		c.Label, c.StartedAt, c.WallS = wc.label, began.UTC(), s.t.now().Sub(began).Seconds()
		c.App, c.Workload, c.Config = o.App, o.Workload, wc.cfg.Clone()
		c.ID = o.ID + "-capacity-" + wc.label
		if wc.label == "start" {
			tc.Start = c
		} else {
			tc.Recommended = c
		}
		for _, w := range c.Warnings {
			s.warn("%s capacity: %s", wc.label, w)
		}
	}
	if tc.Recommended == nil && tc.Start != nil && maps.Equal(start, rec) {
		tc.Ratio = 1
	}
	if st, rc := tc.Start, tc.Recommended; st != nil && rc != nil && st.CapacityRPS > 0 {
		tc.Ratio = rc.CapacityRPS / st.CapacityRPS
		if st.FirstFailRPS > 0 {
			tc.RatioLow = rc.CapacityRPS / st.FirstFailRPS
		}
		if rc.FirstFailRPS > 0 {
			tc.RatioHigh = rc.FirstFailRPS / st.CapacityRPS
		}
		if rc.FirstFailRPS > 0 && rc.FirstFailRPS <= st.CapacityRPS {
			s.warn("the recommendation sustained less than the start at %s (%g rps failed, the start passed %g): keep the start", tc.SLO, rc.FirstFailRPS, st.CapacityRPS)
		}
	}
	return tc, nil
}

// rateTrial runs one capacity step of cfg as a trial (or takes it from the
// database on resume: the search is deterministic, so it asks for the same
// steps again), restarting the stack when it does not run cfg.
func (s *session) rateTrial(ctx context.Context, rs RateStack, label string, cfg knob.Config, p capacity.Plan, slo capacity.SLO, errs capacity.ErrorLimit, keep time.Duration) (*results.Bench, error) {
	n := len(s.trials) + 1
	rate := strconv.FormatFloat(p.Rate, 'f', -1, 64)
	k := key(PhaseCapacity+"@"+rate, p.Connections, cfg)
	if st, ok := s.stored[n]; ok {
		if st.Key != k {
			return nil, fmt.Errorf("%w: trial %d was %s (%s), now %s; start a new run", ErrResumeMismatch, n, st.Label, st.Key, k)
		}
		s.trials = append(s.trials, st.Trial)
		s.reportRate(label, st.Trial, true)
		return st.Trial.Bench, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if need := p.Settle + p.Warmup + p.Duration + p.Drain; s.opt.TimeBudget > 0 && s.left()-keep < need {
		return nil, fmt.Errorf("%w: the tune's time budget has %s left for the %s capacity search, a step takes up to %s", capacity.ErrBudget,
			max(0, s.left()-keep).Round(time.Second), label, need)
	}
	begin := s.t.now()
	tr := results.Trial{N: n, Phase: PhaseCapacity, Config: cfg.Clone(), Connections: p.Connections, Status: StatusOK}
	if s.applied == nil || !maps.Equal(s.applied, cfg) {
		if err := s.t.Stack.Apply(ctx, cfg); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("the %s configuration did not start for its capacity search: %w", label, err)
		}
		s.applied = cfg.Clone()
	}
	b, err := rs.MeasureRate(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("capacity step at %s rps of the %s configuration: %w", rate, label, err)
	}
	tr.Bench = b
	if why := slo.Check(b, errs); len(why) > 0 {
		tr.Status, tr.FailReason = StatusViolates, strings.Join(why, "; ")
	}
	end := s.t.now()
	if err := s.t.Store.SaveTrial(ctx, s.opt.ID, store.Trial{Trial: tr, Key: k, Label: fmt.Sprintf("%s %s rps", label, rate), StartedAt: begin, FinishedAt: end}); err != nil {
		return nil, err
	}
	s.measured++
	s.trials = append(s.trials, tr)
	s.reportRate(label, tr, false)
	return b, nil
}

func (s *session) reportRate(label string, tr results.Trial, reused bool) {
	if s.t.Progress == nil {
		return
	}
	p := Progress{RunID: s.opt.ID, Phase: PhaseCapacity, Trial: len(s.trials), Total: max(s.total, len(s.trials)),
		Label: fmt.Sprintf("%s at %s rps", label, strconv.FormatFloat(rateOf(tr.Bench), 'f', -1, 64)), Reused: reused, Status: tr.Status,
		BestRPS: s.best, BestLabel: s.bestLbl, Elapsed: s.elapsed(), Left: s.left()}
	if tr.Bench != nil {
		p.RPS = tr.Bench.ThroughputRPS
	}
	s.t.Progress(p)
}

func rateOf(b *results.Bench) float64 {
	if b == nil {
		return 0
	}
	return b.RateAskedRPS
}
