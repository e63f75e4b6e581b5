package search

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

// Statistics a categorical comparison can be decided on (Decision.Statistic).
// The names are results' (a stored holdout's and verdict's statistic).
const (
	StatThroughput = results.StatThroughput
	StatP99        = "p99"
	StatCPU        = results.StatCPU
	// StatCPUSpeed is stack CPU per request divided by the machine-speed
	// probe's reading of the same run (package speedprobe): CPU per request
	// at a common machine speed, which neighbours that slow the CPU move
	// less than the raw figure.
	StatCPUSpeed = results.StatCPUSpeed
)

// IsCPU says whether a statistic is one of the CPU-per-request ones.
func IsCPU(stat string) bool { return stat == StatCPU || stat == StatCPUSpeed }

// run is one measured configuration of the categorical rounds, reduced to
// what a comparison looks at.
type run struct {
	score    float64 // the objective's score, higher is better
	rps, p99 float64
	cpu      float64 // stack CPU-seconds per request; 0 unknown
	probe    float64 // the machine-speed probe's milliseconds; 0 unknown
	bound    bool    // CPU-bound (CPUUse.CPUBound)
	steal    float64 // percent
}

func (d *Domain) runOf(o Outcome) (run, string) {
	s, why := d.usable(o)
	if why != "" {
		return run{}, why
	}
	r := run{score: s, rps: o.Bench.ThroughputRPS, p99: o.Bench.Latency.P99Ms, steal: steal(o.Bench)}
	if u, ok := CPUUseOf(o.Bench, d.opt.Cores); ok {
		r.cpu, r.bound, r.probe = u.StackCPUPerReq, u.CPUBound(), u.SpeedProbeMs
	}
	return r, ""
}

// arm is one challenger in the categorical race: its paired rounds with the
// incumbent (inc[i] and own[i] measured in round i).
type arm struct {
	ch       Challenge
	cfg      knob.Config
	inc, own []run
	done     bool
	dec      Decision
	dropped  string // broke a limit: rejected outright
	why      string // why it left the race undecided
	halved   bool   // left undecided by the halving (it may come back, see revive)
}

// statistic is what the pair is decided on: stack CPU per request when
// the objective is throughput, both runs of the pair have CPU figures in
// every round and both were CPU-bound in more than half of the rounds (on
// a saturated CPU-bound page throughput = available cores ÷ CPU per
// request, and CPU per request does not move with steal, which /proc does
// not charge); otherwise the objective's own score. CPU per request is
// read at the machine's speed (StatCPUSpeed) when every run of the pair
// has a speed-probe reading.
func (a *arm) statistic(objective string) string {
	if objective == "latency" {
		return StatP99
	}
	both, probed := 0, true
	for i := range a.inc {
		if a.inc[i].cpu <= 0 || a.own[i].cpu <= 0 {
			return StatThroughput
		}
		if a.inc[i].bound && a.own[i].bound {
			both++
		}
		probed = probed && a.inc[i].probe > 0 && a.own[i].probe > 0
	}
	if len(a.inc) > 0 && 2*both > len(a.inc) {
		if probed {
			return StatCPUSpeed
		}
		return StatCPU
	}
	return StatThroughput
}

func (a *arm) boundRounds() int {
	n := 0
	for i := range a.inc {
		if a.inc[i].bound && a.own[i].bound {
			n++
		}
	}
	return n
}

// pair is the arm's rounds on a statistic, oriented so that B/A > 1 means
// the challenger is better (for CPU: the incumbent's CPU per request over
// the challenger's), except p99 for the guard, which is challenger/incumbent.
func (a *arm) pair(stat string) stats.Pair {
	var p stats.Pair
	for i := range a.inc {
		x, y := a.inc[i], a.own[i]
		switch stat {
		case StatCPU:
			p.A, p.B = append(p.A, 1/x.cpu), append(p.B, 1/y.cpu)
		case StatCPUSpeed:
			p.A, p.B = append(p.A, x.probe/x.cpu), append(p.B, y.probe/y.cpu)
		case "rps":
			p.A, p.B = append(p.A, x.rps), append(p.B, y.rps)
		case "p99 guard":
			p.A, p.B = append(p.A, x.p99), append(p.B, y.p99)
		default:
			p.A, p.B = append(p.A, x.score), append(p.B, y.score)
		}
	}
	return p
}

// keepRacing is how many of n undecided challengers go on into the round
// (from 0) after spending spent of budget trials: all of them in the first
// round, then the top half (sequential halving), fewer when the budget
// could not otherwise give the leader minRounds rounds.
func keepRacing(n, round, spent, budget, minRounds int) int {
	if round == 0 || n <= 1 {
		return n
	}
	keep := (n + 1) / 2
	for keep > 1 && spent+1+keep+2*max(0, minRounds-round-1) > budget {
		keep--
	}
	return keep
}

// raceRounds is the most rounds the leader of k challengers gets within
// budget trials (each round is the incumbent and the challengers still in).
func raceRounds(k, budget, minRounds int) int {
	spent, r, n := 0, 0, k
	for n > 0 {
		n = keepRacing(n, r, spent, budget, minRounds)
		if spent+1+n > budget {
			break
		}
		spent += 1 + n
		r++
	}
	return r
}

// categorical races the challenges against the incumbent.
//
// Each round measures the incumbent and the challengers still in the race,
// interleaved, the order rotated each round. After every round each
// challenger is compared with the incumbent on its statistic (see
// arm.statistic), the spread of the log ratios pooled over every
// challenger decided on the same statistic. Error control:
//   - repeated looks: each look is held to alpha/looks^0.7 (Pocock-like,
//     as stats.Compare does), looks being the rounds the leader can get;
//   - the family: Holm's step-down over the k challengers measured, so the
//     chance of adopting any change that does nothing stays at alpha;
//   - one-sided: adopting rests on the interval's lower bound alone (and
//     rejecting on its upper), so intervals are two-sided at 1 - 2×level,
//     each bound one-sided at 1 - level; "no difference" is then the two
//     one-sided tests' equivalence within the margin.
//
// Racing (sequential halving): after the first round only the better half
// of the undecided challengers goes on, and a challenger whose interval at
// the look's level says it cannot beat the incumbent by more than the
// equivalence margin leaves the race ("cannot win"). The trial budget is
// CategoricalTrials plus what Spare grants (the time budget's spare: more
// rounds for the undecided, never more challengers), within what
// SearchTrials leaves. When every challenger still in has been decided and
// that budget affords another round, the ones the halving left undecided
// come back (see revive): the halving orders who is measured first, it
// does not decide; their rounds stay within the race's MaxRounds looks, so
// the looks' correction holds for them as planned.
//
// A pair decided on throughput whose run (either one) had more than
// StealLimit steal is measured again, both configurations, and the calmer
// pair kept; a pair decided on CPU per request needs no re-run.
func (d *Domain) categorical(measure func([]Candidate) []Outcome, inc knob.Config) {
	o := d.opt
	arms := d.challengers(inc)
	cmp := o.Compare
	budget := d.raceBudget(len(arms))
	if cmp.MaxRounds == 0 {
		cmp.MaxRounds = max(cmp.MinRounds, raceRounds(len(arms), budget, cmp.MinRounds))
	}
	looks := max(1, cmp.MaxRounds-cmp.MinRounds+1)
	alpha := stats.SequentialAlpha(1-cmp.Confidence, looks)
	spent := 0
	for round := 0; round < cmp.MaxRounds; round++ {
		active, ok := d.lineUp(arms, round, spent, budget, cmp.MinRounds)
		if !ok {
			break
		}
		if spent+1+len(active) > budget {
			for _, a := range active {
				a.done = true
				a.why = fmt.Sprintf("the trial budget (%d) ran out after %d rounds", budget, len(a.inc))
			}
			break
		}
		incRun, outs := d.round(measure, inc, active, round, "")
		spent += 1 + len(active)
		spent += d.againOnSteal(measure, inc, active, incRun, outs, round, budget-spent)
		for i, a := range active {
			if outs[i] != nil && incRun != nil {
				a.inc, a.own = append(a.inc, *incRun), append(a.own, *outs[i])
			}
		}
		d.decide(arms, cmp, alpha)
	}
	d.finish(arms, inc, cmp)
}

// challengers turns the challenges into the race's arms, each the
// incumbent with its challenge applied. A challenge that is invalid,
// changes nothing or would not fit the memory budget is recorded as
// skipped instead.
func (d *Domain) challengers(inc knob.Config) []*arm {
	var arms []*arm
	for _, ch := range d.opt.Challenges {
		dec := Decision{Name: ch.Name}
		cfg, err := challenged(inc, ch)
		dec.Changes = knob.Diff(inc, cfg)
		switch {
		case err != nil:
			dec.Skipped = "invalid: " + err.Error()
		case len(dec.Changes) == 0:
			dec.Skipped = "already the incumbent's setting"
		case !d.fits(cfg):
			dec.Skipped = fmt.Sprintf("predicted memory %s exceeds the budget", human(d.mem.Predict(cfg)))
		}
		if dec.Skipped != "" {
			d.rec.Decisions = append(d.rec.Decisions, dec)
			continue
		}
		arms = append(arms, &arm{ch: ch, cfg: cfg, dec: dec})
	}
	return arms
}

// raceBudget is the race's trial budget for n challengers:
// CategoricalTrials and what Spare grants, within what SearchTrials
// leaves.
func (d *Domain) raceBudget(n int) int {
	o := d.opt
	budget := o.CategoricalTrials
	if o.SearchTrials > 0 {
		budget = min(budget, o.SearchTrials-d.co.lastID)
	}
	if o.Spare != nil && n > 0 {
		extra := max(0, o.Spare(budget))
		if o.SearchTrials > 0 {
			extra = min(extra, o.SearchTrials-d.co.lastID-budget)
		}
		budget += extra
	}
	return budget
}

// lineUp returns the challengers a round measures: those still in the
// race (or, when none is, those revive brings back), the most promising
// first, the halving's better part of them. ok is false when none is
// left to measure.
func (d *Domain) lineUp(arms []*arm, round, spent, budget, minRounds int) (active []*arm, ok bool) {
	revived := false
	for _, a := range arms {
		if !a.done {
			active = append(active, a)
		}
	}
	if len(active) == 0 {
		if active = revive(arms, spent, budget); len(active) == 0 {
			return nil, false
		}
		revived = true
	}
	if round > 0 {
		// The most promising first: the race keeps measuring them.
		slices.SortStableFunc(active, func(x, y *arm) int {
			switch rx, ry := x.dec.CI.Ratio, y.dec.CI.Ratio; {
			case rx > ry:
				return -1
			case rx < ry:
				return 1
			}
			return 0
		})
	}
	keep := keepRacing(len(active), round, spent, budget, minRounds)
	for _, a := range active[keep:] {
		a.done, a.halved = true, true
		a.why = fmt.Sprintf("left the race after %d rounds: not in the better half of the challengers", len(a.inc))
	}
	active = active[:keep]
	if revived {
		var names []string
		for _, a := range active {
			names = append(names, a.ch.Name)
		}
		d.note("the race decided its leaders after %d rounds with %d of its %d trials left: %s, left undecided by the halving, came back", round, budget-spent, budget, strings.Join(names, ", "))
	}
	return active, true
}

// againOnSteal measures again, both configurations, the pairs of a round
// (incRun and outs, of active) that are decided on throughput and had
// more than StealLimit steal in either run, when the trials left afford
// it, and keeps the calmer pair: it is recorded in its arm, and its outs
// entry set to nil. It returns the trials it ran.
func (d *Domain) againOnSteal(measure func([]Candidate) []Outcome, inc knob.Config, active []*arm, incRun *run, outs []*run, round, left int) int {
	var again []*arm
	for i, a := range active {
		if outs[i] == nil || incRun == nil {
			continue
		}
		trial := &arm{inc: append(slices.Clone(a.inc), *incRun), own: append(slices.Clone(a.own), *outs[i])}
		if math.Max(incRun.steal, outs[i].steal) > StealLimit && !IsCPU(trial.statistic(d.opt.Objective)) {
			again = append(again, a)
		}
	}
	if len(again) == 0 {
		return 0
	}
	if 1+len(again) > left {
		d.note("categorical round %d had runs with more than %.0f%% steal; the budget left no room to measure them again", round+1, StealLimit)
		return 0
	}
	inc2, outs2 := d.round(measure, inc, again, round, " (again: steal)")
	for j, a := range again {
		i := slices.Index(active, a)
		before := math.Max(incRun.steal, outs[i].steal)
		if inc2 == nil || outs2[j] == nil {
			continue
		}
		after := math.Max(inc2.steal, outs2[j].steal)
		d.note("%s round %d ran with %.0f%% steal; the pair was measured again (%.0f%% steal)%s", a.ch.Name, round+1, before, after,
			map[bool]string{true: " and the calmer pair kept", false: ""}[after < before])
		if after < before {
			a.inc = append(a.inc, *inc2)
			a.own = append(a.own, *outs2[j])
			outs[i] = nil // recorded
		}
	}
	return 1 + len(again)
}

// revive brings back the challengers the halving left undecided, when no
// challenger is left in the race and the budget affords a round with one
// of them (the halving then keeps the better half of those, as in any
// round). A challenger whose group already has an adopted one stays out:
// at most one change per group is adopted.
func revive(arms []*arm, spent, budget int) []*arm {
	if spent+2 > budget {
		return nil
	}
	adopted := map[string]bool{}
	for _, a := range arms {
		if a.dec.Adopted {
			adopted[a.ch.Group] = true
		}
	}
	var back []*arm
	for _, a := range arms {
		if a.halved && a.done && a.dec.Verdict == "" && a.dropped == "" && !adopted[a.ch.Group] {
			a.done, a.halved, a.why = false, false, ""
			back = append(back, a)
		}
	}
	return back
}

// round measures the incumbent and the active challengers once, in an
// order rotated by round. It returns the incumbent's run (nil when it could
// not be used) and each challenger's (nil when none: a challenger that broke
// a limit while the incumbent did not is rejected, and so is one whose run
// Breaks the site).
func (d *Domain) round(measure func([]Candidate) []Outcome, inc knob.Config, active []*arm, round int, suffix string) (*run, []*run) {
	o := d.opt
	batch := []Candidate{{Phase: PhaseCategorical, Label: fmt.Sprintf("incumbent r%d%s", round+1, suffix), Config: inc, Conns: o.Conns}}
	for _, a := range active {
		batch = append(batch, Candidate{Phase: PhaseCategorical, Label: fmt.Sprintf("%s r%d%s", a.ch.Name, round+1, suffix), Config: a.cfg, Conns: o.Conns})
	}
	rot := round % len(batch)
	order := append(slices.Clone(batch[rot:]), batch[:rot]...)
	got := measure(order)
	byLabel := map[string]Outcome{}
	for i, c := range order {
		byLabel[c.Label] = got[i]
		d.mem.Observe(c.Config, got[i].Bench)
	}
	var incRun *run
	if r, why := d.runOf(byLabel[batch[0].Label]); why == "" {
		incRun = &r
	}
	outs := make([]*run, len(active))
	for i, a := range active {
		out := byLabel[batch[i+1].Label]
		r, why := d.runOf(out)
		if why != "" {
			if out.Bench != nil && incRun != nil {
				// The incumbent met the limits in the same round and the
				// challenger did not: it loses outright.
				a.dec.Violated = true
			}
			a.done, a.dropped = true, why
			continue
		}
		if why := Breaks(byLabel[batch[0].Label].Bench, out.Bench); why != "" {
			// Measured, but it breaks the site where the incumbent did
			// not: it loses outright, whatever its speed.
			a.dec.Violated = true
			a.done, a.dropped = true, why
			continue
		}
		outs[i] = &r
	}
	return incRun, outs
}

// decide looks at every challenger after a round (see categorical).
func (d *Domain) decide(arms []*arm, cmp stats.CompareOptions, alpha float64) {
	l := &look{objective: d.opt.Objective, cmp: cmp, side: 2 * alpha}
	all := l.pool(arms)
	for _, a := range arms {
		if a.dropped == "" && (len(a.inc) > 0 || !a.done) {
			l.family++
		}
		if v := a.dec.Verdict; v == stats.ABetter.String() || v == stats.BBetter.String() {
			l.rejected++
		}
	}
	l.rank(all)
	for _, a := range all {
		if t, ok := l.tests[a]; ok {
			l.judge(a, t)
		}
	}
}

// look is one look at the race after a round: every measured
// challenger's tests against the incumbent, and the family Holm's
// procedure corrects for.
type look struct {
	objective string
	cmp       stats.CompareOptions
	// side is the two-sided level of the family: 2 × alpha. A challenger
	// is adopted on its interval's lower bound alone, so the two-sided
	// interval at 1 - 2×alpha bounds the chance of adopting a change that
	// does nothing at alpha (the family's, after Holm), and the same
	// interval is the two one-sided tests' for equivalence (TOST).
	side float64
	// family counts the challengers still in play, rejected those whose
	// null hypothesis an earlier look rejected.
	family, rejected int
	// tests are on each challenger's statistic; rps and p99 the guards'.
	tests, rps, p99 map[*arm]stats.PairTest
	// level is Holm's level of each ranked challenger, holm whether
	// Holm's procedure rejected its null hypothesis.
	level map[*arm]float64
	holm  map[*arm]bool
}

// pool tests the measured challengers against the incumbent and returns
// them. Spreads are pooled per statistic over every challenger measured
// on it, decided ones included: their rounds still describe the
// machine.
func (l *look) pool(arms []*arm) (all []*arm) {
	byStat := map[string][]*arm{}
	for _, a := range arms {
		if a.dropped == "" && len(a.inc) > 0 {
			s := a.statistic(l.objective)
			byStat[s] = append(byStat[s], a)
			all = append(all, a)
		}
	}
	l.tests = map[*arm]stats.PairTest{}
	for s, group := range byStat {
		pooledTests(group, s, l.tests)
	}
	l.rps, l.p99 = map[*arm]stats.PairTest{}, map[*arm]stats.PairTest{}
	pooledTests(all, "rps", l.rps)
	pooledTests(all, "p99 guard", l.p99)
	return all
}

// pooledTests adds to into each arm of group's test on stat, their
// spreads pooled (none when they cannot be).
func pooledTests(group []*arm, stat string, into map[*arm]stats.PairTest) {
	pairs := make([]stats.Pair, len(group))
	for i, a := range group {
		pairs[i] = a.pair(stat)
	}
	ts, err := stats.PooledTests(pairs)
	if err != nil {
		return
	}
	for i, a := range group {
		into[a] = ts[i]
	}
}

// rank runs Holm's step-down over the undecided challengers with enough
// rounds; the others stay in the family, unrejected.
func (l *look) rank(all []*arm) {
	var cands []*arm
	var ps []float64
	for _, a := range all {
		if !a.done && len(a.inc) >= l.cmp.MinRounds {
			if t, ok := l.tests[a]; ok {
				cands = append(cands, a)
				ps = append(ps, t.P)
			}
		}
	}
	reject, level := stats.Holm(ps, l.family-l.rejected, l.side)
	l.level, l.holm = map[*arm]float64{}, map[*arm]bool{}
	for i, a := range cands {
		l.level[a], l.holm[a] = level[i], reject[i]
	}
}

// judge decides challenger a on its test t, or, when it already left
// the race undecided, updates its intervals.
func (l *look) judge(a *arm, t stats.PairTest) {
	cmp := l.cmp
	familyLevel := l.side / float64(max(1, l.family-l.rejected))
	if a.done {
		if a.dec.Verdict == "" {
			// Left the race undecided: its interval still gains from
			// the spread measured since, at the family's level.
			conf := 1 - familyLevel
			a.dec.CI = t.CI(conf)
			thr, q := l.rps[a].CI(conf), l.p99[a].CI(conf)
			a.dec.Throughput, a.dec.P99 = &thr, &q
		}
		return
	}
	lv, ranked := l.level[a]
	if !ranked {
		lv = familyLevel
	}
	conf := 1 - lv
	a.dec.Statistic = a.statistic(l.objective)
	a.dec.Family = l.family
	a.dec.CI, a.dec.Rounds = t.CI(conf), len(a.inc)
	thr, q := l.rps[a].CI(conf), l.p99[a].CI(conf)
	a.dec.Throughput, a.dec.P99 = &thr, &q
	v := verdict(a.dec.CI, len(a.inc), cmp)
	if (v == stats.ABetter || v == stats.BBetter) && !l.holm[a] {
		v = stats.NeedMore // Holm's procedure stopped before it
		if len(a.inc) >= cmp.MaxRounds {
			v = stats.NoDifference
		}
	}
	if v == stats.NeedMore && len(a.inc) >= 2 {
		// Cannot win: a gain worth adopting lies outside the interval
		// at the look's level (not corrected for the family: leaving
		// the race adopts nothing).
		if lenient := t.CI(1 - l.side); lenient.High < 1+cmp.Equivalence {
			v = stats.NoDifference
			a.why = fmt.Sprintf("left the race after %d rounds: it cannot win (%.3f× [%.3f, %.3f] at %.1f%%)", len(a.inc), lenient.Ratio, lenient.Low, lenient.High, 100*lenient.Confidence)
		}
	}
	if v == stats.BBetter && IsCPU(a.dec.Statistic) {
		// Lower CPU per request must not cost throughput or p99.
		switch {
		case thr.High < 1:
			a.done = true
			a.dec.Verdict = fmt.Sprintf("less CPU per request but significantly lower throughput (%.3f× [%.3f, %.3f]): kept the incumbent", thr.Ratio, thr.Low, thr.High)
			return
		case q.Low > 1:
			a.done = true
			a.dec.Verdict = fmt.Sprintf("less CPU per request but significantly higher p99 (%.3f× [%.3f, %.3f]): kept the incumbent", q.Ratio, q.Low, q.High)
			return
		}
	}
	if v != stats.NeedMore {
		a.done = true
		a.dec.Verdict = v.String()
		a.dec.Adopted = v == stats.BBetter
	}
}

// verdict is stats' rule for an interval: equivalence first, then a side,
// then the budget.
func verdict(ci stats.RatioCI, n int, o stats.CompareOptions) stats.Verdict {
	switch {
	case n < o.MinRounds:
		return stats.NeedMore
	case o.Equivalence > 0 && ci.Low >= 1/(1+o.Equivalence) && ci.High <= 1+o.Equivalence:
		return stats.NoDifference
	case ci.Low > 1:
		return stats.BBetter
	case ci.High < 1:
		return stats.ABetter
	case n >= o.MaxRounds:
		return stats.NoDifference
	}
	return stats.NeedMore
}

// finish writes the decisions and the combined configuration.
func (d *Domain) finish(arms []*arm, inc knob.Config, cmp stats.CompareOptions) {
	final := inc.Clone()
	chosen := map[string]*arm{}
	for _, a := range arms {
		switch {
		case a.dropped != "":
			a.dec.Verdict = "rejected: " + a.dropped
		case a.dec.Verdict == "" && a.dec.Rounds > 0 && a.dec.Rounds < cmp.MinRounds:
			// Left the race (or the budget ran out) before a verdict
			// was possible: say so rather than "no difference".
			a.dec.Verdict = fmt.Sprintf("undecided after %d of the %d rounds a verdict needs", a.dec.Rounds, cmp.MinRounds)
		case a.dec.Verdict == "":
			a.dec.Verdict = stats.NoDifference.String()
		}
		if a.dec.Rounds > 0 {
			a.dec.Basis = a.basis()
			// One round and nothing to pool: no interval (JSON has no
			// infinity); the basis says so.
			for _, ci := range []*stats.RatioCI{&a.dec.CI, a.dec.Throughput, a.dec.P99} {
				if ci != nil && math.IsInf(ci.High, 1) {
					ci.Low, ci.High = 0, 0
				}
			}
		}
		if a.dec.Adopted {
			if prev := chosen[a.ch.Group]; prev == nil || a.dec.CI.Ratio > prev.dec.CI.Ratio {
				if prev != nil {
					prev.dec.Adopted = false
				}
				chosen[a.ch.Group] = a
			} else {
				a.dec.Adopted = false
			}
		}
	}
	for _, a := range arms {
		d.rec.Decisions = append(d.rec.Decisions, a.dec)
		if a.dec.Adopted {
			for _, ch := range a.dec.Changes {
				final[ch.Knob] = ch.To
			}
		}
	}
	final = final.FitDynamic()
	if err := final.Validate(); err != nil || !d.fits(final) {
		d.note("the combined changes do not validate or fit the budget (%v); keeping the sized pool", err)
		return
	}
	d.rec.Config = final
}

// challenged is inc with ch's changes (adjusted by ch.Fit), made a
// configuration of the server it runs when ch moves inc to another one
// (switchedServer), brought within php-fpm's rules (FitDynamic) and
// validated.
func challenged(inc knob.Config, ch Challenge) (knob.Config, error) {
	cfg, err := inc.Apply(ch.Set)
	if err != nil {
		return nil, err
	}
	if cfg.Server() != inc.Server() {
		if cfg, err = switchedServer(inc, cfg, ch.Set); err != nil {
			return nil, err
		}
	}
	if ch.Fit != nil {
		cfg = ch.Fit(cfg)
	}
	cfg = cfg.FitDynamic()
	return cfg, cfg.Validate()
}

// basis says in words what decided the comparison, for the evidence.
func (a *arm) basis() string {
	var b strings.Builder
	dec := a.dec
	switch dec.Statistic {
	case StatCPU, StatCPUSpeed:
		what := "stack CPU per request"
		if dec.Statistic == StatCPUSpeed {
			what = "stack CPU per request at the machine's speed (each run's CPU per request ÷ the speed probe's reading during it)"
		}
		fmt.Fprintf(&b, "decided on %s (incumbent's ÷ challenger's, > 1 is faster): CPU-bound in %d of %d rounds, i.e. the stack's processes used >= %.0f%% of the cores left after steal, softirq and the generator",
			what, a.boundRounds(), len(a.inc), 100*CPUBoundShare)
	case StatP99:
		b.WriteString("decided on p99 (the latency objective)")
	default:
		fmt.Fprintf(&b, "decided on throughput (CPU-bound in %d of %d rounds: not enough to decide on CPU per request)", a.boundRounds(), len(a.inc))
	}
	if t := dec.Throughput; t != nil {
		fmt.Fprintf(&b, "; throughput %.3f× [%.3f, %.3f]", t.Ratio, t.Low, t.High)
	}
	if q := dec.P99; q != nil {
		fmt.Fprintf(&b, ", p99 %.3f× [%.3f, %.3f]", q.Ratio, q.Low, q.High)
	}
	if math.IsInf(dec.CI.High, 1) {
		b.WriteString("; no interval: one round and no spread to pool (shown as [0, 0])")
	}
	fmt.Fprintf(&b, "; intervals at %.2f%% (each bound one-sided at %.2f%%), Holm-corrected over %d comparisons and for repeated looks", 100*dec.CI.Confidence, 100*(1+dec.CI.Confidence)/2, dec.Family)
	if a.why != "" {
		b.WriteString("; " + a.why)
	}
	return b.String()
}

// switchedServer makes cfg, inc with a challenge's assignments set that
// moved it to another server, a configuration of that server: the knobs
// the new server does not use go back to their defaults (the incumbent's
// sized pool is the old server's: apache.prefork.* with mod_php, pm.* with
// php-fpm), and so does the old server's workers knob where the new
// server counts its PHP workers with another (apache.max_request_workers
// is prefork's PHP workers but event's threads); the new server's pool is
// then sized static at the incumbent's PHP concurrency (Pool), so the
// challenge compares the servers, not pool sizes. Knobs set names are
// kept as the challenge sets them.
func switchedServer(inc, cfg knob.Config, set []string) (knob.Config, error) {
	named := map[string]bool{}
	for _, a := range set {
		name, _, _ := strings.Cut(a, "=")
		named[name] = true
	}
	from, to := inc.Server(), cfg.Server()
	workers := knob.WorkersKnob(to)
	out := cfg.Clone()
	for name := range cfg {
		k, err := knob.Lookup(name)
		if err != nil || named[name] {
			continue
		}
		if !knob.UsedBy(k, to) || name == knob.WorkersKnob(from) && name != workers {
			out[name] = k.Default
		}
	}
	if knob.WorkersKnob(from) == workers || named[workers] {
		return out, nil
	}
	return Pool(out, "static", int(inc.PHPWorkers()))
}
