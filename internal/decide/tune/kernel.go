package tune

import (
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// kernelEvidence keeps the tuner from claiming a backlog it could not get:
// listen(2) caps every backlog at net.core.somaxconn, silently, so a
// backlog knob above it was measured at somaxconn. The environment's
// kernel limits get the recommendation's backlogs, asked and effective; a
// changed backlog knob that was capped gets its effective value beside
// its ratio; and each capped backlog of the recommendation gets a warning
// naming the fix. Without kernel limits (a result from before they were
// read, or /proc/sys unreadable) nothing is said.
func kernelEvidence(t *results.Tune, rec knob.Config, conns int, warn func(string, ...any)) {
	if t.Environment == nil || t.Environment.KernelLimits == nil {
		return
	}
	k := t.Environment.KernelLimits
	som := sysctl.RunSomaxconn(k)
	if som < 0 {
		return
	}
	k.Backlogs = sysctl.Backlogs(rec, som)
	for i := range t.Changes {
		if c := &t.Changes[i]; sysctl.IsBacklogKnob(c.Knob) {
			c.Effective = sysctl.CappedNote(c.Knob, c.To, som)
		}
	}
	for _, b := range k.Backlogs {
		if b.Effective < b.Asked {
			warn("%s=%d (for %d connections) was capped at %d by net.core.somaxconn during the trials: what was measured is a backlog of %d, not %d; install the recommendation's sysctl fragment (%s) or tune again with --apply-sysctl, then measure again",
				b.Knob, b.Asked, conns, b.Effective, b.Effective, b.Asked, sysctl.FragmentPath)
		}
	}
}
