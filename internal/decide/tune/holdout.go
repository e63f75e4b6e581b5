package tune

import (
	"context"
	"fmt"

	"github.com/phptune/phptune/internal/decide/interleave"
	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

// holdoutResult is what the holdout measured.
type holdoutResult struct {
	// Paired rounds of start and recommended (both ran, positive
	// throughput and p99).
	sRPS, rRPS, sP99, rP99 []float64
	// after is the start's throughput in the holdout, for the drift check.
	after      []float64
	recBenches []*results.Bench
	baselines  []results.Baseline
	// confidence of the start/recommended intervals: 0.95, or the
	// per-look confidence when the holdout could add rounds, up to
	// maxRounds (session.holdoutRounds).
	confidence float64
	maxRounds  int
	// statistic decided the verdict (search.StatThroughput, StatCPU or
	// StatCPUSpeed); cpu is start's ÷ recommended's stack CPU per request
	// on the CPU statistic that decided (at the machine's speed when it
	// was StatCPUSpeed), rawCPU the same without the speed probe.
	statistic          string
	cpu, rawCPU        stats.RatioCI
	startCPU, recCPU   float64 // mean stack CPU-seconds per request
	ceiling, ceilShare float64 // recommended's stack ceiling, its share
}

// speed is a run's requests per stack CPU-second (1 ÷ CPU per request):
// steady under steal, which /proc does not charge to processes.
func speed(cores int) interleave.Metric {
	return func(b *results.Bench) float64 {
		u, ok := search.CPUUseOf(b, cores)
		if !ok {
			return 0
		}
		return 1 / u.StackCPUPerReq
	}
}

// speedAtProbe is a run's requests per unit of the machine-speed probe's
// work (1 ÷ search.CPUUse.CPUAtSpeed): its speed at a common machine speed.
func speedAtProbe(cores int) interleave.Metric {
	return func(b *results.Bench) float64 {
		u, ok := search.CPUUseOf(b, cores)
		if !ok || u.CPUAtSpeed() <= 0 {
			return 0
		}
		return 1 / u.CPUAtSpeed()
	}
}

// probed says whether every run of start and recommended so far has a
// machine-speed probe reading.
func probed(sess *interleave.Session, cores int) bool {
	for r := 0; r < sess.Rounds(); r++ {
		for c := 0; c < 2; c++ {
			o := sess.Outcome(c, r)
			if o == nil || !o.OK() {
				continue
			}
			if u, ok := search.CPUUseOf(o.Bench, cores); !ok || u.SpeedProbeMs <= 0 {
				return false
			}
		}
	}
	return true
}

// cpuBound says whether start and recommended were both CPU-bound (90% of
// their stack ceiling) in more than half of the rounds that ran both.
func cpuBound(sess *interleave.Session, cores int) bool {
	n, bound := 0, 0
	for r := 0; r < sess.Rounds(); r++ {
		so, ro := sess.Outcome(0, r), sess.Outcome(1, r)
		if so == nil || ro == nil || !so.OK() || !ro.OK() {
			continue
		}
		n++
		us, ok1 := search.CPUUseOf(so.Bench, cores)
		ur, ok2 := search.CPUUseOf(ro.Bench, cores)
		if ok1 && ok2 && us.CPUBound() && ur.CPUBound() {
			bound++
		}
	}
	return n > 0 && 2*bound > n
}

// holdout re-measures start and recommended (and the baselines planned
// for it, when the time budget allows) interleaved in fresh processes
// (package interleave), each run a trial of the tune. When the interval of
// recommended/start is undecided after the planned rounds, rounds of the
// two are added while the time budget allows, up to the rounds granted as
// it starts (session.holdoutRounds), each look at stats.Compare's per-look
// confidence for that many looks.
func (s *session) holdout(ctx context.Context, start, rec knob.Config, baselines []results.Baseline, baselineCfgs []knob.Config) (*holdoutResult, error) {
	o := s.opt
	configs := []interleave.Config{{Label: "start", Config: start}, {Label: "recommended", Config: rec}}
	measured := s.baselinesInHoldout(baselines, baselineCfgs)
	for _, i := range measured {
		configs = append(configs, interleave.Config{Label: baselines[i].Name, Config: baselineCfgs[i]})
	}
	sess := interleave.New(configs, interleave.RunnerFunc(s.holdoutTrial))
	maxRounds := s.holdoutRounds(len(configs))
	if err := sess.Run(ctx, o.HoldoutRounds); err != nil {
		return nil, err
	}
	statistic, metric := holdoutStatistic(sess, o.Cores)
	d, budgetStopped, err := s.extendHoldout(ctx, sess, metric, maxRounds)
	if err != nil {
		return nil, err
	}
	h := &holdoutResult{baselines: baselines, confidence: 0.95, statistic: statistic, maxRounds: maxRounds}
	if d.CI.Confidence > 0 {
		h.confidence = d.CI.Confidence
	}
	if added := sess.Rounds() - o.HoldoutRounds; added > 0 {
		s.note("the holdout's interval was undecided after %d rounds: %d more rounds of start and recommended (intervals at %.1f%% per look, for up to %d looks)",
			o.HoldoutRounds, added, 100*h.confidence, maxRounds-o.HoldoutRounds+1)
	}
	if d.Verdict == stats.NeedMore && budgetStopped && sess.Rounds() < maxRounds {
		s.warn("the holdout's interval still includes 1 after %d rounds and the time budget allowed no more", sess.Rounds())
	}
	for r := 0; r < sess.Rounds(); r++ {
		so, ro := sess.Outcome(0, r), sess.Outcome(1, r)
		if so == nil || ro == nil || !so.OK() || !ro.OK() || so.Bench.ThroughputRPS <= 0 || ro.Bench.ThroughputRPS <= 0 ||
			so.Bench.Latency.P99Ms <= 0 || ro.Bench.Latency.P99Ms <= 0 {
			s.warn("holdout round %d is incomplete (a run failed); it is left out of the ratios", r+1)
		}
	}
	h.readPairs(sess, o.Cores)
	baselineRatios(sess, baselines, measured)
	return h, nil
}

// baselinesInHoldout returns the indices of the baselines the holdout
// measures beside start and recommended: those that can be measured,
// when the time budget has room for them all (or, on resume, when the
// first session measured them). Those it leaves out are marked
// NotMeasured.
func (s *session) baselinesInHoldout(baselines []results.Baseline, baselineCfgs []knob.Config) []int {
	o := s.opt
	var measured []int // indices into baselines of the ones in the session
	for i, b := range baselines {
		if b.NotMeasured == "" {
			measured = append(measured, i)
		}
	}
	if len(measured) == 0 {
		return nil
	}
	// On resume the stored trials say what the first session chose:
	// with baselines, the third holdout trial is the first of them.
	include := false
	if st, ok := s.stored[len(s.trials)+3]; ok {
		include = st.Key == key(PhaseHoldout, o.Conns, baselineCfgs[measured[0]])
	} else {
		include = s.budgetLeftFor((2 + len(measured)) * o.HoldoutRounds)
	}
	if include {
		return measured
	}
	for _, i := range measured {
		baselines[i].NotMeasured = fmt.Sprintf("the time budget left no room for its %d holdout trials", o.HoldoutRounds)
	}
	s.warn("the time budget left no room to measure the baselines (%d trials) in the holdout", len(measured)*o.HoldoutRounds)
	return nil
}

// holdoutTrial runs one configuration of one holdout round as a trial.
func (s *session) holdoutTrial(ctx context.Context, r interleave.Run) (interleave.Outcome, error) {
	tr, err := s.trial(ctx, search.Candidate{Phase: PhaseHoldout, Label: fmt.Sprintf("%s r%d", r.Label, r.Round+1), Config: r.Config.Config, Conns: s.opt.Conns})
	if err != nil {
		return interleave.Outcome{}, err
	}
	if tr.Bench == nil {
		return interleave.Outcome{Failed: tr.FailReason}, nil
	}
	return interleave.Outcome{Bench: tr.Bench}, nil
}

// holdoutStatistic is the statistic the holdout's verdict rests on, and
// its metric. On a CPU-bound page it is stack CPU per request, which
// steal does not move (at the machine's speed when the runs probed it);
// throughput and p99 are still shown.
func holdoutStatistic(sess *interleave.Session, cores int) (string, interleave.Metric) {
	if !cpuBound(sess, cores) {
		return search.StatThroughput, interleave.Throughput
	}
	if probed(sess, cores) {
		return search.StatCPUSpeed, speedAtProbe(cores)
	}
	return search.StatCPU, speed(cores)
}

// extendHoldout adds rounds of start and recommended while their
// interval on metric is undecided, up to maxRounds and as the time
// budget allows; budgetStopped says the budget ended it.
func (s *session) extendHoldout(ctx context.Context, sess *interleave.Session, metric interleave.Metric, maxRounds int) (d stats.Decision, budgetStopped bool, err error) {
	o := s.opt
	cmp := stats.CompareOptions{Confidence: 0.95, MinRounds: o.HoldoutRounds, MaxRounds: maxRounds, Equivalence: stats.DefaultCompare.Equivalence}
	d, err = sess.Extend(ctx, 0, 1, interleave.Sequential{
		Compare: cmp,
		Metric:  metric,
		Require: []interleave.Metric{interleave.P99, interleave.Throughput},
		Which:   []int{0, 1},
		More: func() bool {
			// On resume, a stored holdout trial next means the first
			// session added a round here.
			if st, ok := s.stored[len(s.trials)+1]; ok {
				return st.Phase == PhaseHoldout
			}
			ok := s.budgetLeftFor(2 + s.curveReserve())
			budgetStopped = !ok
			return ok
		},
	})
	return d, budgetStopped, err
}

// readPairs takes start's and recommended's paired figures from the
// holdout: throughput, p99, stack CPU per request and recommended's
// stack ceiling. The statistic falls back to one the pairs can carry.
func (h *holdoutResult) readPairs(sess *interleave.Session, cores int) {
	h.sRPS, h.rRPS = sess.Paired(0, 1, interleave.Throughput, interleave.P99)
	h.sP99, h.rP99 = sess.Paired(0, 1, interleave.P99, interleave.Throughput)
	for _, x := range sess.Values(0, interleave.Throughput) {
		if x > 0 {
			h.after = append(h.after, x)
		}
	}
	h.recBenches = sess.Benches(1)
	sp := speed(cores)
	if ci, err := sess.Ratio(0, 1, sp, h.confidence, interleave.Throughput, interleave.P99); err == nil {
		h.cpu, h.rawCPU = ci, ci
		ss, rs := sess.Paired(0, 1, sp, interleave.Throughput, interleave.P99)
		h.startCPU, h.recCPU = meanInverse(ss), meanInverse(rs)
	} else if search.IsCPU(h.statistic) {
		h.statistic = search.StatThroughput // no CPU pairs after all
	}
	if h.statistic == search.StatCPUSpeed {
		if ci, err := sess.Ratio(0, 1, speedAtProbe(cores), h.confidence, interleave.Throughput, interleave.P99); err == nil {
			h.cpu = ci
		} else {
			h.statistic = search.StatCPU // no probed pairs after all
		}
	}
	var ceil, share []float64
	for _, b := range h.recBenches {
		if u, ok := search.CPUUseOf(b, cores); ok && u.StackCeiling() > 0 {
			ceil = append(ceil, u.StackCeiling())
			share = append(share, b.ThroughputRPS/u.StackCeiling())
		}
	}
	if len(ceil) > 0 {
		h.ceiling, h.ceilShare = stats.Mean(ceil), stats.Mean(share)
	}
}

// baselineRatios writes each measured baseline's throughput and p99
// against recommended (the holdout's configurations 2 and on, in the
// order of measured).
func baselineRatios(sess *interleave.Session, baselines []results.Baseline, measured []int) {
	for k, i := range measured {
		bi := 2 + k
		b := &baselines[i]
		ci, err := sess.Ratio(bi, 1, interleave.Throughput, 0.95, interleave.P99)
		if err != nil {
			b.NotMeasured = "failed in the holdout: " + firstLine(sess.Failed(bi))
			continue
		}
		b.Rounds, b.Ratio, b.CILow, b.CIHigh, b.Confidence = ci.N, ci.Ratio, ci.Low, ci.High, ci.Confidence
		if p, err := sess.Ratio(bi, 1, interleave.P99, 0.95, interleave.Throughput); err == nil {
			b.P99Ratio = p.Ratio
		}
		b.BaselineRPS = stats.Mean(sess.Values(bi, interleave.Throughput))
	}
}

// holdoutRounds is the most rounds the holdout of n configurations may
// grow to, decided once as it starts, before any look (the per-look
// confidence depends on it): without a time budget HoldoutMaxRounds;
// with one, the planned rounds and as many more as the budget left then
// affords after them and the curve, at least twice the planned rounds
// (the budget still stops it, as the race's rounds may have used the
// time) and at most HoldoutMaxRounds. Added rounds measure start and
// recommended only. The grant is stored with the run, so that a resumed
// holdout looks as often.
func (s *session) holdoutRounds(n int) int {
	o := s.opt
	if o.HoldoutRoundsGranted != nil {
		return *o.HoldoutRoundsGranted
	}
	rounds := o.HoldoutMaxRounds
	if o.TimeBudget > 0 && s.perTrial > 0 {
		afford := int((s.left() - s.capReserve) / s.perTrial)
		extra := max(0, afford-n*o.HoldoutRounds-s.curveReserve()) / 2
		rounds = min(o.HoldoutMaxRounds, max(2*o.HoldoutRounds, o.HoldoutRounds+extra))
	}
	if err := s.t.Store.SetOption(context.Background(), o.ID, "holdout_rounds_granted", rounds); err != nil {
		s.note("the holdout's rounds could not be stored (%v); a resumed run decides them again", err)
	}
	s.opt.HoldoutRoundsGranted = &rounds
	return rounds
}

// meanInverse is the mean of 1/x: CPU-seconds per request from speeds.
func meanInverse(xs []float64) float64 {
	inv := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			inv = append(inv, 1/x)
		}
	}
	return stats.Mean(inv)
}
