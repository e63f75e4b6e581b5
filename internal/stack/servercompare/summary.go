package servercompare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

// Confidence of every interval a servers run reports.
const Confidence = 0.95

// maxWarnings is how many distinct warnings a row keeps (the observer's
// repeat with other counts every round).
const maxWarnings = 6

// Measured is one configuration's runs in the interleaved rounds.
type Measured struct {
	Label, Server, Role string
	Config              knob.Config
	// Failed says why it stopped being measured (it did not start).
	Failed string
	// Runs are its measurements by round; nil where it was not measured.
	Runs []*results.Bench
}

// Summary is the comparison's table: one row per configuration in the
// order measured, the best's label, and each server's tuned ÷ default
// throughput.
type Summary struct {
	Configs        []results.ServerConfig
	Best           string
	TunedVsDefault map[string]*results.Ratio
}

// Summarize turns the rounds into the table: each configuration's
// figures over its rounds (throughput and p99 with 95% intervals, medians
// of the rest), ranks by throughput, the paired ratio of every
// configuration against the best, and each server's tuned against its
// default. A configuration that failed keeps its row with Failed set.
func Summarize(ms []Measured) Summary {
	sum := Summary{TunedVsDefault: map[string]*results.Ratio{}}
	figs := make([][]*Figures, len(ms))
	for i, m := range ms {
		figs[i] = make([]*Figures, len(m.Runs))
		for r, b := range m.Runs {
			if b != nil {
				f := FiguresOf(b)
				figs[i][r] = &f
			}
		}
		sum.Configs = append(sum.Configs, row(m, figs[i]))
	}
	// Rank by throughput; the best is the reference of every ratio.
	var order []int
	for i, c := range sum.Configs {
		if c.Rounds > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		return sum.Configs[order[a]].Throughput.Value > sum.Configs[order[b]].Throughput.Value
	})
	for rank, i := range order {
		sum.Configs[i].Rank = rank + 1
	}
	if len(order) == 0 {
		return sum
	}
	best := order[0]
	sum.Best = sum.Configs[best].Label
	for _, i := range order[1:] {
		sum.Configs[i].VsBest = paired(figs[best], figs[i], func(f *Figures) float64 { return f.RPS })
		sum.Configs[i].P99VsBest = paired(figs[best], figs[i], func(f *Figures) float64 { return f.P99Ms })
	}
	// Tuned ÷ default for each server with both.
	for i, m := range ms {
		if m.Role != results.RoleTuned {
			continue
		}
		for j, d := range ms {
			if d.Role == results.RoleDefault && d.Server == m.Server {
				sum.TunedVsDefault[m.Server] = paired(figs[j], figs[i], func(f *Figures) float64 { return f.RPS })
			}
		}
	}
	return sum
}

// row is one configuration's figures over its rounds.
func row(m Measured, fs []*Figures) results.ServerConfig {
	c := results.ServerConfig{Label: m.Label, Server: m.Server, Role: m.Role, Config: m.Config, Failed: m.Failed}
	var rps, p99, errs, web, php, db, stack, stackCores, phpCores, imb, idle []float64
	var pss, pss95, total []int64
	var busy, status int
	var warns warnings
	for _, f := range fs {
		if f == nil {
			continue
		}
		c.Rounds++
		rps, p99, errs = append(rps, f.RPS), append(p99, f.P99Ms), append(errs, f.ErrorRate)
		web, php, db, stack = append(web, f.CPUWeb), append(php, f.CPUPHP), append(db, f.CPUDB), append(stack, f.CPUStack)
		stackCores, phpCores = append(stackCores, f.CPUStack*f.RPS), append(phpCores, f.CPUPHP*f.RPS)
		imb, idle = append(imb, f.Imbalance), append(idle, f.MachineIdlePct)
		pss, pss95, total = append(pss, f.WorkerPSS), append(pss95, f.WorkerPSSP95), append(total, f.TotalPSS)
		c.Workers = max(c.Workers, f.Workers)
		if f.Queued {
			c.QueuedRounds++
		}
		c.MaxQueued = max(c.MaxQueued, f.MaxQueued)
		busy, status = busy+f.AllBusy, status+f.StatusSamples
		warns.add(f.Warnings)
	}
	c.Warnings = warns.list(c.Rounds)
	if c.Rounds == 0 {
		return c
	}
	c.RPSByRound, c.P99ByRound = rps, p99
	c.Throughput, c.P99Ms = interval(rps), interval(p99)
	c.ErrorRate = stats.Mean(errs)
	c.CPUWebMs, c.CPUPHPMs, c.CPUDBMs, c.CPUStackMs = 1000*stats.Median(web), 1000*stats.Median(php), 1000*stats.Median(db), 1000*stats.Median(stack)
	c.StackCores, c.PHPCores = stats.Median(stackCores), stats.Median(phpCores)
	c.Imbalance, c.MachineIdlePct = stats.Median(imb), stats.Median(idle)
	c.WorkerPSSB, c.WorkerPSSP95, c.TotalPSSB = medianInt(pss), medianInt(pss95), medianInt(total)
	if status > 0 {
		c.AllBusyShare = float64(busy) / float64(status)
	}
	// The workers' CPU of the round whose throughput is nearest the
	// median: one round's picture, as top would show it.
	med := stats.Median(rps)
	var pick *Figures
	for _, f := range fs {
		if f != nil && (pick == nil || math.Abs(f.RPS-med) < math.Abs(pick.RPS-med)) {
			pick = f
		}
	}
	c.WorkerCPUPct = pick.WorkerCPUPct
	return c
}

// interval is the geometric mean of positive xs with a Student-t interval
// on their logs at Confidence; without two positive values it has no
// interval (Low and High 0).
func interval(xs []float64) results.Interval {
	var logs []float64
	for _, x := range xs {
		if x > 0 {
			logs = append(logs, math.Log(x))
		}
	}
	if len(logs) == 0 {
		return results.Interval{}
	}
	m := stats.Mean(logs)
	out := results.Interval{Value: math.Exp(m)}
	if n := len(logs); n >= 2 {
		half := stats.TQuantile(0.5+Confidence/2, float64(n-1)) * stats.StdDev(logs) / math.Sqrt(float64(n))
		out.Low, out.High = math.Exp(m-half), math.Exp(m+half)
	}
	return out
}

// paired is b ÷ a of metric over the rounds in which both were measured
// with a positive value; nil without such a round. With one round it has
// no interval (Low and High 0): one round says nothing about the noise.
func paired(a, b []*Figures, metric func(*Figures) float64) *results.Ratio {
	var xs, ys []float64
	for r := range min(len(a), len(b)) {
		if a[r] == nil || b[r] == nil {
			continue
		}
		x, y := metric(a[r]), metric(b[r])
		if x > 0 && y > 0 {
			xs, ys = append(xs, x), append(ys, y)
		}
	}
	if len(xs) == 0 {
		return nil
	}
	ci, err := stats.PairedRatio(xs, ys, Confidence)
	if err != nil {
		return nil
	}
	out := &results.Ratio{Ratio: ci.Ratio, Low: ci.Low, High: ci.High, Confidence: Confidence, Rounds: ci.N}
	if ci.N < 2 || math.IsInf(ci.High, 0) {
		out.Low, out.High = 0, 0
	}
	return out
}

// warnings gathers the runs' warnings: the observer words the same
// finding with other counts every round, so warnings that differ only in
// their numbers are one, the first kept and the rounds that had it
// counted.
type warnings struct {
	keys  []string
	first map[string]string
	count map[string]int
}

func (w *warnings) add(ws []string) {
	if w.first == nil {
		w.first, w.count = map[string]string{}, map[string]int{}
	}
	seen := map[string]bool{}
	for _, x := range ws {
		k := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return '#'
			}
			return r
		}, x)
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, ok := w.first[k]; !ok {
			w.keys = append(w.keys, k)
			w.first[k] = x
		}
		w.count[k]++
	}
}

// list is the warnings in the order first seen, each with the rounds that
// had it when not all did, at most maxWarnings and a line saying how many
// more there were.
func (w *warnings) list(rounds int) []string {
	var out []string
	for i, k := range w.keys {
		if i == maxWarnings {
			out = append(out, fmt.Sprintf("(and %d more kinds of warning in this configuration's runs)", len(w.keys)-maxWarnings))
			break
		}
		x := w.first[k]
		if n := w.count[k]; rounds > 1 {
			x += fmt.Sprintf(" (%d of %d rounds)", n, rounds)
		}
		out = append(out, x)
	}
	return out
}

func medianInt(xs []int64) int64 {
	fs := make([]float64, len(xs))
	for i, x := range xs {
		fs[i] = float64(x)
	}
	return int64(stats.Median(fs))
}

// Slower reports whether r says significantly slower (its whole interval
// below 1); Faster the opposite.
func Slower(r *results.Ratio) bool { return r != nil && r.High > 0 && r.High < 1 }
