package observe

import (
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// The window's speed-probe figure is the median of its samples' medians;
// samples without readings and those outside the window are left out.
func TestDeriveSpeedProbe(t *testing.T) {
	obs := &results.Observation{Samples: []results.Sample{
		{TS: 1, DTS: 1, SpeedProbeMs: 9, SpeedProbeN: 10}, // warm-up
		{TS: 2, DTS: 1, SpeedProbeMs: 2, SpeedProbeN: 10},
		{TS: 3, DTS: 1, SpeedProbeMs: 3, SpeedProbeN: 9},
		{TS: 4, DTS: 1},
		{TS: 5, DTS: 1, SpeedProbeMs: 2.5, SpeedProbeN: 10},
	}}
	Derive(obs, Window{FromS: 1})
	if got := obs.Derived.SpeedProbeMs; got != 2.5 {
		t.Fatalf("speed probe %v, want 2.5", got)
	}
	Derive(obs, Window{FromS: 3.8})
	if got := obs.Derived.SpeedProbeMs; got != 2.5 {
		t.Fatalf("speed probe %v, want 2.5 (the sample without readings left out)", got)
	}
}
