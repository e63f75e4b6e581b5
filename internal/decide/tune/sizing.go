package tune

import (
	"fmt"
	"maps"

	"github.com/phptune/phptune/internal/decide/sizing"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// The sizing step, between the search and the holdout: the knobs the
// search does not vary (opcache's sizes, the realpath cache, the InnoDB
// buffer pool, nginx's workers) are decided from what the stack reported
// in the recommendation's own trials (package sizing), so the holdout
// measures what they raise. Every trial's runtime figures are stored with
// it, so a resumed tune decides the same.

// sizingReadings picks the trials to size from: the ones that ran cfg at
// the tuned concurrency in phase (any phase but the curve when empty);
// without any, the last trial at that concurrency that carries runtime
// figures, and a note says so.
func sizingReadings(trials []results.Trial, cfg knob.Config, conns int, phase string) (rs []sizing.Reading, note string) {
	var nearest *results.Trial
	for i := range trials {
		tr := &trials[i]
		if tr.Bench == nil || tr.Status == StatusFailed || tr.Connections != conns || tr.Phase == PhaseCurve || (phase != "" && tr.Phase != phase) {
			continue
		}
		if maps.Equal(tr.Config, cfg) {
			rs = append(rs, sizing.Reading{Trial: tr.N, Bench: tr.Bench})
		} else if tr.Bench.Runtime != nil {
			nearest = tr
		}
	}
	if len(rs) == 0 && nearest != nil {
		rs = []sizing.Reading{{Trial: nearest.N, Bench: nearest.Bench}}
		note = fmt.Sprintf("the recommendation itself was not measured at %d connections: its caches are sized from trial %d, the last that was", conns, nearest.N)
	}
	return rs, note
}

// size applies package sizing's decisions to the search's recommendation
// rec and returns the configuration the holdout is to measure.
func (s *session) size(rec knob.Config, predictedMemB int64) (knob.Config, []results.SizeDecision) {
	rs, note := sizingReadings(s.trials, rec, s.opt.Conns, "")
	if note != "" {
		s.note("%s", note)
	}
	cfg, ds := sizing.Decide(sizing.Inputs{Config: rec, Readings: rs, Cores: s.opt.Cores,
		MemoryBudgetB: s.opt.Limits.MemoryBudgetB, PredictedMemB: predictedMemB})
	if err := cfg.Validate(); err != nil {
		// The rules only raise sizes within each knob's range; should a
		// combination still be refused, the search's choice stands.
		s.warn("the sized configuration is invalid (%v); the caches keep the search's values", err)
		return rec, ds
	}
	return cfg, ds
}

// checkSizing reads the recommendation's holdout trials again: a cache the
// rules would raise once more was still too small for the workload.
func (s *session) checkSizing(rec knob.Config) {
	rs, _ := sizingReadings(s.trials, rec, s.opt.Conns, PhaseHoldout)
	if len(rs) == 0 {
		return
	}
	_, ds := sizing.Decide(sizing.Inputs{Config: rec, Readings: rs, Cores: s.opt.Cores})
	for _, d := range ds {
		if d.Action == sizing.ActionRaised || d.Action == sizing.ActionSet {
			s.warn("in the holdout the recommendation's %s was still too small: %s", d.Knob, d.Reason)
		}
	}
}
