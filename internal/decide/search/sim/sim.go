// Package sim is a deterministic model of a PHP stack for testing the
// tuner without one: throughput against workers and connections for a page
// that burns CPU and a page that waits, memory per worker, the effect of the
// categorical knobs, and seeded noise including steal-like dips. Runs carry
// the observer's CPU figures (CPU-seconds per request of the stack and the
// generator, steal and softirq): as on a VM, steal takes throughput but not
// the CPU a request costs, which /proc does not charge for stolen time.
// Stack has the methods package tune's Stack interface asks for.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

const mib = int64(1) << 20

// Workload describes the simulated page and machine.
type Workload struct {
	Name      string
	Cores     int
	CPUMs     float64 // PHP CPU time per request
	WaitMs    float64 // time a request waits off-CPU (database, network)
	WorkerB   int64   // PSS of one worker
	OtherB    int64   // PSS of nginx, the fpm master, MariaDB
	Noise     float64 // relative standard deviation of a run's throughput
	StealProb float64 // chance a run loses throughput to a noisy neighbour
	// StealDip is the most CPU such a run loses (0: 0.3); a disturbed run
	// loses between half of it and all of it.
	StealDip float64
	// CPUNoise is the relative standard deviation of a run's CPU-seconds
	// per request (0: 0.015); throughput of a CPU-bound run follows it.
	CPUNoise float64
	// SlowNoise is the relative standard deviation of how fast the
	// machine ran during a run (a neighbour slowing the CPU without steal):
	// it multiplies the run's CPU per request and, when ProbeMs > 0, the
	// machine-speed probe's reading alike. ProbeMs is the probe's reading
	// on a quiet machine (0: runs carry no probe reading), ProbeNoise the
	// probe's own relative error.
	SlowNoise, ProbeMs, ProbeNoise float64
	// GenCPUMs is the generator's CPU per request, SoftIRQPct the kernel's
	// softirq time in percent of all cores; both take cores from the stack.
	GenCPUMs   float64
	SoftIRQPct float64
	// Effects of the categorical knobs, as fractions of CPU per request.
	VTOffGain  float64 // opcache.validate_timestamps=off saves this
	JITGain    float64 // JIT on saves this
	TCPCost    float64 // listen=tcp costs this
	SwitchCost float64 // each worker beyond the cores costs this (cache, scheduler)
	// KeepAliveOffCost is what apache.keepalive=off costs (a TCP
	// connection per request); Apache servers only.
	KeepAliveOffCost float64
	// FailAbove makes Apply fail, as an out-of-memory start would, when
	// pm.max_children exceeds it (0: never).
	FailAbove int
}

// CPUBound is a page like phpinfo: all CPU, knee at the core count.
func CPUBound() Workload {
	return Workload{Name: "cpu", Cores: 2, CPUMs: 0.9, WaitMs: 0.05, WorkerB: 14 * mib, OtherB: 180 * mib,
		Noise: 0.06, StealProb: 0.05, VTOffGain: 0.04, JITGain: 0.0, TCPCost: 0.06, SwitchCost: 0.004,
		GenCPUMs: 0.04, SoftIRQPct: 0.5}
}

// IOWait is the io app: 1 ms of CPU and 20 ms waiting on MariaDB per request,
// so the knee is near 2 × 21 / 1 = 42 workers: the distro's 5 children give
// ~240 rps at 50 connections and a pool of ~48 about 8×, as measured here.
func IOWait() Workload {
	return Workload{Name: "io", Cores: 2, CPUMs: 1.0, WaitMs: 20, WorkerB: 12 * mib, OtherB: 220 * mib,
		Noise: 0.06, StealProb: 0.05, VTOffGain: 0.02, JITGain: 0.0, TCPCost: 0.03, SwitchCost: 0.001,
		GenCPUMs: 0.04, SoftIRQPct: 0.5}
}

// alive is how many workers hold memory during a loaded run. The workers
// are whatever runs PHP (knob.Config.PHPWorkers): php-fpm's, or Apache's
// prefork children with mod_php, which are all alive when they are all
// started (search.Pool's "static" prefork pool).
func alive(cfg knob.Config, conns int) int {
	n := int(cfg.PHPWorkers())
	start := "pm.start_servers"
	static := cfg["pm"] == "static"
	switch cfg.Server() {
	case knob.ApachePreforkModPHP:
		start = "apache.prefork.start_servers"
		static = cfg.Int(start) >= int64(n)
	case knob.UnitPHP:
		start = "unit.spare_processes"
		static = cfg["unit.pm"] == "static"
	}
	if !static {
		n = min(n, max(conns, int(cfg.Int(start))))
	}
	return n
}

// True is the noise-free throughput of cfg at conns connections.
func (w Workload) True(cfg knob.Config, conns int) float64 {
	return w.throughput(cfg, conns, w.CPU(cfg, conns), 0)
}

// CPU is the noise-free stack CPU per request (ms) of cfg at conns.
func (w Workload) CPU(cfg knob.Config, conns int) float64 {
	workers := int(cfg.PHPWorkers())
	s := w.CPUMs
	if !cfg.On("opcache.validate_timestamps") {
		s *= 1 - w.VTOffGain
	}
	if cfg["opcache.jit"] != "off" && cfg.Bytes("opcache.jit_buffer_size") > 0 {
		s *= 1 - w.JITGain
	}
	if cfg["listen"] == "tcp" {
		s *= 1 + w.TCPCost
	}
	inflight := min(workers, conns)
	s *= 1 + w.SwitchCost*float64(max(0, inflight-w.Cores))
	if mr := cfg.Int("pm.max_requests"); mr > 0 && knob.RunsFPM(cfg.Server()) {
		s += 8 / float64(mr) // a respawn costs ~8 ms of CPU
	}
	if mr := cfg.Int("apache.max_connections_per_child"); mr > 0 && cfg.Server() == knob.ApachePreforkModPHP {
		s += 8 / float64(mr)
	}
	if mr := cfg.Int("unit.max_requests"); mr > 0 && cfg.Server() == knob.UnitPHP {
		s += 8 / float64(mr)
	}
	if strings.HasPrefix(cfg.Server(), "apache") && cfg["apache.keepalive"] == "off" {
		s *= 1 + w.KeepAliveOffCost
	}
	return s
}

// throughput with s ms of stack CPU per request and a share steal of the
// cores taken by the hypervisor: the smaller of what the workers can have
// in flight (Little's law) and what the cores left after steal, softirq
// and the generator can serve.
func (w Workload) throughput(cfg knob.Config, conns int, s, steal float64) float64 {
	inflight := min(int(cfg.PHPWorkers()), conns)
	cores := float64(w.Cores) * (1 - steal - w.SoftIRQPct/100)
	x := math.Min(float64(inflight)/(s+w.WaitMs), cores/(s+w.GenCPUMs)) * 1000
	pm := cfg["pm"]
	switch cfg.Server() {
	case knob.ApachePreforkModPHP:
		pm = "dynamic" // prefork's children, unless all started and kept
		if cfg.Int("apache.prefork.start_servers") >= cfg.PHPWorkers() {
			pm = "static"
		}
	case knob.UnitPHP:
		pm = cfg["unit.pm"]
	}
	switch pm {
	case "dynamic":
		x *= 0.99 // the manager's bookkeeping and the occasional reap/spawn
	case "ondemand":
		x *= 0.95 // workers spawned on the request path
	}
	return x
}

// Memory is the true peak PSS of cfg at conns connections.
func (w Workload) Memory(cfg knob.Config, conns int) int64 {
	m := w.OtherB + int64(alive(cfg, conns))*w.WorkerB
	if cfg["opcache.jit"] != "off" {
		m += cfg.Bytes("opcache.jit_buffer_size")
	}
	return m
}

// Stack simulates a lab running Workload. Not safe for concurrent use.
type Stack struct {
	W   Workload
	rng *rand.Rand
	cfg knob.Config
	// Clock, when set, is advanced by every Apply and Measure as if the
	// time had passed, so time budgets can be tested instantly.
	Clock    *time.Time
	Applies  int
	Measures int
	Resets   int
	// RateSteps counts MeasureRate calls; Scale, when set, multiplies the
	// service rate of the n-th (from 1) at rate, to inject a noisy step.
	RateSteps int
	Scale     func(n int, rate float64) float64
}

// New returns a simulated stack running the distro defaults.
func New(w Workload, seed uint64) *Stack {
	return &Stack{W: w, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), cfg: knob.Defaults()}
}

func (s *Stack) advance(d time.Duration) {
	if s.Clock != nil {
		*s.Clock = s.Clock.Add(d)
	}
}

// Apply restarts the simulated stack with cfg.
func (s *Stack) Apply(ctx context.Context, cfg knob.Config) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.Applies++
	s.advance(2 * time.Second)
	if err := cfg.Validate(); err != nil {
		return err
	}
	if s.W.FailAbove > 0 && int(cfg.PHPWorkers()) > s.W.FailAbove {
		return &StartError{Log: fmt.Sprintf("php-fpm: ERROR: fork() failed: Cannot allocate memory (max_children=%s)", cfg["pm.max_children"])}
	}
	s.cfg = cfg.Clone()
	return nil
}

// StartError is a simulated start failure carrying the component's log.
type StartError struct{ Log string }

// Error includes the log, as the lab's start errors do.
func (e *StartError) Error() string { return "stack failed to start: " + e.Log }

// ErrNoConfig is returned by Measure before any Apply succeeded.
var ErrNoConfig = errors.New("sim: no configuration applied")

// Measure runs the simulated load.
func (s *Stack) Measure(ctx context.Context, conns int, d, warmup time.Duration) (*results.Bench, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.cfg == nil {
		return nil, ErrNoConfig
	}
	s.Measures++
	s.advance(d + warmup)
	cpuNoise, dip := s.W.CPUNoise, s.W.StealDip
	if cpuNoise == 0 {
		cpuNoise = 0.015
	}
	if dip == 0 {
		dip = 0.3
	}
	slow := 1.0
	if s.W.SlowNoise > 0 { // no draw otherwise: seeded runs stay as they were
		slow = math.Exp(s.rng.NormFloat64() * s.W.SlowNoise)
	}
	cpu := s.W.CPU(s.cfg, conns) * math.Exp(s.rng.NormFloat64()*cpuNoise) * slow
	probe := 0.0
	if s.W.ProbeMs > 0 {
		probe = s.W.ProbeMs * slow * math.Exp(s.rng.NormFloat64()*s.W.ProbeNoise)
	}
	steal := 0.01 * s.rng.Float64()
	if s.rng.Float64() < s.W.StealProb {
		steal = dip * (0.5 + 0.5*s.rng.Float64())
	}
	x := s.W.throughput(s.cfg, conns, cpu, steal) * math.Exp(s.rng.NormFloat64()*s.W.Noise)
	secs := d.Seconds()
	if secs <= 0 {
		secs = 1
	}
	reqs := int64(x * secs)
	meanMs := float64(conns) / x * 1000
	workers := alive(s.cfg, conns)
	workerB := int64(float64(s.W.WorkerB) * (1 + 0.02*s.rng.Float64()))
	b := &results.Bench{
		SchemaVersion: results.SchemaVersion, Kind: results.KindBench, Target: "sim://" + s.W.Name,
		Protocol: "http", Model: "closed", Connections: conns, KeepAlive: true,
		WarmupS: warmup.Seconds(), DurationS: secs, Requests: reqs, ThroughputRPS: x,
		Latency: results.Latency{MeanMs: meanMs, P50Ms: meanMs * 0.9, P90Ms: meanMs * 1.4, P99Ms: meanMs*2 + s.W.CPUMs, MaxMs: meanMs * 4},
		Observation: &results.Observation{
			IntervalS: secs,
			Samples: []results.Sample{{TS: warmup.Seconds() + secs, DTS: secs,
				Machine: results.MachineSample{Cores: s.W.Cores, StealPct: 100 * steal, SoftIRQPct: s.W.SoftIRQPct},
				Groups: []results.GroupSample{
					{Name: workerGroup(s.cfg), Processes: workers, PSSB: int64(workers) * workerB},
					{Name: "other", Processes: 3, PSSB: s.W.OtherB},
				}}},
			Derived: results.Derived{
				// The stack's CPU is PHP's and nginx's; the observer's
				// figures are in seconds.
				CPUSecondsPerRequest: map[string]float64{"stack": cpu / 1000, workerGroup(s.cfg): 0.8 * cpu / 1000, "generator": s.W.GenCPUMs / 1000},
				WorkerPSSP50B:        s.W.WorkerB, WorkerPSSP95B: workerB, WorkerPSSMaxB: workerB, OtherPSSB: s.W.OtherB, MaxStealPct: 100 * steal,
				SpeedProbeMs: probe},
		},
	}
	if s.cfg["opcache.jit"] != "off" {
		b.Observation.Samples[0].Groups[1].PSSB += s.cfg.Bytes("opcache.jit_buffer_size")
	}
	return b, nil
}

// workerGroup is the observer's name for the processes that run PHP.
func workerGroup(cfg knob.Config) string {
	switch cfg.Server() {
	case knob.ApachePreforkModPHP:
		return "apache+php workers"
	case knob.UnitPHP:
		return "unit php workers"
	}
	return "php-fpm workers"
}

// Reset simulates restoring the database.
func (s *Stack) Reset(ctx context.Context) error {
	s.Resets++
	s.advance(time.Second)
	return ctx.Err()
}
