package tune

import (
	"fmt"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
	"github.com/phptune/phptune/internal/watch/errlog"
)

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
		peak = d.OtherPSSB + cfg.PHPWorkers()*d.WorkerPSSP95B
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
				case !d.Adopted && dc.From == ch.To && dc.To == ch.From && d.CI.Low > 0 && d.CI.High > 0:
					// A challenger dropped after one round has no interval
					// ([0, 0]): there is nothing to invert, and 1/0 would be
					// an infinite bound that no JSON can hold; the holdout
					// speaks for the change instead.
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
	if len(t.Sizing) > 0 {
		b.WriteString("\nsized from what the stack reported after the load (over 75% used or overflowed: raised to 2× the use; otherwise kept):\n")
		for _, d := range t.Sizing {
			fmt.Fprintf(&b, "  %-34s %s%s\n", d.Knob, d.Reason, trialList(d.Trials))
		}
	}
	if h := t.Holdout; h != nil {
		fmt.Fprintf(&b, "\nholdout, %d interleaved rounds: throughput %.0f → %.0f rps, %.2f× [%.2f, %.2f]; p99 %.1f → %.1f ms, %.2f×\n",
			h.Rounds, h.StartRPS, h.RecommendedRPS, h.ThroughputRatio, h.ThroughputCILow, h.ThroughputCIHi, h.StartP99Ms, h.RecommendedP99, h.P99Ratio)
		switch {
		case h.Statistic == search.StatCPUSpeed && h.RawCPURatio > 0:
			fmt.Fprintf(&b, "  stack CPU per request %.2f → %.2f ms, %.2f× faster [%.2f, %.2f]; at the machine's speed %.2f× [%.2f, %.2f]\n",
				h.StartCPUMs, h.RecommendedCPUMs, h.RawCPURatio, h.RawCPUCILow, h.RawCPUCIHigh, h.CPURatio, h.CPUCILow, h.CPUCIHigh)
		case h.CPURatio > 0:
			fmt.Fprintf(&b, "  stack CPU per request %.2f → %.2f ms, %.2f× faster [%.2f, %.2f]\n", h.StartCPUMs, h.RecommendedCPUMs, h.CPURatio, h.CPUCILow, h.CPUCIHigh)
		}
		if h.Statistic != "" {
			why := "the page is not CPU-bound (the stack left cores idle), so throughput decides"
			switch h.Statistic {
			case search.StatCPU:
				why = "both configurations were CPU-bound (≥ 90% of their stack ceiling) in most rounds, so stack CPU per request decides: steal moves throughput, not it"
			case search.StatCPUSpeed:
				why = "both configurations were CPU-bound (≥ 90% of their stack ceiling) in most rounds, so stack CPU per request decides, divided by each run's machine-speed probe (the CPU time of a fixed unit of work run every 100 ms during the run): steal moves throughput, and a neighbour that slows the CPU moves raw CPU per request, less so this"
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
	serverErrorsEvidence(&b, t)
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

// trialList names the trials a sizing decision read: " (trials 12, 14)".
func trialList(ns []int) string {
	if len(ns) == 0 {
		return ""
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	word := "trial"
	if len(ns) > 1 {
		word = "trials"
	}
	return fmt.Sprintf(" (%s %s)", word, strings.Join(parts, ", "))
}

// serverErrorsEvidence lists, trial by trial, the failed requests the
// servers' own error logs explain (trials that failed none are counted,
// not listed), so that an error rate that ruled a configuration out comes
// with its cause, then each trial's PHP messages (deprecations, warnings)
// in one line.
func serverErrorsEvidence(b *strings.Builder, t *results.Tune) {
	var read, causesOnly []string
	var listed []results.Trial
	for _, tr := range t.Trials {
		if tr.Bench == nil || tr.Bench.ServerErrors == nil {
			continue
		}
		read = append(read, fmt.Sprint(tr.N))
		switch se := tr.Bench.ServerErrors; {
		case errlog.Headline(se) != "" || (tr.Bench.Errors > 0 && len(se.Explanations) > 0):
			listed = append(listed, tr)
		case len(se.Classes) > 0:
			causesOnly = append(causesOnly, fmt.Sprint(tr.N))
		}
	}
	if len(read) == 0 {
		return
	}
	fmt.Fprintf(b, "\nserver error logs (what nginx, Apache and php-fpm wrote in each trial's measured part; %d trials read):\n", len(read))
	for _, tr := range listed {
		fmt.Fprintf(b, "  trial %d (%s, %d conns, %d errors of %d requests): %s\n", tr.N, tr.Phase, tr.Connections, tr.Bench.Errors, tr.Bench.Requests, errlog.Headline(tr.Bench.ServerErrors))
		for _, e := range tr.Bench.ServerErrors.Explanations {
			fmt.Fprintf(b, "    %s\n", e)
		}
	}
	if len(listed) == 0 {
		b.WriteString("  no trial's servers logged a failed request\n")
	}
	if len(causesOnly) > 0 {
		fmt.Fprintf(b, "  trials whose logs held only causes, no failed request (pm.max_children reached, workers recycled...): %s\n", strings.Join(causesOnly, ", "))
	}
	for _, tr := range t.Trials {
		if tr.Bench == nil || tr.Bench.ServerErrors == nil {
			continue
		}
		if p := errlog.PHPLine(tr.Bench.ServerErrors.PHP); p != "" {
			fmt.Fprintf(b, "  trial %d (%s): %s\n", tr.N, tr.Phase, p)
		}
	}
}
