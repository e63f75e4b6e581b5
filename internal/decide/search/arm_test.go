package search

import "testing"

func TestArmStatistic(t *testing.T) {
	bound := func(cpu, probe float64) run {
		return run{score: 1, rps: 100, p99: 10, cpu: cpu, probe: probe, bound: true}
	}
	idle := run{score: 1, rps: 100, p99: 10, cpu: 0.01}
	for _, c := range []struct {
		name      string
		inc, own  []run
		objective string
		want      string
	}{
		{"CPU-bound with probes", []run{bound(0.02, 2), bound(0.03, 3)}, []run{bound(0.01, 2), bound(0.015, 3)}, "throughput", StatCPUSpeed},
		{"one run without a probe", []run{bound(0.02, 2), bound(0.03, 0)}, []run{bound(0.01, 2), bound(0.015, 3)}, "throughput", StatCPU},
		{"not CPU-bound", []run{idle, idle}, []run{idle, idle}, "throughput", StatThroughput},
		{"no CPU figure", []run{bound(0, 2)}, []run{bound(0.01, 2)}, "throughput", StatThroughput},
		{"latency objective", []run{bound(0.02, 2)}, []run{bound(0.01, 2)}, "latency", StatP99},
	} {
		a := &arm{inc: c.inc, own: c.own}
		if got := a.statistic(c.objective); got != c.want {
			t.Errorf("%s: statistic %q, want %q", c.name, got, c.want)
		}
	}
	// At the machine's speed a round run on a machine 1.5× slower (CPU per
	// request and the probe both 1.5×) counts as the same speed.
	a := &arm{inc: []run{bound(0.02, 2), bound(0.03, 3)}, own: []run{bound(0.01, 2), bound(0.015, 3)}}
	p := a.pair(StatCPUSpeed)
	for i := range p.A {
		if p.A[i] != 100 || p.B[i] != 200 {
			t.Fatalf("pair at speed round %d: %v / %v, want 100 / 200", i, p.A[i], p.B[i])
		}
	}
	if raw := a.pair(StatCPU); raw.A[0] == raw.A[1] {
		t.Fatalf("raw pair does not move with the machine: %v", raw.A)
	}
}
