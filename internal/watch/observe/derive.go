package observe

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

// Thresholds of the warnings Derive writes.
const (
	// StealWarnPct: above this share of CPU stolen by the hypervisor, a
	// run's figures are unreliable (CONTEXT: up to 50% seen here).
	StealWarnPct = 10.0
	// GeneratorBoundPct: a generator using this much of one core is
	// probably limiting the load itself.
	GeneratorBoundPct = 90.0
	// SamplerWarnPct: the observer's own budget, in percent of one core.
	SamplerWarnPct = 1.0
)

// Window selects the samples Derive uses, in seconds since the baseline
// (Observer.Elapsed gives the clock), and the number of requests completed
// in it. ToS 0 means to the end; Requests 0 leaves out CPU per request.
//
// DurationS, when set, is how long those requests took to complete (the
// load's measured duration): CPU per request is then the groups' mean CPU
// rate over the window's samples times DurationS over Requests, which does
// not depend on how much of the window the samples cover (the interval cut
// short by Stop is not sampled). Without it the samples' CPU is divided by
// Requests as it is.
type Window struct {
	FromS, ToS float64
	Requests   int64
	DurationS  float64
}

// Derive computes obs.Derived from the samples in w. A sample belongs to the
// window when the middle of its interval does.
func Derive(obs *results.Observation, w Window) {
	in := inWindow(obs.Samples, w)
	d := results.Derived{}
	defer func() { obs.Derived = d }()
	if len(in) == 0 {
		if len(obs.Samples) > 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("no observer sample fell in the measured window %.1f-%.1fs; derived figures are empty", w.FromS, w.ToS))
		}
		return
	}
	t := sumCPU(in)
	d.MaxStealPct = t.maxStealPct
	if t.dtSum <= 0 {
		return
	}
	d.MeanStealPct, d.MeanSoftIRQPct = t.stealSum/t.dtSum, t.softSum/t.dtSum
	d.SpeedProbeMs = speedOf(in)
	d.SamplerCPUPct = t.samplerSum / t.dtSum
	if w.Requests > 0 {
		d.CPUSecondsPerRequest = cpuPerRequest(t, w)
	}
	deriveWorkers(&d, in)
	d.Warnings = append(d.Warnings, machineWarnings(t)...)
	for _, msg := range poolWarnings(in) {
		d.Warnings = append(d.Warnings, msg)
	}
	for _, msg := range append(apacheWarnings(in), webStatusWarnings(in)...) {
		d.Warnings = append(d.Warnings, msg)
	}
	d.Warnings = append(d.Warnings, unitWarnings(in)...)
	d.Warnings = append(d.Warnings, backlogWarnings(in)...)
	if d.SamplerCPUPct > SamplerWarnPct {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the observer itself used %.1f%% of a core (budget %.0f%%)", d.SamplerCPUPct, SamplerWarnPct))
	}
}

// inWindow returns the samples whose middle falls in w.
func inWindow(samples []results.Sample, w Window) []results.Sample {
	var in []results.Sample
	for _, s := range samples {
		mid := s.TS - s.DTS/2
		if mid >= w.FromS && (w.ToS <= 0 || mid <= w.ToS) {
			in = append(in, s)
		}
	}
	return in
}

// cpuTotals are a window's CPU figures, each sample weighted by its
// duration.
type cpuTotals struct {
	// byGroup is each group's CPU seconds.
	byGroup map[string]float64
	// The machine's steal, softirq and idle, and the observer's own
	// CPU, in percent × seconds; dtSum is the seconds sampled.
	stealSum, softSum, idleSum, samplerSum, dtSum float64
	maxStealPct                                   float64
	maxSwapB                                      int64
}

func sumCPU(in []results.Sample) cpuTotals {
	t := cpuTotals{byGroup: map[string]float64{}}
	for _, s := range in {
		for _, g := range s.Groups {
			t.byGroup[g.Name] += (g.UserPct + g.SystemPct) / 100 * s.DTS
		}
		t.maxStealPct = math.Max(t.maxStealPct, s.Machine.StealPct)
		t.stealSum += s.Machine.StealPct * s.DTS
		t.softSum += s.Machine.SoftIRQPct * s.DTS
		t.idleSum += s.Machine.IdlePct * s.DTS
		t.samplerSum += s.SamplerCPUPct * s.DTS
		t.dtSum += s.DTS
		t.maxSwapB = max(t.maxSwapB, s.Machine.SwapUsedB)
	}
	return t
}

// cpuPerRequest is each group's CPU seconds per request of w, scaled
// from the seconds sampled to w's duration, and the "stack" they add
// up to.
func cpuPerRequest(t cpuTotals, w Window) map[string]float64 {
	per := map[string]float64{}
	scale := 1.0
	if w.DurationS > 0 {
		scale = w.DurationS / t.dtSum
	}
	stack := 0.0
	for name, c := range t.byGroup {
		c *= scale
		per[name] = c / float64(w.Requests)
		if name != GroupGenerator && name != GroupOther {
			stack += c
		}
	}
	// "stack" is every group but the generator and the rest of the
	// machine: what one request costs the server side.
	per["stack"] = stack / float64(w.Requests)
	return per
}

// deriveWorkers sets the PHP workers' memory (each worker's peak PSS in
// the window, percentiles across workers), the rest of the stack's at
// its peak, and how unevenly a pool's workers shared its CPU.
func deriveWorkers(d *results.Derived, in []results.Sample) {
	peak := map[int]int64{}
	workerCPU := map[string]map[int]float64{}
	for _, s := range in {
		var other int64
		for _, g := range s.Groups {
			switch {
			case IsPHPWorkers(g.Name):
				for _, p := range g.PerProcess {
					peak[p.PID] = max(peak[p.PID], p.PSSB)
					if workerCPU[g.Name] == nil {
						workerCPU[g.Name] = map[int]float64{}
					}
					workerCPU[g.Name][p.PID] += p.CPUPct * s.DTS
				}
			case g.Name == GroupGenerator || g.Name == GroupOther:
			default:
				other += g.PSSB
			}
		}
		d.OtherPSSB = max(d.OtherPSSB, other)
	}
	if len(peak) > 0 {
		ps := make([]int64, 0, len(peak))
		for _, v := range peak {
			ps = append(ps, v)
		}
		slices.Sort(ps)
		d.WorkerPSSP50B = percentile(ps, 50)
		d.WorkerPSSP95B = percentile(ps, 95)
		d.WorkerPSSMaxB = ps[len(ps)-1]
	}
	for _, byPID := range workerCPU {
		var total, top float64
		for _, c := range byPID {
			total += c
			top = max(top, c)
		}
		if total > 0 {
			d.WorkerImbalance = max(d.WorkerImbalance, top/total)
		}
	}
}

// machineWarnings warns of what the machine did to the run: steal, a
// generator that may be the bottleneck or competes with the stack for
// the cores, swap.
func machineWarnings(t cpuTotals) []string {
	var out []string
	if t.maxStealPct > StealWarnPct {
		out = append(out, fmt.Sprintf("CPU steal reached %.0f%% (mean %.0f%%): the hypervisor gave this machine's CPU to a neighbour; throughput and CPU figures of this run are unreliable, repeat it", t.maxStealPct, t.stealSum/t.dtSum))
	}
	if c, ok := t.byGroup[GroupGenerator]; ok {
		genPct := c / t.dtSum * 100
		if genPct >= GeneratorBoundPct {
			out = append(out, fmt.Sprintf("the load generator used %.0f%% of a core: it may be the bottleneck rather than the stack (use more generator threads, or a lighter request mix)", genPct))
		}
		idle := t.idleSum / t.dtSum
		busy := 0.0
		for name, v := range t.byGroup {
			if name != GroupOther {
				busy += v
			}
		}
		if idle < 5 && busy > 0 && c/busy >= 0.25 {
			out = append(out, fmt.Sprintf("the machine had %.0f%% idle CPU and the generator took %.0f%% of what the stack and generator used: they compete for the cores, so the stack's figures are lower than on a machine of its own", idle, c/busy*100))
		}
	}
	if t.maxSwapB > 0 {
		out = append(out, fmt.Sprintf("swap in use (%.0f MiB): paging disturbs latency and memory figures; free memory or lower the worker count", float64(t.maxSwapB)/(1<<20)))
	}
	return out
}

// poolWarnings says when a pool ran out of workers: php-fpm's "max children
// reached" grew (dynamic and ondemand pools), the page showed every worker
// active (the status request itself counts as one), or the kernel held
// connections in the fpm socket's accept queue.
func poolWarnings(in []results.Sample) []string {
	type st struct {
		firstMCR, lastMCR int64
		seen              bool
		full              int
		maxActive, total  int64
		maxQueue          int64
	}
	pools := map[string]*st{}
	var names []string
	var fpmQueue int64
	for _, s := range in {
		for _, f := range s.FPM {
			if f.Error != "" {
				continue
			}
			p := pools[f.Pool]
			if p == nil {
				p = &st{firstMCR: f.MaxChildrenReached}
				pools[f.Pool] = p
				names = append(names, f.Pool)
			}
			p.lastMCR = f.MaxChildrenReached
			p.maxActive = max(p.maxActive, f.ActiveProcesses)
			p.total = max(p.total, f.TotalProcesses)
			if f.IdleProcesses == 0 && f.ActiveProcesses > 0 {
				p.full++
			}
			p.maxQueue = max(p.maxQueue, f.ListenQueue)
		}
		for _, q := range s.Queues {
			if q.Owner == ComponentFPM {
				fpmQueue = max(fpmQueue, q.Queued)
			}
		}
	}
	var out []string
	for _, n := range names {
		p := pools[n]
		switch {
		case p.lastMCR > p.firstMCR:
			out = append(out, fmt.Sprintf("pool %s reached pm.max_children %d times: requests waited for a worker", n, p.lastMCR-p.firstMCR))
		case p.full > 0 && fpmQueue > 0:
			out = append(out, fmt.Sprintf("pool %s ran with every worker busy (%d of %d) in %d samples and up to %d connections waited in the kernel's queue: the pool is at pm.max_children", n, p.maxActive, p.total, p.full, fpmQueue))
		}
	}
	if len(names) == 0 && fpmQueue > 0 {
		out = append(out, fmt.Sprintf("up to %d connections waited in php-fpm's accept queue: every worker was busy", fpmQueue))
	}
	return out
}

// apacheWarnings says when Apache ran out of request slots: its status
// page showed no idle worker and no open slot (every slot of
// MaxRequestWorkers taken; the status request, which needed one, is left
// out) while the kernel held connections in the accept queue of Apache's
// port. With prefork + mod_php the slots are the PHP workers, so that is
// the pool at its size, as "the pool is at pm.max_children" is for
// php-fpm. Kept-alive connections are named: with prefork each holds a
// child (a PHP worker with mod_php) idle between its client's requests.
func apacheWarnings(in []results.Sample) []string {
	var full, seen int
	var busy, slots, keep, queue int64
	mpm := ""
	for _, s := range in {
		if a := s.Apache; a != nil {
			seen++
			mpm = a.MPM
			if a.IdleWorkers == 0 && a.Open == 0 && a.BusyWorkers > 0 {
				full++
				busy, slots = max(busy, a.BusyWorkers), max(slots, a.Slots)
				keep = max(keep, a.KeepAlive)
			}
		}
		for _, q := range s.Queues {
			if q.Owner == ComponentApache || q.Owner == ComponentApacheModPHP {
				queue = max(queue, q.Queued)
			}
		}
	}
	if seen == 0 || queue == 0 {
		return nil
	}
	if full == 0 {
		return []string{fmt.Sprintf("up to %d connections waited in Apache's accept queue", queue)}
	}
	held := ""
	if keep > 0 {
		held = fmt.Sprintf(", up to %d of them holding a kept-alive connection between requests", keep)
	}
	msg := fmt.Sprintf("Apache ran with every worker busy (%d of %d slots%s) in %d samples and up to %d connections waited in the kernel's queue: ", busy+1, slots, held, full, queue)
	if mpm == "prefork" {
		return []string{msg + "its children are the PHP workers with mod_php, so the pool is at MaxRequestWorkers"}
	}
	return []string{msg + "Apache is at MaxRequestWorkers"}
}

// webStatusWarnings says what lighttpd's and h2o's status pages showed
// going wrong between the web server and php-fpm during the window:
// connects to php-fpm refused (lighttpd: mod_fastcgi's "overloaded", its
// listen queue full; h2o: the 502 and 503 answers it made itself),
// connections php-fpm dropped that lighttpd sent again (more FastCGI
// requests than client requests), and h2o holding as many connections as
// max-connections allows. The counters are
// totals since the server started, so the window's part is the largest
// reading less the smallest (with lighttpd's server.max-worker each worker
// counts its own: the figure is then a lower bound).
func webStatusWarnings(in []results.Sample) []string {
	var out []string
	var lo, hi int64 = -1, -1
	var h2oLo, h2oHi int64 = -1, -1
	var full, maxConns int64
	var prev *results.LighttpdStatus
	var fcgi, accesses int64
	for _, s := range in {
		if l := s.Lighttpd; l != nil {
			if lo < 0 || l.FastCGIOverloaded+l.FastCGIDied < lo {
				lo = l.FastCGIOverloaded + l.FastCGIDied
			}
			hi = max(hi, l.FastCGIOverloaded+l.FastCGIDied)
			// Pairs of readings of one process (both totals grew, as
			// they do within one worker) add to the window's FastCGI
			// requests and client requests.
			if prev != nil && l.FastCGIRequests >= prev.FastCGIRequests && l.TotalAccesses >= prev.TotalAccesses {
				fcgi += l.FastCGIRequests - prev.FastCGIRequests
				accesses += l.TotalAccesses - prev.TotalAccesses
			}
			prev = l
		}
		if h := s.H2O; h != nil {
			e := h.Errors502 + h.Errors503
			if h2oLo < 0 || e < h2oLo {
				h2oLo = e
			}
			h2oHi = max(h2oHi, e)
			if h.MaxConnections > 0 && h.Connections+1 >= h.MaxConnections {
				full++
				maxConns = h.MaxConnections
			}
		}
	}
	if n := hi - lo; lo >= 0 && n > 0 {
		out = append(out, fmt.Sprintf("lighttpd could not connect to php-fpm %d times (mod_fastcgi counted the backend overloaded or dead: its listen queue was full): those requests failed; raise listen.backlog, or pm.max_children if the pool is busy", n))
	}
	// A client request makes at most one FastCGI request, unless php-fpm
	// dropped the connection and lighttpd sent it again (lighttpd logs
	// "connection was dropped after accept()" and counts no error). Its
	// total of accesses is refreshed once a second, so only a clear
	// excess counts.
	if accesses > 0 && fcgi > 3*accesses && fcgi-accesses >= 100 {
		out = append(out, fmt.Sprintf("lighttpd sent %d FastCGI requests for %d client requests: php-fpm dropped connections (its listen queue was full) and lighttpd sent them again, failing some (lighttpd-error.log names each); raise listen.backlog, or pm.max_children if the pool is busy", fcgi, accesses))
	}
	if n := h2oHi - h2oLo; h2oLo >= 0 && n > 0 {
		out = append(out, fmt.Sprintf("h2o answered %d requests with 502 or 503 itself: it could not reach php-fpm (its listen queue full, or php-fpm gone)", n))
	}
	if full > 0 {
		out = append(out, fmt.Sprintf("h2o held its max-connections (%d) in %d samples: further clients waited in the kernel's queue; raise h2o.max_connections", maxConns, full))
	}
	return out
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// backlogWarnings says when the kernel gave a listening socket a smaller
// backlog than its configuration asked for: listen(2) caps it at
// net.core.somaxconn silently, so the server believes it has the queue it
// asked for (nginx's 502s come from such a queue filling up).
func backlogWarnings(in []results.Sample) []string {
	type capped struct{ asked, got int64 }
	seen := map[string]*capped{}
	var order []string
	for _, s := range in {
		for _, q := range s.Queues {
			if q.AskedBacklog <= 0 || q.Backlog < 0 || q.Backlog >= q.AskedBacklog {
				continue
			}
			key := q.Owner + " " + q.Socket
			if seen[key] == nil {
				seen[key] = &capped{asked: q.AskedBacklog, got: q.Backlog}
				order = append(order, key)
			}
			seen[key].got = min(seen[key].got, q.Backlog)
		}
	}
	var out []string
	for _, key := range order {
		c := seen[key]
		owner, sock, _ := strings.Cut(key, " ")
		out = append(out, fmt.Sprintf("%s's socket %s asked for a listen backlog of %d but the kernel gave it %d: listen(2) caps the backlog at net.core.somaxconn when the socket opens; raise it (the recommendation's sysctl fragment) or run with --apply-sysctl", owner, sock, c.asked, c.got))
	}
	return out
}

// speedOf is the median of the samples' machine-speed probe medians; 0 when
// no sample has one.
func speedOf(in []results.Sample) float64 {
	var v []float64
	for _, s := range in {
		if s.SpeedProbeN > 0 && s.SpeedProbeMs > 0 {
			v = append(v, s.SpeedProbeMs)
		}
	}
	if len(v) == 0 {
		return 0
	}
	return stats.Median(v)
}
