package search

import (
	"strings"

	"github.com/phptune/phptune/internal/model/results"
)

// Group names of the observer's CPU per request (package observe writes
// them; search does not import it, being pure).
const (
	cpuStack     = "stack"
	cpuGenerator = "generator"
	cpuFPM       = "php-fpm workers"
	// cpuModPHP is Apache's prefork children with mod_php: they run PHP
	// (and parse HTTP: /proc cannot split the two).
	cpuModPHP = "apache+php workers"
	cpuOther  = "other"
)

// CPUBoundShare is the share of its stack ceiling a run must reach to count
// as CPU-bound (see CPUUse.CPUBound).
const CPUBoundShare = 0.9

// CPUUse is where a run's CPU went, in cores (CPUs' worth of time per
// second) over the measured part, and what one request cost.
type CPUUse struct {
	Cores float64 // CPUs of the machine
	// StealCores is time the hypervisor gave to other guests, SoftIRQCores
	// the kernel's softirq time (network receive, timers), which /proc
	// charges to no process, GeneratorCores phptune's own load generator.
	StealCores, SoftIRQCores, GeneratorCores float64
	// OtherCores is the CPU of the machine's other processes (the
	// observer's "other" group: a build, another tenant, phptune itself).
	OtherCores float64
	// StackCPUPerReq is the CPU-seconds per request of every process of
	// the stack (nginx, php-fpm master and workers, MariaDB; not the
	// generator), PHPCPUPerReq of the php-fpm workers alone; 0 unknown.
	StackCPUPerReq, PHPCPUPerReq float64
	ThroughputRPS                float64
	// SpeedProbeMs is the machine-speed probe's reading during the run
	// (results.Derived.SpeedProbeMs); 0 unknown.
	SpeedProbeMs float64
}

// CPUAtSpeed is stack CPU per request divided by the machine-speed probe's
// reading: how many of the probe's units of work one request costs, the
// same on a slow and a fast moment of a shared machine when both slow the
// same way; 0 unknown.
func (u CPUUse) CPUAtSpeed() float64 {
	if u.StackCPUPerReq <= 0 || u.SpeedProbeMs <= 0 {
		return 0
	}
	return u.StackCPUPerReq / (u.SpeedProbeMs / 1000)
}

// CPUUseOf reads a run's CPU figures: CPU per request from the observer's
// Derived figures, steal and softirq as the mean of the samples of the
// measured part (those whose interval's middle lies after the warm-up:
// the observer starts with the load, so this is Derive's window), and the
// generator's CPU as its CPU per request times the throughput. cores is the
// machine's CPU count, used when the samples do not say. ok is false when
// the run has no stack CPU per request.
func CPUUseOf(b *results.Bench, cores int) (u CPUUse, ok bool) {
	if b == nil || b.Observation == nil || b.ThroughputRPS <= 0 {
		return CPUUse{}, false
	}
	obs := b.Observation
	u.ThroughputRPS = b.ThroughputRPS
	u.Cores = float64(cores)
	per := obs.Derived.CPUSecondsPerRequest
	u.StackCPUPerReq = per[cpuStack]
	u.SpeedProbeMs = obs.Derived.SpeedProbeMs
	for name, v := range per {
		if name == cpuFPM || strings.HasPrefix(name, cpuFPM+" ") || name == cpuModPHP {
			u.PHPCPUPerReq += v
		}
	}
	u.GeneratorCores = per[cpuGenerator] * b.ThroughputRPS
	u.OtherCores = per[cpuOther] * b.ThroughputRPS
	var steal, soft, dt float64
	mean := func(from float64) {
		steal, soft, dt = 0, 0, 0
		for _, s := range obs.Samples {
			w := s.DTS
			if w <= 0 {
				w = 1
			}
			if s.TS-s.DTS/2 < from {
				continue
			}
			if s.Machine.Cores > 0 {
				u.Cores = float64(s.Machine.Cores)
			}
			steal += s.Machine.StealPct * w
			soft += s.Machine.SoftIRQPct * w
			dt += w
		}
	}
	mean(b.WarmupS)
	if dt == 0 {
		mean(-1e18) // no sample after the warm-up: all of them
	}
	if dt > 0 {
		u.StealCores = steal / dt / 100 * u.Cores
		u.SoftIRQCores = soft / dt / 100 * u.Cores
	} else {
		u.StealCores = obs.Derived.MaxStealPct / 100 * u.Cores
	}
	return u, u.StackCPUPerReq > 0 && u.Cores > 0
}

// Available is the CPU the stack could have used: the cores less steal,
// uncharged softirq time and the generator's own CPU.
func (u CPUUse) Available() float64 {
	return max(0, u.Cores-u.StealCores-u.SoftIRQCores-u.GeneratorCores)
}

// StackCeiling is the throughput the stack could reach with every
// available core busy: (cores − steal − generator − softirq) ÷ CPU-seconds
// per request of every stack process; 0 unknown. Unlike the PHP-only
// ceiling it charges nginx and MariaDB their share, which on light pages
// (hello, phpinfo) is as large as PHP's.
func (u CPUUse) StackCeiling() float64 {
	if u.StackCPUPerReq <= 0 {
		return 0
	}
	return u.Available() / u.StackCPUPerReq
}

// CPUBound is the test for "the stack is CPU-bound at the workload's
// concurrency": the stack's processes used at least CPUBoundShare (90%) of
// the CPU left after steal, uncharged softirq time, the generator's own CPU
// and the machine's other processes. A page that waits (on MariaDB, on a
// socket) leaves cores idle and fails it; so does a pool too small to keep
// the cores busy. Other processes count as taken: a stack that competes
// with a compiler or another tenant for the CPU is CPU-bound — more CPU
// would serve more requests — and its throughput swings with them while
// its CPU per request does not (a WordPress tune beside a PHP build reached
// 55-60% of its stack ceiling because the build held the rest).
func (u CPUUse) CPUBound() bool {
	if u.StackCPUPerReq <= 0 {
		return false
	}
	left := u.Available() - u.OtherCores
	return left > 0 && u.ThroughputRPS*u.StackCPUPerReq >= CPUBoundShare*left
}
