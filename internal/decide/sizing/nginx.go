package sizing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// KnobNginxWorkers is nginx's worker count.
const KnobNginxWorkers = "nginx.worker_processes"

// WorkerSaturation is the share of one core above which an nginx worker is
// near saturation: a worker is one thread, so it cannot use more than one
// core, and at 80% its event loop starts to delay requests.
const WorkerSaturation = 0.8

// nginxWorkers is the observer's group of nginx's workers.
const nginxWorkers = "nginx workers"

// decideNginxWorkers decides worker_processes from what the observer
// measured of nginx's workers in the readings' runs. The rule: raise a
// fixed count below the cores to auto (one per core) when the workers are
// near saturation; otherwise keep. Fewer workers than cores are never
// recommended: an idle worker costs no CPU (it waits in epoll) and only
// its few MiB of PSS (recorded), while too few would cap nginx below the
// cores for static files and bursts the tune's workload does not show.
func decideNginxWorkers(cfg knob.Config, in Inputs) results.SizeDecision {
	if !cfg.Relevant(KnobNginxWorkers) {
		return notRead(cfg, KnobNginxWorkers, "server="+cfg.Server()+" runs no nginx")
	}
	var cores, stackShare float64
	var workers, n int
	var pss int64
	var trials []int
	for _, r := range in.Readings {
		b := r.Bench
		if b == nil || b.Observation == nil || b.DurationS <= 0 {
			continue
		}
		per := b.Observation.Derived.CPUSecondsPerRequest
		cpu, ok := per[nginxWorkers]
		if !ok {
			continue
		}
		procs := 0
		for _, s := range b.Observation.Samples {
			for _, g := range s.Groups {
				if g.Name == nginxWorkers {
					procs = max(procs, g.Processes)
					pss = max(pss, g.PSSB)
				}
			}
		}
		if procs == 0 {
			continue
		}
		workers = max(workers, procs)
		cores += cpu * float64(b.Requests) / b.DurationS
		if st := per["stack"]; st > 0 {
			stackShare += cpu / st
		}
		n++
		trials = append(trials, r.Trial)
	}
	if n == 0 {
		return notRead(cfg, KnobNginxWorkers, "the observer measured no nginx workers")
	}
	cores /= float64(n)
	stackShare /= float64(n)
	perWorker := cores / float64(workers)
	d := decision(cfg, KnobNginxWorkers, trials)
	d.Figures["workers"], d.Figures["cores"], d.Figures["nginx_cores"], d.Figures["per_worker_share"], d.Figures["stack_share"], d.Figures["workers_pss_bytes"] =
		float64(workers), float64(in.Cores), cores, perWorker, stackShare, b2f(pss)
	state := fmt.Sprintf("nginx's %d workers used %.2f cores, %.1f%% of a core each, %.1f%% of the stack's CPU", workers, cores, 100*perWorker, 100*stackShare)
	fixed, err := strconv.Atoi(strings.TrimSpace(cfg[KnobNginxWorkers]))
	below := err == nil && fixed < in.Cores
	switch {
	case perWorker >= WorkerSaturation && below:
		cfg[KnobNginxWorkers], d.To, d.Action = "auto", "auto", ActionSet
		d.Reason = fmt.Sprintf("set %s → auto: %s, near saturation (≥ %s), with fewer workers than the %d cores", d.From, state, pct(WorkerSaturation), in.Cores)
	case perWorker >= WorkerSaturation:
		d.Action = ActionKept
		d.Reason = fmt.Sprintf("kept %s: %s, near saturation, but with a worker per core already more workers would not add CPU", d.From, state)
	default:
		d.Action = ActionKept
		d.Reason = fmt.Sprintf("kept %s: %s, none near saturation; fewer workers would save at most their %s of PSS and no CPU", d.From, state, mib(pss))
	}
	return d
}
