package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/watch/errlog"
)

// RunsComparisonText writes a RunsComparison as phptune compare --runs
// prints it: one line per run with its ratios against the first, each
// run's status codes, what its latencies are, then the notes.
func RunsComparisonText(w io.Writer, c *RunsComparison) error {
	return safeText(w, func(w io.Writer) error { runsComparisonText(w, c); return nil })
}

func runsComparisonText(w io.Writer, c *RunsComparison) {
	if len(c.Runs) == 0 {
		return
	}
	idw := len("run")
	for _, r := range c.Runs {
		idw = max(idw, len(r.ID))
	}
	fmt.Fprintf(w, "stored runs side by side, ratios against %s (the first)\n", c.Runs[0].ID)
	fmt.Fprintf(w, "%-*s  %-20s  %-14s %9s %6s  %11s %6s  %11s %6s  %11s %6s  %7s\n",
		idw, "run", "engine", "load", "req/s", "×", "p50 ms", "×", "p95 ms", "×", "p99 ms", "×", "errors")
	for _, r := range c.Runs {
		fmt.Fprintf(w, "%-*s  %-20s  %-14s %9.1f %6s  %11s %6s  %11s %6s  %11s %6s  %6.2f%%\n",
			idw, r.ID, engineLabel(r), loadLabel(r), r.ThroughputRPS, runRatioText(r.ThroughputRatio),
			latencyText(r, r.P50Ms, 0), runRatioText(r.P50Ratio), latencyText(r, r.P95Ms, 1), runRatioText(r.P95Ratio),
			latencyText(r, r.P99Ms, 2), runRatioText(r.P99Ratio), 100*r.ErrorRate)
	}
	fmt.Fprintln(w, "status codes (share of the requests whose status is known)")
	for _, r := range c.Runs {
		fmt.Fprintf(w, "  %-*s  %s\n", idw, r.ID, statusText(r))
	}
	header := false
	for _, r := range c.Runs {
		p := errlog.PHPLine(r.PHPErrors)
		if p == "" {
			continue
		}
		if !header {
			fmt.Fprintln(w, "PHP's own messages in the web server's log (runs without any not listed)")
			header = true
		}
		fmt.Fprintf(w, "  %-*s  %s\n", idw, r.ID, p)
	}
	var engines []string
	seen := map[string]bool{}
	for _, r := range c.Runs {
		if seen[r.Latency] {
			continue
		}
		seen[r.Latency] = true
		switch r.Latency {
		case "locust_buckets":
			engines = append(engines, "locust: Locust's response-time buckets (1 ms below 100 ms, 10 ms below 1 s, 100 ms below 10 s), ± half a bucket, timed from each send")
		default:
			engines = append(engines, "phptune: HdrHistogram, 3 significant digits")
		}
	}
	for _, e := range engines {
		fmt.Fprintf(w, "latency, %s\n", e)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, f := range c.Forced {
		fmt.Fprintf(w, "forced (--force): %s\n", f)
	}
}

func engineLabel(r ComparedRun) string {
	s := r.Engine
	if r.EngineVersion != "" {
		s += " " + r.EngineVersion
	}
	if r.Workers > 0 {
		s += fmt.Sprintf(" (%dw)", r.Workers)
	}
	return s
}

func loadLabel(r ComparedRun) string {
	if r.Model == "open" {
		return fmt.Sprintf("open %.0f/s c%d", r.RateAskedRPS, r.Connections)
	}
	return fmt.Sprintf("%s c%d", r.Model, r.Connections)
}

// latencyText is one percentile: Locust's with its rounding (±), phptune's
// as measured.
func latencyText(r ComparedRun, ms float64, i int) string {
	if ms <= 0 {
		return "-"
	}
	if i < len(r.RoundingMs) {
		return fmt.Sprintf("%g ±%g", ms, r.RoundingMs[i])
	}
	return fmt.Sprintf("%.2f", ms)
}

func runRatioText(x float64) string {
	if x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", x)
}

func statusText(r ComparedRun) string {
	var known int64
	for _, n := range r.StatusCodes {
		known += n
	}
	var parts []string
	for _, k := range sortedKeys(r.StatusCodes) {
		parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", k, r.StatusCodes[k], 100*float64(r.StatusCodes[k])/float64(known)))
	}
	s := strings.Join(parts, ", ")
	if noAnswer := r.Requests - known - r.StatusUnknown; noAnswer > 0 {
		s = strings.TrimPrefix(s+fmt.Sprintf(", %d without an answer", noAnswer), ", ")
	}
	if r.StatusUnknown > 0 {
		s = strings.TrimPrefix(s+fmt.Sprintf(", %d not known", r.StatusUnknown), ", ")
	}
	if s == "" {
		s = "none counted"
	}
	return s
}
