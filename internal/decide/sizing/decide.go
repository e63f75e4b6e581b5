package sizing

import (
	"fmt"
	"math"
	"strconv"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// NearFull is the used share above which a cache is raised: past three
// quarters, the next pages of the app (ones the tune's workload did not
// visit) or a little more data would fill it.
const NearFull = 0.75

// Headroom is what a raised cache is sized to, as a multiple of what the
// workload used: a tune loads only the workload's pages, production reaches
// more of the app (admin pages, other routes, cron), which compile more
// scripts and touch more rows; twice the measured use leaves the cache half
// empty for this workload, below NearFull after it grows by half.
const Headroom = 2.0

// Actions of a decision.
const (
	ActionRaised  = "raised"
	ActionKept    = "kept"
	ActionSet     = "set"
	ActionNotRead = "not read"
)

// Reading is one trial's measurement the decisions read.
type Reading struct {
	Trial int
	Bench *results.Bench
}

// Inputs are what Decide needs.
type Inputs struct {
	// Config is the search's recommendation, the configuration the
	// readings were taken with (or the nearest measured one).
	Config   knob.Config
	Readings []Reading
	Cores    int
	// MemoryBudgetB (0: none) and PredictedMemB (the recommendation's
	// predicted PSS) bound what a raise may add where raising makes
	// memory resident (the InnoDB buffer pool fills as data is read).
	MemoryBudgetB, PredictedMemB int64
}

// Decide sizes every knob of the package from in and returns the
// configuration with the raised values and one decision per knob, in a
// fixed order: opcache (memory, interned strings, keys, the JIT buffer when
// the JIT is on), realpath_cache_size, the InnoDB buffer pool ("not read"
// on a stack without MariaDB) and nginx's workers.
func Decide(in Inputs) (knob.Config, []results.SizeDecision) {
	cfg := in.Config.Clone()
	var out []results.SizeDecision
	out = append(out, decideOpcache(cfg, in)...)
	out = append(out, decideRealpath(cfg, in))
	out = append(out, decideBufferPool(cfg, in))
	out = append(out, decideNginxWorkers(cfg, in))
	return cfg, out
}

// decision starts a decision on k with the configuration's value.
func decision(cfg knob.Config, k string, trials []int) results.SizeDecision {
	return results.SizeDecision{Knob: k, From: cfg[k], To: cfg[k], Trials: trials, Figures: map[string]float64{}}
}

// notRead is a decision without readings: the knob stays as it is.
func notRead(cfg knob.Config, k, why string) results.SizeDecision {
	return results.SizeDecision{Knob: k, From: cfg[k], To: cfg[k], Action: ActionNotRead, Reason: "not read: " + why}
}

// set records a new value for d's knob in cfg, clamped to the knob's
// range and never lowered, and marks d raised (or kept when clamping left
// the value as it was).
func set(cfg knob.Config, d *results.SizeDecision, value int64) {
	k, err := knob.Lookup(d.Knob)
	if err != nil {
		return
	}
	// Never below the current value (the rule raises or keeps) nor
	// outside the knob's range.
	current := cfg.Int(d.Knob)
	if k.Kind == knob.Size {
		current = cfg.Bytes(d.Knob)
	}
	value = min(max(value, current, k.Min), k.Max)
	v := strconv.FormatInt(value, 10)
	if k.Kind == knob.Size {
		v = knob.FormatSize(value)
	}
	if nv, err := k.Normalize(v); err == nil && nv != cfg[d.Knob] {
		cfg[d.Knob], d.To, d.Action = nv, nv, ActionRaised
	} else {
		d.Action = ActionKept
	}
}

// roundUp rounds n up to a multiple of unit.
func roundUp(n, unit int64) int64 {
	if unit <= 0 {
		return n
	}
	return (n + unit - 1) / unit * unit
}

// share is used/size, 0 for an unknown size.
func share(used, size int64) float64 {
	if size <= 0 {
		return 0
	}
	return float64(used) / float64(size)
}

// pct formats a share as "7%".
func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// mib formats bytes as "9 MiB", "9.5 MiB", "512 KiB".
func mib(b int64) string {
	switch {
	case b >= 100<<20 || (b >= 1<<20 && b%(1<<20) == 0):
		return fmt.Sprintf("%.0f MiB", math.Round(float64(b)/(1<<20)))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (b+512)>>10)
}

// b2f is a figure for SizeDecision.Figures.
func b2f(b int64) float64 { return float64(b) }

// bool2f is a flag for SizeDecision.Figures.
func bool2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
