package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/knob"
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
	PHPByConfigText(w, res)
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

// PHPByConfigText says what PHP logged in each configuration's runs. When
// the configurations ran different PHP builds (php.build: a PHP root's
// newer PHP beside the distro's, say), every configuration that was
// measured gets a line, so that a PHP's speed is read beside what it
// costs the site's code:
//
//	php84 (PHP 8.4.28): 1.12× throughput; 0 fatal errors, 0 warnings, 312 deprecations per 1000 requests; deprecations most from wp-includes/x.php (300: Implicitly marking ...)
//
// (counts over its rounds when the result holds no request counts);
// otherwise each configuration whose PHP logged something gets
// errlog.PHPLine.
func PHPByConfigText(w io.Writer, res *results.Compare) {
	if !buildsDiffer(res.Configs) {
		for _, cc := range res.Configs {
			if p := errlog.PHPLine(cc.PHPErrors); p != "" {
				fmt.Fprintf(w, "%s: %s\n", cc.Label, p)
			}
		}
		return
	}
	fmt.Fprintln(w, "PHP's messages by configuration (each runs its own php.build):")
	for i, cc := range res.Configs {
		if cc.Failed != "" || len(cc.RPS) == 0 {
			continue
		}
		ratio := ""
		if i < len(res.Summary) && i > 0 {
			ratio = fmt.Sprintf("%.2f× throughput; ", res.Summary[i].RatioRPS)
		}
		fmt.Fprintf(w, "  %s (%s): %s%s\n", termsafe.Line(cc.Label), buildName(cc.Config[knob.BuildKnob], res.Builds), ratio, phpRates(cc))
	}
	fmt.Fprintln(w, "  "+PHPLogCaveat)
}

// PHPLogCaveat says what the counts of PHP's messages leave out: PHP logs
// only what error_reporting lets through, and the lab keeps the site's
// (a lab that logged more would not measure production's work).
const PHPLogCaveat = "(as PHP logged them: only what error_reporting lets through; Debian's php.ini leaves out deprecations, WordPress without WP_DEBUG notices too; phptune php lint lists those raised compiling each file)"

// buildsDiffer says whether configs ran more than one php.build ("" is
// the distro's).
func buildsDiffer(configs []results.CompareConfig) bool {
	seen := map[string]bool{}
	for _, cc := range configs {
		b := cc.Config[knob.BuildKnob]
		if b == "" {
			b = "distro"
		}
		seen[b] = true
	}
	return len(seen) > 1
}

// buildName names a php.build value for a reader: "PHP 8.4.28" from the
// result's builds, "the distro's PHP" for none.
func buildName(id string, builds []results.PHPBuild) string {
	if id == "" || id == "distro" {
		return "the distro's PHP"
	}
	for _, b := range builds {
		if b.ID == id && b.PHPVersion != "" {
			return "PHP " + termsafe.Line(b.PHPVersion)
		}
	}
	return "php.build=" + termsafe.Line(id)
}

// phpRates is a configuration's fatal errors, warnings and deprecations
// per 1000 requests (or counted over its rounds), then the file most of
// each class came from.
func phpRates(cc results.CompareConfig) string {
	var reqs int64
	for _, n := range cc.Requests {
		reqs += n
	}
	count := func(class string) (int64, *results.PHPErrorClass) {
		if cc.PHPErrors == nil {
			return 0, nil
		}
		for i := range cc.PHPErrors.Classes {
			if c := &cc.PHPErrors.Classes[i]; c.Class == class {
				return c.Count, c
			}
		}
		return 0, nil
	}
	var parts, tops []string
	for _, class := range []string{errlog.PHPFatal, errlog.PHPWarning, errlog.PHPDeprecation} {
		n, c := count(class)
		noun := map[string]string{errlog.PHPFatal: "fatal errors", errlog.PHPWarning: "warnings", errlog.PHPDeprecation: "deprecations"}[class]
		if reqs > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", perThousand(n, reqs), noun))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n, noun))
		}
		if c != nil && len(c.Files) > 0 {
			f := c.Files[0]
			file := f.File
			if file == "" {
				file = "(no file named)"
			}
			top := fmt.Sprintf("%s most from %s (%d", strings.TrimSuffix(noun, "s"), termsafe.Line(file), f.Count)
			if f.Example != "" {
				top += ": " + termsafe.Line(f.Example)
			}
			tops = append(tops, top+")")
		}
	}
	out := strings.Join(parts, ", ")
	if reqs > 0 {
		out += fmt.Sprintf(" per 1000 requests (%d requests)", reqs)
	} else {
		out += fmt.Sprintf(" over its %d rounds", len(cc.RPS))
	}
	if len(tops) > 0 {
		out += "; " + strings.Join(tops, "; ")
	}
	return out
}

// perThousand is n per 1000 of reqs: "0", "0.04", "312".
func perThousand(n, reqs int64) string {
	if n == 0 {
		return "0"
	}
	r := 1000 * float64(n) / float64(reqs)
	switch {
	case r >= 10:
		return fmt.Sprintf("%.0f", r)
	case r >= 0.1:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2g", r)
}
