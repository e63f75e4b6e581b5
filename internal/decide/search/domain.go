package search

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// coroutine turns a strategy written as straight-line code ("measure these,
// then decide") into the ask/tell interface. iter.Pull runs the body as a
// coroutine: it only runs inside Ask, so there is no concurrency to guard.
type coroutine struct {
	next     func() ([]Candidate, bool)
	stop     func()
	pending  []Candidate
	outcomes map[int]Outcome
	lastID   int
	done     bool
}

// errStopped unwinds a body whose strategy was closed mid-way.
var errStopped = errors.New("search: strategy closed")

func newCoroutine(body func(measure func([]Candidate) []Outcome)) *coroutine {
	c := &coroutine{outcomes: map[int]Outcome{}}
	seq := func(yield func([]Candidate) bool) {
		defer func() {
			if r := recover(); r != nil && r != errStopped { //nolint:errorlint // sentinel identity
				panic(r)
			}
		}()
		body(func(batch []Candidate) []Outcome {
			if len(batch) == 0 {
				return nil
			}
			for i := range batch {
				c.lastID++
				batch[i].ID = c.lastID
			}
			if !yield(batch) {
				panic(errStopped)
			}
			out := make([]Outcome, len(batch))
			for i, cand := range batch {
				o, ok := c.outcomes[cand.ID]
				if !ok {
					o = Outcome{Err: "not measured"}
				}
				out[i] = o
				delete(c.outcomes, cand.ID)
			}
			return out
		})
	}
	c.next, c.stop = iter.Pull(seq)
	return c
}

func (c *coroutine) ask() []Candidate {
	if c.done {
		return nil
	}
	batch, ok := c.next()
	if !ok {
		c.done = true
		c.pending = nil
		return nil
	}
	c.pending = batch
	return slices.Clone(batch)
}

func (c *coroutine) tell(cand Candidate, o Outcome) { c.outcomes[cand.ID] = o }

func (c *coroutine) close() {
	c.done = true
	c.stop()
}

// Domain is phptune's strategy. In order:
//
//  1. baseline: the start configuration at the workload's concurrency,
//     which also measures a worker's memory (PSS p95) and the rest of the
//     stack's, so the budget can bound the pool before it is tried;
//  2. knee: throughput against client connections (×3 steps from the core
//     count) with a static pool as large as the budget and the
//     connections allow, stopping at the plateau; the knee estimates how
//     many requests can usefully be in flight: near the core count for
//     CPU-bound pages, far beyond it for pages that wait;
//  3. workers: static pools of knee, 1.25×knee and 1.5×knee workers, and
//     of the start's pool size, at the workload's concurrency, within
//     the memory budget; the smallest within 1% of the best wins (fewer
//     workers, less memory, same throughput);
//  4. categorical: the sized static pool is the incumbent; the challenges
//     (pm=dynamic, pm=ondemand, listen=tcp, JIT, …) race against it in
//     interleaved rounds (order rotated each round), the better half going
//     on each round, decided on stack CPU per request when the page is
//     CPU-bound and on the objective otherwise, with Holm's correction over
//     the challengers (see categorical); "no significant difference" keeps
//     the incumbent.
//
// Candidates that break a limit (error rate, p99 SLO) never win; every
// proposed configuration passes knob validation and fits the memory budget
// by prediction.
//
// The pool is whatever holds PHP's concurrency (knob.Config.PHPWorkers):
// php-fpm's pm.max_children, or with prefork + mod_php Apache's children,
// MaxRequestWorkers (see Pool); the challenges are the server's own
// (ChallengesFor).
type Domain struct {
	opt Options
	co  *coroutine
	mem Memory
	rec Recommendation
}

var _ Strategy = (*Domain)(nil)

// NewDomain returns the domain strategy.
func NewDomain(opt Options) (*Domain, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	d := &Domain{opt: opt}
	d.rec = Recommendation{Config: opt.Start.Clone(), Conns: opt.Conns}
	d.co = newCoroutine(d.run)
	return d, nil
}

// Ask implements Strategy.
func (d *Domain) Ask() []Candidate { return d.co.ask() }

// Tell implements Strategy.
func (d *Domain) Tell(c Candidate, o Outcome) { d.co.tell(c, o) }

// Close implements Strategy.
func (d *Domain) Close() { d.co.close() }

// Recommend implements Strategy.
func (d *Domain) Recommend() Recommendation {
	r := d.rec
	r.Config = r.Config.Clone()
	r.Decisions = slices.Clone(r.Decisions)
	r.Curve = slices.Clone(r.Curve)
	r.Notes = slices.Clone(r.Notes)
	r.Trials = d.co.lastID
	if d.mem.Known() {
		r.PredictedMemB = d.mem.Predict(r.Config)
	}
	return r
}

func (d *Domain) note(format string, args ...any) {
	d.rec.Notes = append(d.rec.Notes, fmt.Sprintf(format, args...))
}

// usable returns the run's score, or 0 and why it can't be used.
func (d *Domain) usable(o Outcome) (float64, string) {
	if o.Bench == nil {
		if o.Err == "" {
			return 0, "no result"
		}
		return 0, o.Err
	}
	if v := Violation(d.opt.Limits, o.Bench); v != "" {
		return 0, v
	}
	s := score(d.opt.Objective, o.Bench)
	if s <= 0 {
		return 0, "no successful requests"
	}
	if f := d.stealFree(o.Bench); f > 0 {
		s *= f
	}
	return s, ""
}

// stealFree is, for a CPU-bound run measured for throughput, the factor
// that turns its throughput into what the same cores would have served
// without steal: on a saturated CPU-bound page throughput = available
// cores ÷ CPU per request, and /proc does not charge stolen time, so the
// factor is (available + steal) ÷ available. 0 when it does not apply (a
// page that waits, no CPU figures, the latency objective).
func (d *Domain) stealFree(b *results.Bench) float64 {
	if d.opt.Objective == "latency" {
		return 0
	}
	u, ok := CPUUseOf(b, d.opt.Cores)
	if !ok || !u.CPUBound() || u.Available() <= 0 {
		return 0
	}
	return (u.Available() + u.StealCores) / u.Available()
}

// fits reports whether cfg's predicted memory is within the budget.
func (d *Domain) fits(cfg knob.Config) bool {
	b := d.opt.Limits.MemoryBudgetB
	return b <= 0 || !d.mem.Known() || d.mem.Predict(cfg) <= b
}

func (d *Domain) run(measure func([]Candidate) []Outcome) {
	o := d.opt
	C := o.Conns
	d.baseline(measure)
	// 2. Knee scan with a pool that does not limit concurrency. From here
	// on every candidate can hold the workload's connections (backlogs,
	// worker_connections; MariaDB's max_connections follows the pool).
	fitted := FitConnections(o.Start, C)
	scan := d.kneeScan(measure, fitted)
	knee := KneeOf(d.rec.Curve)
	d.rec.Knee = knee
	if knee == 0 {
		d.note("no usable knee scan; sizing the pool to the connections")
		knee = scan.cap
	}

	// 3. Pool size at the workload's concurrency.
	sizes, startSize := poolSizes(o.Start, knee, scan.cap)
	batch, outs := d.measureSizes(measure, fitted, sizes, scan)
	scores, top, startScore := d.scoreSizes(batch, outs, startSize)
	if startSize > 0 {
		top = d.confirmStartSize(measure, batch, scores, top, startScore, startSize)
	}
	workers := d.pickWorkers(batch, outs, scores, top)
	if workers == 0 {
		d.note("no pool size met the limits; keeping the start configuration")
		return
	}
	// Memory measured since may have grown the prediction; shrink to fit.
	if m := d.mem.MaxWorkers(o.Limits.MemoryBudgetB, scan.probe); m > 0 && workers > m {
		d.note("pool reduced from %d to %d workers to stay within the memory budget", workers, m)
		workers = m
	}
	inc, err := Pool(fitted, "static", workers)
	if err != nil {
		d.note("sized pool invalid: %v", err)
		return
	}
	d.rec.Config = inc
	if inc.Server() == knob.ApachePreforkModPHP && inc.On("apache.keepalive") && workers < C {
		// A WordPress tune behind prefork measured it: 2 children for 10
		// connections served as many requests as 150, at p50 130 ms but
		// p99 3.5-4.5 s; with KeepAlive off p99 was 1.2 s.
		d.note("with prefork and KeepAlive on, a client connection holds a child (a PHP worker with mod_php) between its requests: %d children for %d connections leave the other clients waiting until a kept-alive connection closes (after apache.max_keepalive_requests=%s requests or apache.keepalive_timeout=%ss idle), which shows in p99 rather than throughput; the apache.keepalive=off challenge measures that trade",
			workers, C, inc["apache.max_keepalive_requests"], inc["apache.keepalive_timeout"])
	}

	// 4. Categorical knobs against the incumbent (the static pool just
	// measured), interleaved.
	d.categorical(measure, inc)
}

// baseline measures the start configuration (unless the options bring its
// run) for its memory figures and its score.
func (d *Domain) baseline(measure func([]Candidate) []Outcome) {
	o := d.opt
	C := o.Conns
	base := o.Baseline
	if base == nil {
		out := measure([]Candidate{{Phase: PhaseBaseline, Label: "start", Config: o.Start.Clone(), Conns: C}})
		base = out[0].Bench
		if base == nil {
			d.note("the start configuration failed to run (%s); sizing without its memory figures", out[0].Err)
		}
	}
	d.mem.Observe(o.Start, base)
	if s, why := d.usable(Outcome{Bench: base}); s > 0 {
		d.rec.Score, d.rec.ThroughputRPS = s, base.ThroughputRPS
	} else if base != nil {
		d.note("the start configuration breaks a limit: %s", why)
	}
}

// kneeScanned is what the knee scan leaves for sizing: the largest pool
// it could run (cap), that pool (probe) and its run at the workload's
// concurrency, if the scan reached it.
type kneeScanned struct {
	cap     int
	probe   knob.Config
	atConns *results.Bench
}

// kneeScan measures a static pool as large as the connections and the
// memory budget allow at rising concurrency, into the record's curve.
func (d *Domain) kneeScan(measure func([]Candidate) []Outcome, fitted knob.Config) kneeScanned {
	o := d.opt
	C := o.Conns
	cap := min(C, o.MaxChildren)
	probe, _ := Pool(fitted, "static", cap)
	if m := d.mem.MaxWorkers(o.Limits.MemoryBudgetB, probe); m > 0 {
		d.rec.MemoryCap = m
		if m < cap {
			d.note("the memory budget allows at most %d workers (%s per worker p95, %s for the rest)", m, human(d.mem.WorkerB), human(d.mem.OtherB))
			cap = m
		}
	}
	if o.Limits.MemoryBudgetB > 0 && !d.mem.Known() {
		d.note("no per-worker memory (PSS p95) was measured on the start configuration: the memory budget cannot bound the knee scan")
	}
	probe, _ = Pool(fitted, "static", cap)
	levels := kneeLevels(o.Cores, cap)
	best := 0.0
	var scanAtC *results.Bench
	for i := 0; i < len(levels); i++ {
		l := levels[i]
		out := d.steady(measure, []Candidate{{Phase: PhaseKnee, Label: "conns=" + strconv.Itoa(l), Config: probe, Conns: l}})
		b := out[0].Bench
		if b == nil {
			d.note("knee scan at %d connections with %d workers failed: %s", l, cap, out[0].Err)
			if cap <= o.Cores || len(d.rec.Curve) > 0 {
				continue
			}
			// The big pool itself may be what failed (fork or memory
			// limits the budget did not know): halve it and try again.
			cap = max(o.Cores, cap/2)
			probe, _ = Pool(fitted, "static", cap)
			levels = kneeLevels(o.Cores, cap)
			i = -1
			continue
		}
		d.mem.Observe(probe, b)
		if l == C {
			scanAtC = b
		}
		pt := results.CurvePoint{Connections: l, ThroughputRPS: b.ThroughputRPS, P99Ms: b.Latency.P99Ms}
		if b.Requests > 0 {
			pt.ErrorRate = float64(b.Errors) / float64(b.Requests)
		}
		d.rec.Curve = append(d.rec.Curve, pt)
		// Three times the connections for under 10% more throughput: the
		// stack is saturated, more levels would only confirm it.
		if best > 0 && b.ThroughputRPS < 1.1*best {
			break
		}
		best = math.Max(best, b.ThroughputRPS)
	}
	return kneeScanned{cap: cap, probe: probe, atConns: scanAtC}
}

// poolSizes are the static pool sizes to measure at the workload's
// concurrency: from the knee, bounded by cap, and the start's own size
// (startSize, 0 when it is already among them or out of bounds).
func poolSizes(start knob.Config, knee, cap int) (sizes []int, startSize int) {
	factors := []float64{1, 1.25, 1.5}
	if float64(knee) >= 0.8*float64(cap) {
		// The knee is at or near the bound (connections or memory): below
		// the knee throughput grows with every worker, so the bound itself
		// is the answer; a smaller pool could only win by noise.
		factors = []float64{float64(cap) / float64(knee)}
	}
	for _, f := range factors {
		n := min(max(1, int(math.Round(f*float64(knee)))), cap)
		if !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	// The start's own pool size, as a static pool, is measured too: the
	// knee scan runs below the workload's concurrency and can misjudge
	// pages that wait on the database (WordPress comments: a 2-worker pool
	// from a knee of 2 lost to the default's 5 at 20 connections). It
	// overrides the model only on clear evidence (startSizeMargin).
	if n0 := int(start.PHPWorkers()); n0 >= 1 && n0 <= cap && !slices.Contains(sizes, n0) {
		startSize = n0
		sizes = append(sizes, n0)
	}
	return sizes, startSize
}

// measureSizes measures a static pool of each size that fits the memory
// budget, reusing the knee scan's run of the largest.
func (d *Domain) measureSizes(measure func([]Candidate) []Outcome, fitted knob.Config, sizes []int, scan kneeScanned) ([]Candidate, []Outcome) {
	C := d.opt.Conns
	cap, scanAtC := scan.cap, scan.atConns
	var batch, todo []Candidate
	var outs []Outcome
	for _, n := range sizes {
		cfg, err := Pool(fitted, "static", n)
		if err != nil || !d.fits(cfg) {
			continue
		}
		c := Candidate{Phase: PhaseWorkers, Label: "workers=" + strconv.Itoa(n), Config: cfg, Conns: C}
		if n == cap && scanAtC != nil {
			// The knee scan's last run was this very pool at the
			// workload's concurrency: reuse it.
			batch, outs = append(batch, c), append(outs, Outcome{Bench: scanAtC})
			continue
		}
		todo = append(todo, c)
	}
	batch = append(batch, todo...)
	outs = append(outs, d.steady(measure, todo)...)
	return batch, outs
}

// scoreSizes scores each size's run within the limits: top is the best
// score among the sizes from the knee, startScore the start's size's.
func (d *Domain) scoreSizes(batch []Candidate, outs []Outcome, startSize int) (scores []float64, top, startScore float64) {
	scores = make([]float64, len(outs))
	for i, out := range outs {
		d.mem.Observe(batch[i].Config, out.Bench)
		s, why := d.usable(out)
		if why != "" {
			d.note("%s: %s", batch[i].Label, why)
		}
		scores[i] = s
		if startSize > 0 && int(batch[i].Config.PHPWorkers()) == startSize {
			startScore = s
			continue
		}
		top = math.Max(top, s)
	}
	return scores, top, startScore
}

// confirmStartSize keeps the start's pool size only on clear evidence
// (startSizeMargin, over two runs each) against the best size from the
// knee: otherwise its score is zeroed. It returns the top score.
func (d *Domain) confirmStartSize(measure func([]Candidate) []Outcome, batch []Candidate, scores []float64, top, startScore float64, startSize int) float64 {
	C := d.opt.Conns
	si, ti := -1, -1
	for i := range scores {
		switch {
		case int(batch[i].Config.PHPWorkers()) == startSize:
			si = i
		case scores[i] == top && top > 0:
			ti = i
		}
	}
	keep := si >= 0 && startScore > 0 && top == 0 // the only size that ran within the limits
	if si >= 0 && ti >= 0 && startScore > startSizeMargin*top {
		// One run each is not evidence enough: both again, and the
		// start's size stays only if it wins on the sum of both runs.
		again := d.steadyPair(measure, []Candidate{
			{Phase: PhaseWorkers, Label: batch[si].Label + " (again)", Config: batch[si].Config, Conns: C},
			{Phase: PhaseWorkers, Label: batch[ti].Label + " (again)", Config: batch[ti].Config, Conns: C},
		})
		s2, _ := d.usable(again[0])
		t2, _ := d.usable(again[1])
		if s2 > 0 && t2 > 0 && startScore+s2 > startSizeMargin*(top+t2) {
			keep = true
			scores[si], scores[ti] = (startScore+s2)/2, (top+t2)/2
			top = scores[si]
			d.note("the start's pool size (%d) beat the sizes from the knee by %.0f%% over two runs each: kept it", startSize, 100*(scores[si]/scores[ti]-1))
		}
	}
	if !keep && si >= 0 {
		scores[si] = 0 // not clearly better: the knee's sizes decide
	}
	return top
}

// pickWorkers is the smallest pool size within 1% of the top score (0:
// none ran within the limits), its run the record's score.
func (d *Domain) pickWorkers(batch []Candidate, outs []Outcome, scores []float64, top float64) int {
	// The best, unless a smaller pool is within 1%: beyond the knee more
	// workers only cost memory, below it they cost throughput, and single
	// runs are noisy, so thrift gets only a small margin.
	workers := 0
	for i, s := range scores {
		if top > 0 && s >= 0.99*top {
			n := int(batch[i].Config.PHPWorkers())
			if workers == 0 || n < workers {
				workers = n
				d.rec.Score, d.rec.ThroughputRPS = s, outs[i].Bench.ThroughputRPS
			}
		}
	}
	return workers
}

// startSizeMargin is how much better (score ratio, over two runs each) the
// start's pool size must measure than the best size derived from the knee
// to be kept instead.
const startSizeMargin = 1.05

// kneeLevels are the connection counts of the knee scan: from the core
// count up by ×3 to cap, the last step merged into cap when it would be
// less than ×1.5 (two nearly equal levels tell nothing new).
func kneeLevels(cores, cap int) []int {
	var levels []int
	for l := max(1, cores); l < cap; l *= 3 {
		levels = append(levels, l)
	}
	if n := len(levels); n > 1 && float64(cap) < 1.5*float64(levels[n-1]) {
		levels = levels[:n-1]
	}
	return append(levels, cap)
}

// StealLimit is the steal time (percent) above which a single-shot run is
// not trusted: a neighbour took the CPU, the run measured them.
const StealLimit = 10.0

func steal(b *results.Bench) float64 {
	if b == nil || b.Observation == nil {
		return 0
	}
	return b.Observation.Derived.MaxStealPct
}

// steady measures batch and measures again, once, each run whose steal
// exceeded StealLimit (unless CPU-bound: see stealFree), keeping the calmer of the two (Metis re-samples
// outliers for the same reason). The knee and pool phases rest on single
// runs, where one disturbed run would mislead the sizing; in the paired
// rounds a disturbed run widens every interval, since the spread is pooled.
func (d *Domain) steady(measure func([]Candidate) []Outcome, batch []Candidate) []Outcome {
	outs := measure(batch)
	var again []Candidate
	var at []int
	for i, o := range outs {
		if steal(o.Bench) > StealLimit && d.stealFree(o.Bench) > 0 {
			// CPU-bound: its score is corrected for the steal (see
			// stealFree); measuring it again would tell nothing new.
			d.note("%s ran with %.0f%% steal; CPU-bound, so its throughput is scaled to the cores the steal took (×%.2f) instead of measured again", batch[i].Label, steal(o.Bench), d.stealFree(o.Bench))
			continue
		}
		if steal(o.Bench) > StealLimit {
			c := batch[i]
			c.Label += " (again: steal)"
			again = append(again, c)
			at = append(at, i)
		}
	}
	if len(again) == 0 {
		return outs
	}
	for j, o := range measure(again) {
		i := at[j]
		d.note("%s ran with %.0f%% steal; measured again (%.0f%% steal)", batch[i].Label, steal(outs[i].Bench), steal(o.Bench))
		if o.Bench != nil && steal(o.Bench) < steal(outs[i].Bench) {
			outs[i] = o
		}
	}
	return outs
}

// steadyPair measures a pair to be compared with each other and, when
// either run had more than StealLimit steal, both again, keeping the
// calmer pair: re-measuring only the disturbed run would pair it with a
// run made at another time.
func (d *Domain) steadyPair(measure func([]Candidate) []Outcome, pair []Candidate) []Outcome {
	outs := measure(pair)
	worst := func(os []Outcome) float64 { return math.Max(steal(os[0].Bench), steal(os[1].Bench)) }
	if len(outs) != 2 || worst(outs) <= StealLimit {
		return outs
	}
	again := slices.Clone(pair)
	for i := range again {
		again[i].Label += " (again: steal)"
	}
	outs2 := measure(again)
	d.note("%s and %s ran with %.0f%% steal; both measured again (%.0f%% steal)", pair[0].Label, pair[1].Label, worst(outs), worst(outs2))
	if outs2[0].Bench != nil && outs2[1].Bench != nil && worst(outs2) < worst(outs) {
		return outs2
	}
	return outs
}

func human(b int64) string {
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
