package advise

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/traffic/load"
)

// TuneComparison is a stored tune's measured pool size beside advise's
// own, with the difference explained.
type TuneComparison struct {
	RunID     string    `json:"run_id"`
	Selected  string    `json:"selected"` // "--tune" or "the newest tune of PHP X"
	App       string    `json:"app"`
	Workload  string    `json:"workload"`
	StartedAt time.Time `json:"started_at"`
	PHP       string    `json:"php_version"`
	// Verdict is the tune's own verdict, word for word.
	Verdict results.Verdict `json:"verdict"`
	// The tune's recommendation and what it measured.
	PM          string `json:"pm"`
	MaxChildren int64  `json:"max_children"`
	// Knee is the concurrency where the knee scan's throughput stopped
	// rising (0: not recorded); Connections the tune's load.
	Knee           int     `json:"knee_connections,omitempty"`
	Connections    int     `json:"connections,omitempty"`
	RecommendedRPS float64 `json:"recommended_rps,omitempty"`
	StartRPS       float64 `json:"start_rps,omitempty"`
	// Cores and MemoryB are the tune's machine.
	Cores   int          `json:"cores,omitempty"`
	MemoryB int64        `json:"memory_bytes,omitempty"`
	Pools   []PoolVsTune `json:"pools"`
	Summary string       `json:"summary"`
	// Warning says how many of the tune's measured requests answered a
	// redirect or an error status; when most did, RecommendedRPS is 0 and
	// no gain of the tune is quoted.
	Warning  string             `json:"warning,omitempty"`
	Measured []results.Decision `json:"-"`
}

// PoolVsTune is one pool's size by advise beside the tune's.
type PoolVsTune struct {
	Pool       string `json:"pool"`
	Configured int64  `json:"configured"`
	Advise     int64  `json:"advise"`
	Tune       int64  `json:"tune"`
	Why        string `json:"why"`
}

// kneeLabel reads the knee from the knee scan curve's label ("knee scan
// (static pool), knee ≈ 12").
var kneeLabel = regexp.MustCompile(`knee ≈ (\d+)`)

// TunePHP is the PHP version a tune ran ("8.2.36"; "" when not recorded).
func TunePHP(t *results.Tune) string {
	if t == nil || t.Environment == nil {
		return ""
	}
	if v := t.Environment.Versions["php-fpm"]; v != "" {
		return v
	}
	return t.Environment.Versions["php"]
}

// CompareTune puts the tune t (stored as runID; selected says how it was
// chosen) beside a's pool sizes and explains each difference: advise sends
// no load and sizes by memory and the pool's own peak counters, the tune
// measured where throughput stops rising on its lab. It returns nil when
// the tune holds no pm.max_children.
func CompareTune(a Advice, t *results.Tune, runID, selected string) *TuneComparison {
	if t == nil {
		return nil
	}
	n, err := strconv.ParseInt(t.Recommended["pm.max_children"], 10, 64)
	if err != nil || n <= 0 {
		return nil
	}
	c := &TuneComparison{RunID: runID, Selected: selected, App: t.App, Workload: t.Workload, StartedAt: t.StartedAt, PHP: TunePHP(t),
		PM: t.Recommended["pm"], MaxChildren: n, Measured: t.Decisions, Verdict: t.TheVerdict()}
	for _, cv := range t.Curves {
		if m := kneeLabel.FindStringSubmatch(cv.Label); m != nil {
			c.Knee, _ = strconv.Atoi(m[1])
		}
	}
	if h := t.Holdout; h != nil {
		c.RecommendedRPS, c.StartRPS = h.RecommendedRPS, h.StartRPS
	}
	for _, tr := range t.Trials {
		if tr.Phase == "holdout" {
			c.Connections = max(c.Connections, tr.Connections)
		}
	}
	if e := t.Environment; e != nil {
		c.Cores, c.MemoryB = e.Cores, e.MemoryB
	}
	measured := fmt.Sprintf("the tune measured pm.max_children %d", n)
	var benches []*results.Bench
	for _, tr := range t.Trials {
		benches = append(benches, tr.Bench)
	}
	if bad, all := load.NotThePage(benches...); all > 0 && 2*bad > all {
		// Mostly redirects or error pages: its figures time those, not
		// the site, so no gain of it is quoted.
		c.RecommendedRPS = 0
		c.Warning = fmt.Sprintf("%d of the tune's %d measured requests (%.0f%%) answered a redirect or an error status, not the page: its figures time those, not the site, and no gain of it is quoted; tune again on a page that answers 200",
			bad, all, 100*float64(bad)/float64(all))
	} else if bad > 0 {
		c.Warning = fmt.Sprintf("%d of the tune's %d measured requests (%.1f%%) answered a redirect or an error status, not the page", bad, all, 100*float64(bad)/float64(all))
	}
	if c.Knee > 0 {
		measured += fmt.Sprintf(" (its knee scan's throughput stopped rising at about %d connections", c.Knee)
		if c.RecommendedRPS > 0 {
			measured += fmt.Sprintf("; %.0f rps at %d connections, %.2f× its start's", c.RecommendedRPS, c.Connections, c.RecommendedRPS/max(c.StartRPS, 1e-9))
		}
		measured += ")"
	} else if c.RecommendedRPS > 0 {
		measured += fmt.Sprintf(" (%.0f rps at %d connections, %.2f× its start's)", c.RecommendedRPS, c.Connections, c.RecommendedRPS/max(c.StartRPS, 1e-9))
	}
	c.Summary = fmt.Sprintf("Advise sends no load: it sizes each pool by the host's memory and the pool's own peak counters. %s on %s %s, a lab of %s: where throughput stops rising, which advise cannot see.",
		capitalize(measured), t.App, t.Workload, machine(c.Cores, c.MemoryB))
	if c.Warning != "" {
		c.Summary += " Warning: " + c.Warning + "."
	}
	for _, p := range a.Pools {
		pv := PoolVsTune{Pool: p.Pool, Configured: p.MaxChildren, Advise: p.Recommended, Tune: n}
		fit := int64(0)
		if p.WorkerPSSP95 > 0 {
			fit = max(1, p.MemoryShareB/p.WorkerPSSP95)
		}
		lowered := p.Recommended < p.MaxChildren
		switch {
		case p.Recommended == n:
			pv.Why = "the same size"
		case p.Recommended < n && (lowered || fit > 0 && fit < n):
			pv.Why = fmt.Sprintf("advise is lower: this host's memory holds %d workers of %s (the pool's share %s); the tune's %d would need %s. Memory bounds this host before throughput does", fit, mib(p.WorkerPSSP95), mib(p.MemoryShareB), n, mib(n*p.WorkerPSSP95))
		case p.Recommended < n && p.MaxReached > 0:
			pv.Why = fmt.Sprintf("advise is lower: the pool reached pm.max_children %d times and advise raises at most twofold at a time without a measurement; the tune found throughput still rising up to %d", p.MaxReached, n)
		case p.Recommended < n:
			pv.Why = fmt.Sprintf("advise is lower: the pool never reached pm.max_children, so its own counters ask for no more; the tune found throughput still rising up to %d under its load (more traffic here would need them)", n)
		case lowered:
			pv.Why = fmt.Sprintf("advise lowers the pool to %d for memory, still more than the tune's %d: the tune measured no more throughput past %d workers, so the others would only hold memory when busy", p.Recommended, n, n)
		case p.MaxReached > 0:
			pv.Why = fmt.Sprintf("advise is higher: the pool reached pm.max_children %d times and memory allows %d; the tune measured no more throughput past %d workers, so more workers here would mostly hold memory and queue on the CPU or the database, unless this host's traffic differs from the tune's workload", p.MaxReached, p.Recommended, n)
		default:
			pv.Why = fmt.Sprintf("advise keeps the configured %d, more than the tune's %d: memory allows it and the counters ask for no change; the tune measured no more throughput past %d workers, so the extra workers only hold memory when busy", p.Recommended, n, n)
		}
		c.Pools = append(c.Pools, pv)
	}
	return c
}

func machine(cores int, mem int64) string {
	switch {
	case cores > 0 && mem > 0:
		return fmt.Sprintf("%d cores and %.1f GiB", cores, float64(mem)/(1<<30))
	case cores > 0:
		return fmt.Sprintf("%d cores", cores)
	}
	return "unrecorded size"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
