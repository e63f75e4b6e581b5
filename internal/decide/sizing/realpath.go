package sizing

import (
	"fmt"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// KnobRealpath is the realpath cache's size.
const KnobRealpath = "realpath_cache_size"

// decideRealpath sizes each worker's realpath cache from the fullest one
// read. A full cache evicts entries and the worker stats the file system
// again on every include; it never fails, so only the use tells.
func decideRealpath(cfg knob.Config, in Inputs) results.SizeDecision {
	var best *results.RealpathStatus
	var trials []int
	why := "the stack reported no realpath cache figures"
	for _, r := range in.Readings {
		if r.Bench == nil || r.Bench.Runtime == nil {
			continue
		}
		rp := r.Bench.Runtime.Realpath
		if rp == nil {
			for _, e := range r.Bench.Runtime.Errors {
				why = e
				break
			}
			continue
		}
		if best == nil || rp.UsedB > best.UsedB {
			c := *rp
			best = &c
		}
		trials = append(trials, r.Trial)
	}
	if best == nil {
		return notRead(cfg, KnobRealpath, why)
	}
	size := cfg.Bytes(KnobRealpath)
	sh := share(best.UsedB, size)
	d := decision(cfg, KnobRealpath, trials)
	d.Figures["size_bytes"], d.Figures["used_bytes"], d.Figures["entries"], d.Figures["used_share"] = b2f(size), b2f(best.UsedB), b2f(best.Entries), sh
	state := fmt.Sprintf("the fullest worker's cache holds %d entries in %s of %s (%s)", best.Entries, mib(best.UsedB), mib(size), pct(sh))
	if sh > NearFull {
		set(cfg, &d, roundUp(int64(Headroom*float64(best.UsedB)), 1<<20))
		d.Reason = fmt.Sprintf("%s %s → %s: %s; %.0f× that, rounded up to a multiple of 1 MiB", d.Action, d.From, d.To, state, Headroom)
	} else {
		d.Action = ActionKept
		d.Reason = fmt.Sprintf("kept %s: %s", d.From, state)
	}
	return d
}
