package report

import (
	"fmt"
	"io"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/errlog"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// CompareText prints phptune compare's table of a comparison run over
// d per run.
func CompareText(w io.Writer, res *results.Compare, d time.Duration) {
	fmt.Fprintf(w, "%s %s, %d connections, %d rounds of %s (medians; ratios against %s, paired by round, 95%% CI)\n",
		res.App, res.Workload, res.Connections, res.Rounds, d, res.Summary[0].Label)
	fmt.Fprintf(w, "%-24s %10s %10s %8s %22s %8s %12s %22s\n", "config", "rps", "p99 ms", "errors", "throughput ratio", "p99 ×", "PHP CPU/req", "PHP speed ratio")
	for _, row := range res.Summary {
		speed := "-"
		if row.PHPSpeedRatio > 0 {
			speed = fmt.Sprintf("%.2f× [%.2f, %.2f]", row.PHPSpeedRatio, row.PHPSpeedRatioLow, row.PHPSpeedRatioHigh)
		}
		fmt.Fprintf(w, "%-24s %10.1f %10.1f %7.2f%% %8.2f× [%.2f, %.2f] %7.2f× %9.2f ms %22s\n",
			row.Label, row.MedianRPS, row.MedianP99Ms, 100*row.MeanErrorRate, row.RatioRPS, row.RatioRPSLow, row.RatioRPSHigh, row.RatioP99, row.PHPCPUPerReqMs, speed)
	}
	fmt.Fprintln(w, "PHP speed ratio: the first config's PHP CPU per request ÷ this one's, each divided by the machine-speed probe's reading of its run (> 1: faster at the same machine speed)")
	if res.Engine == "locust" {
		fmt.Fprintf(w, "measured by Locust %s (%d local workers): its latencies are rounded buckets timed from each send; each run's warm-up was a throwaway Locust run\n", res.EngineVersion, res.Workers)
	}
	// The kernel's limits, and each configuration's backlogs the kernel
	// capped: those configurations ran with less than they ask for.
	for _, l := range sysctl.Lines(res.KernelLimits) {
		fmt.Fprintf(w, "kernel: %s\n", l)
	}
	for _, cc := range res.Configs {
		for _, b := range cc.Backlogs {
			if b.Effective < b.Asked {
				fmt.Fprintf(w, "%s: %s: %s\n", cc.Label, b.Knob, sysctl.BacklogText(b.Asked, b.Somaxconn))
			}
		}
	}
	for _, cc := range res.Configs {
		if p := errlog.PHPLine(cc.PHPErrors); p != "" {
			fmt.Fprintf(w, "%s: %s\n", cc.Label, p)
		}
	}
	for _, cc := range res.Configs {
		if q := cc.FromTune; q != nil {
			fmt.Fprintf(w, "%s is the recommendation of tune %s, whose verdict was: %s\n", cc.Label, q.ID, q.Verdict.Sentence)
		}
	}
	BlockedText(w, res.Blocked, "")
}

// BuildsText says which PHP builds ran, with an older source's warning.
func BuildsText(w io.Writer, bs []results.PHPBuild) {
	for _, b := range bs {
		if b.Missing {
			fmt.Fprintf(w, "php.build=%s: no longer in the build cache or PHP roots\n", b.ID)
			continue
		}
		fmt.Fprintf(w, "php.build=%s: PHP %s %s", b.ID, b.PHPVersion, b.Variant)
		if b.Training != "" {
			fmt.Fprintf(w, " trained on %s", b.Training)
		}
		if b.CFLAGS != "" {
			fmt.Fprintf(w, " (CFLAGS %s)", b.CFLAGS)
		}
		fmt.Fprintln(w)
		if b.Warning != "" {
			fmt.Fprintf(w, "  %s\n", b.Warning)
		}
	}
}
