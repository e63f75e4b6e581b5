package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
)

// The model must keep matching what was measured on this machine (CONTEXT.md):
// the io page at 50 connections, 229 rps with the distro pool and 1988 rps
// with a static pool of 48; phpinfo-like pages flat at ~2k rps beyond the cores.
func TestModelMatchesMeasurements(t *testing.T) {
	static48, _ := knob.Defaults().Apply([]string{"pm=static", "pm.max_children=48"})
	static16, _ := knob.Defaults().Apply([]string{"pm=static", "pm.max_children=16"})
	tests := []struct {
		name   string
		w      Workload
		cfg    knob.Config
		conns  int
		lo, hi float64
	}{
		{"io, distro pool", IOWait(), knob.Defaults(), 50, 200, 260},
		{"io, static 48", IOWait(), static48, 50, 1800, 2100},
		{"cpu, distro pool", CPUBound(), knob.Defaults(), 10, 1900, 2300},
		{"cpu, static 16: no better", CPUBound(), static16, 50, 1800, 2300},
	}
	for _, tt := range tests {
		if got := tt.w.True(tt.cfg, tt.conns); got < tt.lo || got > tt.hi {
			t.Errorf("%s: %.0f rps, want %.0f..%.0f", tt.name, got, tt.lo, tt.hi)
		}
	}
}

func TestStackNoiseAndFailures(t *testing.T) {
	ctx := context.Background()
	w := IOWait()
	w.FailAbove = 10
	s := New(w, 1)
	big, _ := knob.Defaults().Apply([]string{"pm=static", "pm.max_children=11"})
	if err := s.Apply(ctx, big); err == nil {
		t.Error("a pool above FailAbove started")
	}
	if err := s.Apply(ctx, knob.Defaults()); err != nil {
		t.Fatal(err)
	}
	var sum, sum2 float64
	const n = 400
	for i := 0; i < n; i++ {
		b, err := s.Measure(ctx, 50, time.Second, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := math.Log(b.ThroughputRPS / w.True(knob.Defaults(), 50))
		sum += r
		sum2 += r * r
	}
	sd := math.Sqrt(sum2/n - (sum/n)*(sum/n))
	if sd < 0.05 || sd > 0.15 {
		t.Errorf("relative noise %.3f, want about the configured %.2f plus steal dips", sd, w.Noise)
	}
}
