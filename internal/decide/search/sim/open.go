package sim

import (
	"context"
	"math"
	"time"

	"github.com/phptune/phptune/internal/decide/capacity"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// Capacity is the noise-free highest rate cfg serves (requests/s): every
// worker busy, or every core the stack has, whichever binds first.
func (w Workload) Capacity(cfg knob.Config) float64 {
	n := int(cfg.PHPWorkers())
	return w.throughput(cfg, n, w.CPU(cfg, n), 0)
}

// OpenLatency is the simulated open model's latency, in ms, at rate
// requests/s when the stack serves mu requests/s with s ms per request,
// for a step of warmup then d: below capacity the service time plus a
// queueing delay that grows as 1/(1-ρ), at most what a step this long can
// build; above it the queue grows by (ρ-1) seconds of work per second
// from the start of the warm-up, so the request sent at fraction f of the
// measured part waits (ρ-1)·(warmup + f·d) more. p is the percentile.
func OpenLatency(rate, mu, s float64, warmup, d time.Duration, p float64) float64 {
	rho := rate / mu
	span := (warmup + d).Seconds() * 1000
	f := p / 100
	steady := 0.0
	if r := math.Min(rho, 0.999); r > 0 {
		// Mean wait of a queue with that load, times a tail factor
		// growing with the percentile (an exponential tail's p99 is
		// 4.6 × its mean).
		steady = 1000 / mu * r / (1 - r) * -math.Log(math.Max(1-f, 1e-4))
	}
	lat := s + math.Min(steady, span)
	if rho > 1 {
		lat += (rho - 1) * (warmup.Seconds() + f*d.Seconds()) * 1000
	}
	return lat
}

// MeasureRate runs the simulated open model as p says: at p.Rate for
// p.Warmup then p.Duration with up to p.Connections connections. The stack's service rate (Capacity) varies run
// to run with the workload's noise and steal dips, and Scale, when set,
// multiplies it (a test's injected noisy step).
// Above capacity the queue overflows the pool's accept queue
// (listen.backlog) into 502s, and requests still queued when the run ends
// are unanswered.
func (s *Stack) MeasureRate(ctx context.Context, p capacity.Plan) (*results.Bench, error) {
	rate, conns, d, warmup := p.Rate, p.Connections, p.Duration, p.Warmup
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.cfg == nil {
		return nil, ErrNoConfig
	}
	s.Measures++
	s.RateSteps++
	s.advance(d + warmup)
	dip := s.W.StealDip
	if dip == 0 {
		dip = 0.3
	}
	steal := 0.01 * s.rng.Float64()
	if s.rng.Float64() < s.W.StealProb {
		steal = dip * (0.5 + 0.5*s.rng.Float64())
	}
	n := int(s.cfg.PHPWorkers())
	cpu := s.W.CPU(s.cfg, n)
	mu := s.W.throughput(s.cfg, n, cpu, steal) * math.Exp(s.rng.NormFloat64()*s.W.Noise)
	if s.Scale != nil {
		mu *= s.Scale(s.RateSteps, rate)
	}
	svc := cpu + s.W.WaitMs
	secs := d.Seconds()
	asked := rate * secs
	lat := func(p float64) float64 { return OpenLatency(rate, mu, svc, warmup, d, p) }
	b := &results.Bench{
		SchemaVersion: results.SchemaVersion, Kind: results.KindBench, Target: "sim://" + s.W.Name,
		Protocol: "http", Model: "open", Connections: conns, KeepAlive: true, RateAskedRPS: rate,
		WarmupS: warmup.Seconds(), DurationS: secs,
		Latency: results.Latency{MinMs: svc, MeanMs: lat(60), P50Ms: lat(50), P90Ms: lat(90), P95Ms: lat(95), P99Ms: lat(99), P999Ms: lat(99.9), MaxMs: lat(100)},
		Observation: &results.Observation{IntervalS: secs,
			Derived: results.Derived{MaxStealPct: 100 * steal, CPUSecondsPerRequest: map[string]float64{"stack": cpu / 1000}}},
	}
	reqs, errs := asked, 0.0
	if rate > mu {
		// The backlog the kernel holds for the pool, then 502s.
		backlog := float64(s.cfg.Int("listen.backlog"))
		if backlog <= 0 {
			backlog = 511
		}
		queued := (rate - mu) * (warmup.Seconds() + secs)
		if over := queued - backlog - float64(n); over > 0 {
			errs = math.Min(over, (rate-mu)*secs)
		}
		// Answered within the run and its 2 s drain; the rest is late.
		reqs = math.Min(asked, mu*(secs+2)+errs)
		b.RequestsUnanswered = int64(asked - reqs)
	}
	b.Requests, b.Errors = int64(reqs), int64(errs)
	if b.Errors > 0 {
		b.ErrorsByClass = map[string]int64{"status_5xx": b.Errors}
	}
	b.RateAchievedRPS = reqs / secs
	b.ThroughputRPS = (reqs - errs) / secs
	if m := rate * lat(60) / 1000; m > float64(conns) {
		// More in flight than connections (Little's law): the schedule's
		// requests wait for one, and those still waiting at the end were
		// never sent.
		b.RequestsUnsent = int64(math.Min(asked, m-float64(conns)))
	}
	return b, nil
}
