package servercompare

import (
	"math"
	"slices"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/observe"
)

func TestGroupRole(t *testing.T) {
	cases := map[string]string{
		observe.GroupNginxMaster:         RoleWeb,
		observe.GroupNginxWorkers:        RoleWeb,
		observe.GroupApacheParent:        RoleWeb,
		observe.GroupApacheWorkers:       RoleWeb,
		observe.GroupUnitMain:            RoleWeb,
		observe.GroupUnitRouter:          RoleWeb,
		"lighttpd":                       RoleWeb, // a server added later is a web server without a change here
		"caddy":                          RoleWeb,
		observe.GroupFPMMaster:           RolePHP,
		observe.GroupFPMWorkers:          RolePHP,
		observe.GroupFPMWorkers + " www": RolePHP,
		observe.GroupApacheModPHPWorkers: RolePHP,
		observe.GroupUnitWorkers:         RolePHP,
		observe.GroupMariaDB:             RoleDB,
		observe.GroupGenerator:           RoleNone,
		observe.GroupOther:               RoleNone,
		"stack":                          RoleNone,
	}
	for g, want := range cases {
		if got := GroupRole(g); got != want {
			t.Errorf("GroupRole(%q) = %q, want %q", g, got, want)
		}
	}
}

// run describes a synthetic run for the tests: throughput, p99, each PHP
// worker's CPU in percent of a core, CPU per request by group, and what
// the status pages and queues showed.
type run struct {
	rps, p99  float64
	workerCPU []float64
	cpu       map[string]float64 // seconds per request by group
	workerPSS int64
	queued    int64 // in the kernel's queue of php-fpm's socket, every measured sample
	allBusy   bool  // php-fpm's page shows no idle worker
	warnings  []string
}

// bench turns r into a result with an observation: one warm-up sample
// (left out of the figures) and four measured ones of a second each.
func (r run) bench() *results.Bench {
	b := &results.Bench{ThroughputRPS: r.rps, Requests: int64(r.rps * 4), WarmupS: 1, DurationS: 4, MachineIdlePct: 10,
		Latency: results.Latency{P99Ms: r.p99}, Warnings: r.warnings}
	o := &results.Observation{IntervalS: 1}
	for i := 0; i <= 4; i++ {
		s := results.Sample{TS: float64(i + 1), DTS: 1}
		w := results.GroupSample{Name: observe.GroupFPMWorkers, Processes: len(r.workerCPU)}
		for j, c := range r.workerCPU {
			p := results.ProcessSample{PID: 100 + j, CPUPct: c, PSSB: r.workerPSS}
			if i == 0 {
				p.CPUPct = 100 // the warm-up: must not count
			}
			w.PerProcess = append(w.PerProcess, p)
			w.PSSB += r.workerPSS
		}
		s.Groups = []results.GroupSample{
			{Name: observe.GroupNginxWorkers, Processes: 2, PSSB: 4 << 20},
			w,
			{Name: observe.GroupMariaDB, Processes: 1, PSSB: 100 << 20},
			{Name: observe.GroupGenerator, Processes: 1, PSSB: 500 << 20},
		}
		idle := int64(1)
		if r.allBusy {
			idle = 0
		}
		s.FPM = []results.FPMStatus{{Pool: "www", IdleProcesses: idle, ActiveProcesses: int64(len(r.workerCPU)) - idle}}
		if i > 0 && r.queued > 0 {
			s.Queues = []results.ListenQueue{{Owner: observe.ComponentFPM, Queued: r.queued}}
		}
		o.Samples = append(o.Samples, s)
	}
	stack := 0.0
	for _, v := range r.cpu {
		stack += v
	}
	var total, top float64
	for _, c := range r.workerCPU {
		total += c
		top = max(top, c)
	}
	o.Derived.CPUSecondsPerRequest = map[string]float64{observe.GroupGenerator: 0.001, observe.GroupOther: 0.2, "stack": stack}
	for g, v := range r.cpu {
		o.Derived.CPUSecondsPerRequest[g] = v
	}
	o.Derived.WorkerPSSP50B, o.Derived.WorkerPSSP95B = r.workerPSS, r.workerPSS
	if total > 0 {
		o.Derived.WorkerImbalance = top / total
	}
	b.Observation = o
	return b
}

// fpmCPU is a CPU split of nginx + php-fpm + MariaDB, in seconds per
// request.
func fpmCPU(web, php, db float64) map[string]float64 {
	return map[string]float64{observe.GroupNginxWorkers: web, observe.GroupFPMWorkers: php, observe.GroupFPMMaster: 0, observe.GroupMariaDB: db}
}

func TestFiguresOf(t *testing.T) {
	r := run{rps: 200, p99: 80, workerCPU: []float64{90, 5, 3, 2}, cpu: fpmCPU(0.001, 0.008, 0.0005), workerPSS: 20 << 20, queued: 6, allBusy: true,
		warnings: []string{"page changed"}}
	b := r.bench()
	b.Errors = 8
	f := FiguresOf(b)
	if f.RPS != 200 || f.P99Ms != 80 || f.ErrorRate != 0.01 {
		t.Errorf("rps %v p99 %v errors %v", f.RPS, f.P99Ms, f.ErrorRate)
	}
	if !near(f.CPUWeb, 0.001) || !near(f.CPUPHP, 0.008) || !near(f.CPUDB, 0.0005) || !near(f.CPUStack, 0.0095) {
		t.Errorf("CPU web %v PHP %v DB %v stack %v", f.CPUWeb, f.CPUPHP, f.CPUDB, f.CPUStack)
	}
	if f.Workers != 4 || f.WorkerPSS != 20<<20 || !near(f.Imbalance, 0.9) {
		t.Errorf("workers %d, PSS %d, imbalance %v", f.Workers, f.WorkerPSS, f.Imbalance)
	}
	// The stack's PSS: nginx, four workers, MariaDB; not the generator.
	if want := int64(4<<20 + 4*20<<20 + 100<<20); f.TotalPSS != want {
		t.Errorf("total PSS %d, want %d", f.TotalPSS, want)
	}
	// The warm-up sample (every worker at 100%) is left out.
	if !slices.Equal(f.WorkerCPUPct, []float64{90, 5, 3, 2}) {
		t.Errorf("worker CPU %v", f.WorkerCPUPct)
	}
	if !f.Queued || f.MaxQueued != 6 || f.AllBusy != 4 || f.StatusSamples != 4 {
		t.Errorf("queued %v (%d), all busy %d of %d", f.Queued, f.MaxQueued, f.AllBusy, f.StatusSamples)
	}
	if len(f.Warnings) != 1 {
		t.Errorf("warnings %v", f.Warnings)
	}

	// Unit: its router holds the queue; mod_php: Apache's scoreboard.
	u := run{rps: 100, p99: 50, workerCPU: []float64{50, 50}}.bench()
	for i := range u.Observation.Samples {
		s := &u.Observation.Samples[i]
		s.FPM = nil
		s.Unit = &results.UnitStatus{ProcessesRunning: 2, ProcessesIdle: 0, MaxProcesses: 2, RequestsActive: 9}
	}
	if f := FiguresOf(u); !f.Queued || f.MaxQueued != 7 || f.AllBusy != 4 {
		t.Errorf("Unit: queued %v (%d), all busy %d", f.Queued, f.MaxQueued, f.AllBusy)
	}
	a := run{rps: 100, p99: 50, workerCPU: []float64{50, 50}}.bench()
	for i := range a.Observation.Samples {
		s := &a.Observation.Samples[i]
		s.FPM = nil
		s.Apache = &results.ApacheStatus{BusyWorkers: 1, IdleWorkers: 0, Open: 0}
	}
	if f := FiguresOf(a); f.Queued || f.AllBusy != 4 || f.StatusSamples != 4 {
		t.Errorf("Apache: queued %v, all busy %d of %d", f.Queued, f.AllBusy, f.StatusSamples)
	}

	// A run without an observation has the generator's figures only.
	if f := FiguresOf(&results.Bench{ThroughputRPS: 5, Requests: 10}); f.RPS != 5 || f.Workers != 0 || f.CPUStack != 0 {
		t.Errorf("no observation: %+v", f)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
