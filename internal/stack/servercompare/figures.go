package servercompare

import (
	"slices"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/observe"
)

// Roles a process group plays in a request, for CPU per request split
// into web server, PHP and database.
const (
	RoleWeb  = "web"
	RolePHP  = "php"
	RoleDB   = "db"
	RoleNone = "" // the generator, the rest of the machine, the "stack" total
)

// stackKey is the observer's CPU per request of every stack process.
const stackKey = "stack"

// GroupRole says what a process group of the observer does: PHP's workers
// (php-fpm's, Apache's children with mod_php, Unit's application
// processes) and php-fpm's master are PHP (observe.IsPHP, the groups of
// observe.PHPCPUPerRequest), MariaDB is the database, the
// generator and the rest of the machine are not the stack, and every
// other group of the stack is the web server (nginx, Apache, Unit's
// router, and any server added later), so a new server's groups count as
// web server without a change here.
func GroupRole(name string) string {
	switch {
	case name == observe.GroupGenerator || name == observe.GroupOther || name == stackKey:
		return RoleNone
	case observe.IsPHP(name):
		return RolePHP
	case name == observe.GroupMariaDB:
		return RoleDB
	}
	return RoleWeb
}

// Figures are what one run of one configuration showed.
type Figures struct {
	RPS, P99Ms, ErrorRate float64
	// CPU seconds per request by role, and the whole stack's.
	CPUWeb, CPUPHP, CPUDB, CPUStack float64
	// Workers is the most PHP worker processes seen at once.
	Workers int
	// WorkerPSS is the median worker's peak PSS, WorkerPSSP95 the p95;
	// TotalPSS the stack's peak PSS.
	WorkerPSS, WorkerPSSP95, TotalPSS int64
	// Imbalance is the observer's WorkerImbalance.
	Imbalance float64
	// WorkerCPUPct is each PHP worker's mean CPU over the measured part,
	// in percent of one core, busiest first.
	WorkerCPUPct []float64
	// Queued: requests waited in a queue in front of PHP at some sample
	// (a kernel accept queue of the stack, php-fpm's listen queue, Unit's
	// router); MaxQueued the most at once.
	Queued    bool
	MaxQueued int64
	// AllBusy and StatusSamples: samples whose status page showed every
	// PHP worker (or request slot) busy, of the samples that read one.
	AllBusy, StatusSamples int
	MachineIdlePct         float64
	Warnings               []string
}

// FiguresOf reads a run's figures from the generator's result and the
// observer's samples of its measured part (after the warm-up).
func FiguresOf(b *results.Bench) Figures {
	f := Figures{RPS: b.ThroughputRPS, P99Ms: b.Latency.P99Ms, MachineIdlePct: b.MachineIdlePct}
	if b.Requests > 0 {
		f.ErrorRate = float64(b.Errors) / float64(b.Requests)
	}
	f.Warnings = append(f.Warnings, b.Warnings...)
	o := b.Observation
	if o == nil {
		return f
	}
	d := o.Derived
	f.Warnings = append(f.Warnings, d.Warnings...)
	f.CPUWeb, f.CPUPHP, f.CPUDB, f.CPUStack = cpuByRole(d.CPUSecondsPerRequest)
	f.WorkerPSS, f.WorkerPSSP95, f.Imbalance = d.WorkerPSSP50B, d.WorkerPSSP95B, d.WorkerImbalance
	f.readSamples(o.Samples, b.WarmupS)
	return f
}

// cpuByRole adds the observer's CPU seconds per request of each group
// into the web server's, PHP's and the database's; the stack's is the
// observer's own total, or their sum when it has none.
func cpuByRole(perRequest map[string]float64) (web, php, db, stack float64) {
	for g, v := range perRequest {
		switch GroupRole(g) {
		case RoleWeb:
			web += v
		case RolePHP:
			php += v
		case RoleDB:
			db += v
		}
	}
	stack = perRequest[stackKey]
	if stack == 0 {
		stack = web + php + db
	}
	return web, php, db, stack
}

// readSamples takes the figures the samples show: the stack's peak PSS
// over the whole run and, over the measured part (from warmupS), the most
// PHP workers, each worker's CPU, the queues and the busy status pages.
func (f *Figures) readSamples(samples []results.Sample, warmupS float64) {
	cpu := map[int]float64{} // CPU% × seconds per worker
	var window float64
	for _, s := range samples {
		var total int64
		workers := 0
		for _, g := range s.Groups {
			if GroupRole(g.Name) != RoleNone {
				total += g.PSSB
			}
			if observe.IsPHPWorkers(g.Name) {
				workers += g.Processes
			}
		}
		f.TotalPSS = max(f.TotalPSS, total)
		if s.TS-s.DTS/2 < warmupS {
			continue // the warm-up: not measured
		}
		window += s.DTS
		f.Workers = max(f.Workers, workers)
		for _, g := range s.Groups {
			if observe.IsPHPWorkers(g.Name) {
				for _, p := range g.PerProcess {
					cpu[p.PID] += p.CPUPct * s.DTS
				}
			}
		}
		queued, busy, read := queueOf(s)
		if queued > 0 {
			f.Queued = true
			f.MaxQueued = max(f.MaxQueued, queued)
		}
		if read {
			f.StatusSamples++
			if busy {
				f.AllBusy++
			}
		}
	}
	if window > 0 {
		f.WorkerCPUPct = workerCPUPct(cpu, window)
	}
}

// queueOf is what one sample shows in front of PHP: the most requests
// queued (in a kernel accept queue of the stack, php-fpm's listen queue,
// Unit's router), whether every PHP worker (or request slot) was busy,
// and whether any status page was read.
func queueOf(s results.Sample) (queued int64, busy, read bool) {
	for _, q := range s.Queues {
		queued = max(queued, q.Queued)
	}
	for _, p := range s.FPM {
		if p.Error != "" {
			continue
		}
		read = true
		queued = max(queued, p.ListenQueue)
		busy = busy || (p.IdleProcesses == 0 && p.ActiveProcesses > 0)
	}
	if a := s.Apache; a != nil {
		read = true
		busy = busy || (a.IdleWorkers == 0 && a.Open == 0 && a.BusyWorkers > 0)
	}
	if u := s.Unit; u != nil {
		read = true
		if u.ProcessesIdle == 0 && u.ProcessesRunning > 0 && (u.MaxProcesses == 0 || u.ProcessesRunning >= u.MaxProcesses) {
			busy = true
			queued = max(queued, u.RequestsActive-u.ProcessesRunning)
		}
	}
	return queued, busy, read
}

// workerCPUPct is each worker's mean CPU in percent of one core over a
// window of seconds, from its CPU% × seconds, busiest first.
func workerCPUPct(cpu map[int]float64, window float64) []float64 {
	var pct []float64
	for _, c := range cpu {
		pct = append(pct, round1(c/window))
	}
	slices.SortFunc(pct, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	return pct
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
