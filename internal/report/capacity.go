package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// capacityPoint is one step of a capacity search as the latency-vs-rate
// chart draws it.
type capacityPoint struct {
	N        int      `json:"n"`
	Phase    string   `json:"phase"`
	Rate     float64  `json:"rate"`
	Achieved float64  `json:"achieved"`
	P50      float64  `json:"p50_ms"`
	P90      float64  `json:"p90_ms"`
	P99      float64  `json:"p99_ms"`
	Errors   float64  `json:"errors_pct"`
	Pass     bool     `json:"pass"`
	Reasons  []string `json:"reasons,omitempty"`
}

// capacityCurve is one capacity search: its steps, bounds and bracket.
type capacityCurve struct {
	Label    string            `json:"label"`
	Points   []capacityPoint   `json:"points"`
	Bounds   []results.SLOTerm `json:"bounds"`
	Capacity float64           `json:"capacity"`
	FirstErr float64           `json:"first_fail"`
}

func capacityCurveOf(label string, c *results.Capacity) capacityCurve {
	cv := capacityCurve{Label: label, Bounds: c.SLOTerms, Capacity: c.CapacityRPS, FirstErr: c.FirstFailRPS}
	for _, s := range c.Steps {
		p := capacityPoint{N: s.N, Phase: s.Phase, Rate: s.RateRPS, Achieved: s.AchievedRPS, Pass: s.Pass, Reasons: s.FailReasons}
		if b := s.Bench; b != nil {
			p.P50, p.P90, p.P99 = b.Latency.P50Ms, b.Latency.P90Ms, b.Latency.P99Ms
			if n := b.Requests + b.RequestsUnsent + b.RequestsUnanswered; n > 0 {
				p.Errors = 100 * float64(b.Errors) / float64(n)
			}
		}
		cv.Points = append(cv.Points, p)
	}
	return cv
}

// capacityVerdict says a search's result in one line.
func capacityVerdict(c *results.Capacity) string {
	switch c.Outcome {
	case "below minimum":
		return fmt.Sprintf("no capacity at %s: it failed even at %s rps", c.SLO, rps(c.MinRateRPS))
	case "above maximum":
		return fmt.Sprintf("at least %s rps at %s (the maximum rate tried passed)", rps(c.CapacityRPS), c.SLO)
	}
	s := fmt.Sprintf("%s rps at %s", rps(c.CapacityRPS), c.SLO)
	if c.FirstFailRPS > 0 {
		s += fmt.Sprintf(": passed at %s rps, failed at %s rps", rps(c.CapacityRPS), rps(c.FirstFailRPS))
	}
	if c.Outcome != "bracketed" {
		s += " (" + c.Outcome + ")"
	}
	if c.Confirmed {
		s += "; both re-measured at the end and confirmed"
	} else if c.Outcome == "bracketed" {
		s += "; NOT confirmed by the re-measurement"
	}
	return s
}

// rps formats a rate as the search chose it (4 significant digits).
func rps(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// CapacityText writes a capacity search: the capacity with its bracket,
// how the steps were run, the latency-vs-rate table and the warnings.
func CapacityText(w io.Writer, c *results.Capacity) error {
	return safeText(w, func(w io.Writer) error { return capacityText(w, c) })
}

func capacityText(w io.Writer, c *results.Capacity) error {
	title := "phptune capacity " + c.ID
	if c.Label != "" {
		title = "capacity of the " + c.Label + " configuration"
	}
	fmt.Fprintf(w, "%s: %s", title, c.Target)
	if c.App != "" {
		fmt.Fprintf(w, " (%s, workload %s)", c.App, c.Workload)
	}
	fmt.Fprintf(w, ", %d steps in %s\n", len(c.Steps), (time.Duration(c.WallS) * time.Second).String())
	fmt.Fprintf(w, "\ncapacity  %s\n", capacityVerdict(c))
	fmt.Fprintf(w, "plan      from %s rps (%s), ×%s per ramp step, bisection to %.0f%%; %s\n",
		rps(c.StartRateRPS), orDash(c.StartFrom), strconv.FormatFloat(c.Growth, 'f', -1, 64), 100*c.Tolerance, c.StepRule)
	fmt.Fprintln(w)
	capacityTable(w, c)
	BlockedText(w, c.Blocked, "")
	for _, warn := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// capacityTable writes the latency-vs-rate curve: one line per step, by
// rate (then order), with its verdict and why it failed.
func capacityTable(w io.Writer, c *results.Capacity) {
	steps := append([]results.CapacityStep(nil), c.Steps...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].RateRPS < steps[j].RateRPS })
	fmt.Fprintf(w, "%10s %10s %10s %10s %10s %8s %7s %-4s  %s\n", "rate rps", "achieved", "p50 ms", "p90 ms", "p99 ms", "errors", "steal", "", "step")
	for _, s := range steps {
		var p50, p90, p99, errs string = "-", "-", "-", "-"
		if b := s.Bench; b != nil && b.Requests > 0 {
			p50, p90, p99 = ms(b.Latency.P50Ms), ms(b.Latency.P90Ms), ms(b.Latency.P99Ms)
		}
		if b := s.Bench; b != nil {
			if n := b.Requests + b.RequestsUnsent + b.RequestsUnanswered; n > 0 {
				errs = fmt.Sprintf("%.2f%%", 100*float64(b.Errors+b.RequestsUnsent+b.RequestsUnanswered)/float64(n))
			}
		}
		verdict := "pass"
		if !s.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%10s %10.1f %10s %10s %10s %8s %6.0f%% %-4s  %d %s", rps(s.RateRPS), s.AchievedRPS, p50, p90, p99, errs, s.StealPct, verdict, s.N, s.Phase)
		if len(s.FailReasons) > 0 {
			fmt.Fprintf(w, ": %s", strings.Join(s.FailReasons, "; "))
		}
		fmt.Fprintln(w)
	}
}

func ms(v float64) string {
	if v >= 100 || v == 0 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// tuneCapacityText writes a capacity tune's verdict.
func tuneCapacityText(w io.Writer, tc *results.TuneCapacity) {
	if tc == nil {
		return
	}
	fmt.Fprintf(w, "\ncapacity at %s (open model):\n", tc.SLO)
	for _, c := range []*results.Capacity{tc.Start, tc.Recommended} {
		if c == nil {
			continue
		}
		fmt.Fprintf(w, "  %-12s %s\n", c.Label, capacityVerdict(c))
	}
	if tc.Ratio > 0 {
		fmt.Fprintf(w, "  recommended/start capacity %.2f×", tc.Ratio)
		if tc.RatioLow > 0 && tc.RatioHigh > 0 {
			fmt.Fprintf(w, " (the brackets allow %.2f× to %.2f×)", tc.RatioLow, tc.RatioHigh)
		}
		fmt.Fprintln(w)
	}
	for _, c := range []*results.Capacity{tc.Start, tc.Recommended} {
		if c == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s: latency against rate\n", c.Label)
		capacityTable(w, c)
		for _, warn := range c.Warnings {
			fmt.Fprintf(w, "warning (%s capacity): %s\n", c.Label, warn)
		}
	}
}
