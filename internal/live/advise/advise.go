// Package advise turns what a live host shows — its php-fpm pools as
// configured, their workers' memory, their status pages, the host's
// memory — into findings and recommended pool sizes, without sending any
// load. The package is pure: package livehost and the CLI read the host.
//
// Every pool on the host is sized together under the host's one memory
// budget (the agency case: one pool per site), not one at a time. Without
// load there is no knee to find: the sizes are what memory allows and what
// the pools' own counters (max children reached, listen queue) ask for;
// `phptune tune` measures the rest.
package advise

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// Pool is one pool as observed.
type Pool struct {
	Master      string // php-fpm.conf of its master
	Name        string
	File        string // where its section is
	PM          string
	MaxChildren int64 // configured
	// WorkerPSS is each running worker's proportional set size, bytes.
	WorkerPSS []int64
	// Status is its status page (nil when pm.status_path is off or the
	// page could not be read: StatusError says why).
	Status      *results.FPMStatus
	StatusPath  string
	StatusError string
	// Uptime is how long its master has run: the status counters
	// (max children reached, max active processes) cover that window.
	Uptime time.Duration
}

// Host is the host's memory.
type Host struct {
	MemTotal, MemAvailable int64
	SwapTotal, SwapFree    int64
	// CgroupLimit is the smallest memory limit on the masters' cgroups
	// (0: none).
	CgroupLimit int64
	// DatabaseGrowthB is memory the database will still take beyond what
	// it holds now (its buffer pool filling up or raised): kept out of the
	// pools' budget (see AdviseHost).
	DatabaseGrowthB int64
}

// Finding is one thing advise says, with the numbers behind it.
type Finding struct {
	Severity string `json:"severity"` // "warning" or "info"
	Pool     string `json:"pool,omitempty"`
	Message  string `json:"message"`
}

// PoolAdvice is one pool's recommended size.
type PoolAdvice struct {
	Master         string `json:"master"`
	Pool           string `json:"pool"`
	File           string `json:"file"`
	PM             string `json:"pm"`
	MaxChildren    int64  `json:"max_children"`
	Recommended    int64  `json:"recommended_max_children"`
	WorkerPSSP95   int64  `json:"worker_pss_p95_bytes"`
	Workers        int    `json:"workers"`
	MemoryShareB   int64  `json:"memory_share_bytes"`
	MaxReached     int64  `json:"max_children_reached"`
	MaxActive      int64  `json:"max_active_processes"`
	ListenQueueMax int64  `json:"max_listen_queue"`
	Why            string `json:"why"`
}

// Changed reports whether the pool's size should change.
func (p PoolAdvice) Changed() bool { return p.Recommended != p.MaxChildren }

// Advice is the whole answer.
type Advice struct {
	BudgetB  int64        `json:"memory_budget_bytes"`
	ReserveB int64        `json:"memory_reserve_bytes"`
	Pools    []PoolAdvice `json:"pools"`
	Findings []Finding    `json:"findings"`
	// Opcache is each master's opcache (advise --opcache).
	Opcache []OpcacheAdvice `json:"opcache,omitempty"`
	// Tune is a stored tune's measured pool size beside advise's.
	Tune *TuneComparison `json:"tune,omitempty"`
	// MariaDB is the database's advice (nil when none was read).
	MariaDB *MariaDBAdvice `json:"mariadb,omitempty"`
	Front   *Front         `json:"front,omitempty"` // the web servers in front (front.go)
}

// Changes reports whether any pool, or the database, should change.
func (a Advice) Changes() bool {
	if a.MariaDB != nil && a.MariaDB.Changed() {
		return true
	}
	for _, p := range a.Pools {
		if p.Changed() {
			return true
		}
	}
	for _, o := range a.Opcache {
		if len(o.Knobs) > 0 {
			return true
		}
	}
	return false
}

// MinWindow is the observation below which peaks are not trusted (as
// MySQLTuner warns under a day of uptime).
const MinWindow = 24 * time.Hour

// Reserve is the memory kept out of the pools' budget: a tenth of the
// host, at least 256 MiB, for the kernel's caches, the web server and
// the rest; a MariaDB advise reads gets its own share (AdviseHost).
func Reserve(h Host) int64 { return max(256<<20, h.MemTotal/10) }

// Advise sizes every pool under the host's one budget: the memory
// available now plus what the pools' workers hold (resizing them frees
// it), less Reserve, capped by the cgroup limit. Each pool gets a share
// in proportion to what it needs at its peak (the most workers it has
// had busy, or its configured size when its status page is off) times
// its workers' 95th percentile PSS; its size is its share divided by that
// PSS. A pool whose configured size does not fit its share is lowered to
// it; a pool that reached pm.max_children is raised, at most doubled,
// when its share allows; otherwise it is kept.
func Advise(h Host, pools []Pool) Advice {
	var a Advice
	a.ReserveB = Reserve(h)
	var held int64
	for _, p := range pools {
		for _, b := range p.WorkerPSS {
			held += b
		}
	}
	a.BudgetB = max(0, h.MemAvailable+held-a.ReserveB-h.DatabaseGrowthB)
	if h.CgroupLimit > 0 {
		a.BudgetB = min(a.BudgetB, max(0, h.CgroupLimit-a.ReserveB/2))
	}
	type need struct {
		peak int64
		pss  int64
	}
	needs := make([]need, len(pools))
	var total float64
	for i, p := range pools {
		n := need{pss: p95(p.WorkerPSS), peak: peakWorkers(p)}
		needs[i] = n
		total += float64(n.peak * n.pss)
	}
	for i, p := range pools {
		n := needs[i]
		pa := PoolAdvice{Master: p.Master, Pool: p.Name, File: p.File, PM: p.PM, MaxChildren: p.MaxChildren, Recommended: p.MaxChildren,
			WorkerPSSP95: n.pss, Workers: len(p.WorkerPSS)}
		if p.Status != nil {
			pa.MaxReached, pa.MaxActive, pa.ListenQueueMax = p.Status.MaxChildrenReached, p.Status.MaxActiveProcesses, p.Status.MaxListenQueue
		}
		switch {
		case n.pss <= 0:
			pa.Why = "no worker's memory could be read: kept"
		case total <= 0:
			pa.Why = "kept"
		default:
			pa.MemoryShareB = int64(float64(a.BudgetB) * float64(n.peak*n.pss) / total)
			fit := max(1, pa.MemoryShareB/n.pss)
			switch {
			case p.MaxChildren > fit:
				pa.Recommended = fit
				pa.Why = fmt.Sprintf("%d workers x %s (p95 PSS) = %s exceed the pool's share of the memory budget, %s: lowered so a full pool cannot swap or meet the OOM killer", p.MaxChildren, mib(n.pss), mib(p.MaxChildren*n.pss), mib(pa.MemoryShareB))
			case pa.MaxReached > 0 && fit > p.MaxChildren:
				pa.Recommended = min(fit, 2*p.MaxChildren)
				pa.Why = fmt.Sprintf("reached pm.max_children %d times since its master started; its share of memory (%s) holds %d workers of %s: raised to %d (at most doubled: measure the knee with phptune tune before going further)", pa.MaxReached, mib(pa.MemoryShareB), fit, mib(n.pss), pa.Recommended)
			default:
				pa.Why = fmt.Sprintf("fits its share of memory (%s holds %d workers of %s) and never reached pm.max_children: kept", mib(pa.MemoryShareB), fit, mib(n.pss))
			}
		}
		a.Pools = append(a.Pools, pa)
		a.Findings = append(a.Findings, findings(p, pa)...)
	}
	if h.SwapTotal > 0 && h.SwapTotal-h.SwapFree > 0 {
		a.Findings = append(a.Findings, Finding{Severity: "warning", Message: fmt.Sprintf("%s of swap in use: a worker that swaps serves requests many times slower", mib(h.SwapTotal-h.SwapFree))})
	}
	a.Findings = append(a.Findings, Finding{Severity: "info", Message: fmt.Sprintf("memory budget for the pools: %s (available %s + held by the workers %s - reserve %s%s%s); advise sends no load, so it sizes for memory and the pools' own counters only: phptune tune measures the knee",
		mib(a.BudgetB), mib(h.MemAvailable), mib(held), mib(a.ReserveB), databaseNote(h), cgroupNote(h))})
	sort.SliceStable(a.Findings, func(i, j int) bool { return a.Findings[i].Severity == "warning" && a.Findings[j].Severity != "warning" })
	return a
}

// peakWorkers is the most workers a pool needs at once: the most it had
// busy (its configured size when it reached it), or its configured size
// without a status page.
func peakWorkers(p Pool) int64 {
	if p.Status == nil {
		return max(1, p.MaxChildren)
	}
	peak := max(1, p.Status.MaxActiveProcesses)
	if p.Status.MaxChildrenReached > 0 {
		peak = max(peak, p.MaxChildren)
	}
	return peak
}

func findings(p Pool, pa PoolAdvice) []Finding {
	var out []Finding
	warn := func(format string, args ...any) {
		out = append(out, Finding{Severity: "warning", Pool: p.Name, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case p.StatusPath == "":
		warn("pm.status_path is off: no counters of its load (max active, max children reached, queue) were read; set pm.status_path = /status in %s (reachable from loopback only) and reload php-fpm", p.File)
	case p.Status == nil:
		warn("its status page %s could not be read: %s", p.StatusPath, p.StatusError)
	}
	if p.Status != nil {
		if p.Uptime < MinWindow {
			warn("observed for %s since its master started: too short to trust its peaks (max active %d, max children reached %d); run advise again after a day of traffic", p.Uptime.Round(time.Second), p.Status.MaxActiveProcesses, p.Status.MaxChildrenReached)
		}
		if p.Status.MaxListenQueue > 0 {
			warn("up to %d connections waited in its socket's queue since its master started: every worker was busy", p.Status.MaxListenQueue)
		}
	}
	if pa.Changed() {
		out = append(out, Finding{Severity: "warning", Pool: p.Name, Message: fmt.Sprintf("pm.max_children %d -> %d: %s", pa.MaxChildren, pa.Recommended, pa.Why)})
	}
	return out
}

func cgroupNote(h Host) string {
	if h.CgroupLimit <= 0 {
		return ""
	}
	return fmt.Sprintf("; capped by the cgroup limit %s", mib(h.CgroupLimit))
}

// p95 is the 95th percentile (nearest rank) of xs; 0 when empty.
func p95(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(math.Ceil(0.95*float64(len(s))))-1]
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Merge combines samples of the same host taken over time (advise
// --watch) into one observation per pool: every sample's worker PSS (so
// the percentile covers the whole watch), the last status page read (its
// counters are cumulative since the master started), the longest uptime.
// Pools are keyed by master and name, in first-seen order.
func Merge(samples [][]Pool) []Pool {
	index := map[[2]string]int{}
	var out []Pool
	for _, sample := range samples {
		for _, p := range sample {
			key := [2]string{p.Master, p.Name}
			i, ok := index[key]
			if !ok {
				index[key] = len(out)
				out = append(out, p)
				out[len(out)-1].WorkerPSS = append([]int64(nil), p.WorkerPSS...)
				continue
			}
			m := &out[i]
			m.WorkerPSS = append(m.WorkerPSS, p.WorkerPSS...)
			m.MaxChildren, m.PM, m.File, m.StatusPath = p.MaxChildren, p.PM, p.File, p.StatusPath
			if p.Status != nil {
				m.Status, m.StatusError = p.Status, ""
			} else if m.Status == nil {
				m.StatusError = p.StatusError
			}
			m.Uptime = max(m.Uptime, p.Uptime)
		}
	}
	return out
}

// MergeHosts keeps the worst of each memory reading over the watch: the
// least available memory and free swap, the smallest cgroup limit.
func MergeHosts(hs []Host) Host {
	if len(hs) == 0 {
		return Host{}
	}
	out := hs[0]
	for _, h := range hs[1:] {
		out.MemAvailable = min(out.MemAvailable, h.MemAvailable)
		out.SwapFree = min(out.SwapFree, h.SwapFree)
		if h.CgroupLimit > 0 && (out.CgroupLimit == 0 || h.CgroupLimit < out.CgroupLimit) {
			out.CgroupLimit = h.CgroupLimit
		}
	}
	return out
}
