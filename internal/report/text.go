package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// holdoutFigures averages the holdout trials of one configuration.
func holdoutFigures(res *results.Tune, cfg map[string]string) (errRate float64, memB int64) {
	n := 0
	for _, tr := range res.Trials {
		if tr.Phase != "holdout" || tr.Bench == nil || !maps.Equal(tr.Config, cfg) {
			continue
		}
		if tr.Bench.Requests > 0 {
			errRate += float64(tr.Bench.Errors) / float64(tr.Bench.Requests)
		}
		if o := tr.Bench.Observation; o != nil {
			memB = max(memB, stackPSS(o))
		}
		n++
	}
	if n > 0 {
		errRate /= float64(n)
	}
	return errRate, memB
}

// stackPSS is the stack's peak PSS over the samples (generator and
// unrelated processes left out).
func stackPSS(o *results.Observation) int64 {
	var peak int64
	for _, s := range o.Samples {
		var sum int64
		for _, g := range s.Groups {
			if g.Name == "generator" || g.Name == "other" {
				continue
			}
			sum += g.PSSB
		}
		peak = max(peak, sum)
	}
	return peak
}

// behind names the tune's web server, " behind apache-event-fpm", when
// it is not the default nginx-fpm (whose summaries read as before).
func behind(res *results.Tune) string {
	if res.Server == "" || res.Server == "nginx-fpm" {
		return ""
	}
	return " behind " + res.Server
}

// TuneText writes the tune summary: the before/after table of the holdout,
// the changes with their measured effects, the decisions and the warnings.
func TuneText(w io.Writer, res *results.Tune) error {
	return safeText(w, func(w io.Writer) error { return tuneText(w, res) })
}

// verdictText writes the tune's verdict: the sentence every report
// quotes, and why it was decided on that statistic.
func verdictText(w io.Writer, v results.Verdict) {
	fmt.Fprintf(w, "verdict: %s\n", v.Sentence)
	if v.Why != "" {
		fmt.Fprintf(w, "  (%s)\n", v.Why)
	}
}

// VerdictLine is the one line that closes a command's output with the
// tune's verdict.
func VerdictLine(w io.Writer, res *results.Tune) error {
	return safeText(w, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "verdict: %s\n", res.TheVerdict().Sentence)
		return err
	})
}

func tuneText(w io.Writer, res *results.Tune) error {
	fmt.Fprintf(w, "phptune tune %s: %s%s, workload %s, %d trials in %s\n", res.ID, res.App, behind(res), res.Workload, len(res.Trials), (time.Duration(res.WallS) * time.Second).String())
	if h := res.Holdout; h != nil {
		se, sm := holdoutFigures(res, res.Start)
		re, rm := holdoutFigures(res, res.Recommended)
		fmt.Fprintf(w, "\n%-16s %14s %14s  %s\n", "holdout", startName(res), "recommended", "ratio ("+ciLabel(h.Confidence)+")")
		fmt.Fprintf(w, "%-16s %14.1f %14.1f  %.2f× [%.2f, %.2f]\n", "throughput rps", h.StartRPS, h.RecommendedRPS, h.ThroughputRatio, h.ThroughputCILow, h.ThroughputCIHi)
		fmt.Fprintf(w, "%-16s %14.1f %14.1f  %.2f× [%.2f, %.2f]\n", "latency p99 ms", h.StartP99Ms, h.RecommendedP99, h.P99Ratio, h.P99CILow, h.P99CIHigh)
		switch {
		case h.RawCPURatio > 0:
			fmt.Fprintf(w, "%-16s %14.2f %14.2f  %.2f× faster [%.2f, %.2f]\n", "stack CPU ms/req", h.StartCPUMs, h.RecommendedCPUMs, h.RawCPURatio, h.RawCPUCILow, h.RawCPUCIHigh)
			fmt.Fprintf(w, "%-16s %14s %14s  %.2f× faster [%.2f, %.2f]\n", " at machine speed", "", "", h.CPURatio, h.CPUCILow, h.CPUCIHigh)
		case h.CPURatio > 0:
			fmt.Fprintf(w, "%-16s %14.2f %14.2f  %.2f× faster [%.2f, %.2f]\n", "stack CPU ms/req", h.StartCPUMs, h.RecommendedCPUMs, h.CPURatio, h.CPUCILow, h.CPUCIHigh)
		}
		fmt.Fprintf(w, "%-16s %13.2f%% %13.2f%%\n", "errors", 100*se, 100*re)
		if sm > 0 || rm > 0 {
			fmt.Fprintf(w, "%-16s %14s %14s  (peak PSS of the stack)\n", "memory", mib(sm), mib(rm))
		}
		fmt.Fprintf(w, "(%d rounds, start and recommended alternated, each in fresh processes)\n", h.Rounds)
		if h.MaxRounds > h.PlannedRounds && h.PlannedRounds > 0 {
			fmt.Fprintf(w, "(%d rounds planned, up to %d while the interval was undecided: each look at %s, 95%% over all looks)\n", h.PlannedRounds, h.MaxRounds, ciLabel(h.Confidence))
		}
		if h.StackCeilingRPS > 0 {
			fmt.Fprintf(w, "(stack ceiling of the recommendation %.0f rps: it reached %.0f%% of what the CPU left to the stack allows)\n", h.StackCeilingRPS, 100*h.ShareOfCeiling)
		}
		verdictText(w, res.TheVerdict())
	} else {
		fmt.Fprintln(w)
		verdictText(w, res.TheVerdict())
	}
	tuneCapacityText(w, res.Capacity)
	baselinesText(w, res)
	concurrencyTable(w, res)
	if len(res.Changes) == 0 {
		fmt.Fprintln(w, "\nrecommended: keep the starting configuration (no change measured better)")
	} else {
		fmt.Fprintln(w, "\nchanges:")
		for _, c := range res.Changes {
			fmt.Fprintf(w, "  %-34s %s -> %s", c.Knob, c.From, c.To)
			if c.Ratio > 0 {
				fmt.Fprintf(w, "   %.2f× [%.2f, %.2f] %s", c.Ratio, c.CILow, c.CIHigh, c.Verdict)
			} else if c.Verdict != "" {
				fmt.Fprintf(w, "   %s", c.Verdict)
			}
			if c.Effective != "" {
				fmt.Fprintf(w, "   (the kernel gave %s)", c.Effective)
			}
			fmt.Fprintln(w)
		}
	}
	sizingText(w, res)
	serverErrorsTuneText(w, res)
	if res.Limits.MemoryBudgetB > 0 {
		fmt.Fprintf(w, "\nmemory: budget %s, predicted %s, measured %s (PSS of the stack)\n", mib(res.Limits.MemoryBudgetB), mib(res.PredictedMemB), mib(res.MeasuredMemB))
	}
	if len(res.Decisions) > 0 {
		fmt.Fprintln(w, "\ndecisions (paired comparisons against the incumbent, score ratio with 95% CI):")
		for _, d := range res.Decisions {
			switch {
			case d.Skipped != "":
				fmt.Fprintf(w, "  %-34s skipped: %s\n", d.Name, d.Skipped)
			case d.Rounds == 0 && !d.Adopted:
				// Dropped at its first trial (over a limit, or it broke the
				// site), or never measured: no ratio.
				fmt.Fprintf(w, "  %-34s no ratio (0 rounds): %s, kept the incumbent\n", d.Name, d.Verdict)
			default:
				adopted := "kept the incumbent"
				if d.Adopted {
					adopted = "adopted"
				}
				stat := ""
				if d.Statistic != "" {
					stat = " on " + d.Statistic
				}
				fmt.Fprintf(w, "  %-34s %.2f× [%.2f, %.2f]%s after %d rounds: %s, %s\n", d.Name, d.Ratio, d.CILow, d.CIHigh, stat, d.Rounds, d.Verdict, adopted)
			}
		}
	}
	TunePHPByBuildText(w, res)
	if len(res.ProfileFindings) > 0 {
		fmt.Fprintln(w, "\nprofile of the start (tune --profile), its findings and the challenges they added:")
		for _, f := range res.ProfileFindings {
			fmt.Fprintf(w, "  - %s\n", f.Evidence)
			if len(f.Challenges) > 0 {
				fmt.Fprintf(w, "    challenges: %s\n", strings.Join(f.Challenges, " | "))
			}
		}
	}
	if res.Environment != nil {
		if lines := sysctl.Lines(res.Environment.KernelLimits); len(lines) > 0 {
			fmt.Fprintln(w, "\nkernel limits (read, not changed unless --apply-sysctl):")
			for _, l := range lines {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
	BlockedText(w, res.Blocked, "")
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// concurrencyTable writes throughput and p99 of the start and the
// recommended configuration at each concurrency they were measured at (the
// holdout and the curve phase), when there is more than one.
func concurrencyTable(w io.Writer, res *results.Tune) {
	curves := configCurves(res)
	byConns := map[int]map[string]curvePoint{}
	for _, c := range curves {
		for _, p := range c.Points {
			if byConns[p.Connections] == nil {
				byConns[p.Connections] = map[string]curvePoint{}
			}
			byConns[p.Connections][c.Label] = p
		}
	}
	if len(byConns) < 2 {
		return
	}
	var levels []int
	for n := range byConns {
		levels = append(levels, n)
	}
	sort.Ints(levels)
	fmt.Fprintf(w, "\n%-16s %14s %10s %16s %10s\n", "connections", "start rps", "p99 ms", "recommended rps", "p99 ms")
	cell := func(p curvePoint, ok bool) (string, string) {
		if !ok {
			return "-", "-"
		}
		return fmt.Sprintf("%.1f", p.RPS.V), fmt.Sprintf("%.1f", p.P99Ms.V)
	}
	for _, n := range levels {
		sp, sok := byConns[n]["start"]
		rp, rok := byConns[n]["recommended"]
		if len(curves) == 1 { // the recommendation is the start
			rp, rok = sp, sok
		}
		srps, sp99 := cell(sp, sok)
		rrps, rp99 := cell(rp, rok)
		fmt.Fprintf(w, "%-16d %14s %10s %16s %10s\n", n, srps, sp99, rrps, rp99)
	}
}

// mib formats bytes for people: "38.0 MiB", "18.5 GiB".
func mib(b int64) string {
	switch {
	case b <= 0:
		return "-"
	case b >= 10<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// ciLabel names an interval's confidence: "95% CI", "98.4% CI".
func ciLabel(c float64) string {
	if c <= 0 || c == 0.95 {
		return "95% CI"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", 100*c), ".0") + "% CI"
}

// startName is what tables call a tune's start: "live" for a site's
// production configuration, else "start".
func startName(res *results.Tune) string {
	if res.StartFrom == "live" {
		return "live"
	}
	return "start"
}

// baselinesText writes the rules of thumb beside the recommendation: what
// each would set and the recommendation's throughput against it, or why
// it was not measured.
func baselinesText(w io.Writer, res *results.Tune) {
	if len(res.Baselines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nrules of thumb (recommended/baseline throughput, paired holdout rounds):")
	for _, b := range res.Baselines {
		fmt.Fprintf(w, "  %-11s %s\n", b.Name, b.Rule)
		if len(b.Settings) > 0 {
			fmt.Fprintf(w, "  %-11s would set %s\n", "", strings.Join(b.Settings, ", "))
		}
		switch {
		case b.Rounds > 0:
			fmt.Fprintf(w, "  %-11s recommended/%s %.2f× [%.2f, %.2f] (%s, %d rounds), p99 %.2f×", "", b.Name, b.Ratio, b.CILow, b.CIHigh, ciLabel(b.Confidence), b.Rounds, b.P99Ratio)
			if b.NotMeasured != "" {
				fmt.Fprintf(w, "; %s", b.NotMeasured)
			}
			fmt.Fprintln(w)
		case b.NotMeasured != "":
			fmt.Fprintf(w, "  %-11s not measured: %s\n", "", b.NotMeasured)
		}
	}
}

// sizingText writes the knobs sized from what the stack reported after the
// load (opcache, the realpath cache, the InnoDB buffer pool, nginx's
// workers), each with the numbers it rests on.
func sizingText(w io.Writer, res *results.Tune) {
	if len(res.Sizing) == 0 {
		return
	}
	fmt.Fprintln(w, "\nsized from what the stack reported after the load (over 75% used or overflowed: raised to 2× the use; otherwise kept):")
	for _, d := range res.Sizing {
		fmt.Fprintf(w, "  %-34s %s\n", d.Knob, d.Reason)
	}
}
