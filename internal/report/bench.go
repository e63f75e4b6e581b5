package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// BenchText writes a bench run the way ab and wrk users read it: what
// was asked, then requests, throughput, transfer, latency, status codes,
// errors, the servers' errors, the generator's cost, what the observer
// saw and the kernel's limits. phptune bench prints it at the end of a
// run and phptune report --format text prints it for a stored one.
func BenchText(w io.Writer, b *results.Bench) error {
	return safeText(w, func(w io.Writer) error { benchText(w, b); return nil })
}

func benchText(buf io.Writer, b *results.Bench) {
	ka := "keep-alive"
	if !b.KeepAlive {
		ka = "new connection per request"
	}
	fmt.Fprintf(buf, "phptune bench %s", b.Target)
	if b.ID != "" {
		fmt.Fprintf(buf, "  (run %s)", b.ID)
	}
	fmt.Fprintln(buf)
	model := fmt.Sprintf("closed model, %d connections", b.Connections)
	if b.Model == "open" {
		model = fmt.Sprintf("open model, rate %s req/s (mean asked %.0f), %d connections", b.RateSchedule, b.RateAskedRPS, b.Connections)
	}
	warm := ""
	if b.WarmupS > 0 {
		warm = fmt.Sprintf(" after %.1fs warm-up", b.WarmupS)
	}
	threads := fmt.Sprintf("%d threads, ", b.Threads)
	if b.Engine != "" {
		threads = ""
	}
	fmt.Fprintf(buf, "  %s, %s%s, %s, %.2fs measured%s\n\n", model, threads, b.Protocol, ka, b.DurationS, warm)
	engineText(buf, b)
	fmt.Fprintf(buf, "  Requests     %d  (%d errors, %.2f%%)\n", b.Requests, b.Errors, pct(b.Errors, b.Requests))
	fmt.Fprintf(buf, "  Throughput   %.1f req/s (successful)", b.ThroughputRPS)
	if b.Model == "open" {
		fmt.Fprintf(buf, ", achieved rate %.1f of %.1f asked", b.RateAchievedRPS, b.RateAskedRPS)
	}
	fmt.Fprintln(buf)
	mbs := 0.0
	if b.DurationS > 0 {
		mbs = float64(b.BytesRead) / b.DurationS / 1e6
	}
	fmt.Fprintf(buf, "  Transfer     %.2f MB read, %.2f MB/s\n", float64(b.BytesRead)/1e6, mbs)
	l := b.Latency
	from := ""
	if b.Model == "open" && !b.LatencyRounded {
		from = " (from intended send time)"
	}
	fmt.Fprintf(buf, "  Latency ms   min %.3f  mean %.3f  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f%s\n",
		l.MinMs, l.MeanMs, l.P50Ms, l.P90Ms, l.P99Ms, l.P999Ms, l.MaxMs, from)
	if len(b.StatusCodes) > 0 {
		var s []string
		for _, k := range sortedKeys(b.StatusCodes) {
			s = append(s, fmt.Sprintf("%s: %d", k, b.StatusCodes[k]))
		}
		fmt.Fprintf(buf, "  Status       %s\n", strings.Join(s, ", "))
	}
	if len(b.ErrorsByClass) > 0 {
		var s []string
		for _, k := range sortedKeys(b.ErrorsByClass) {
			s = append(s, fmt.Sprintf("%s %d", k, b.ErrorsByClass[k]))
		}
		fmt.Fprintf(buf, "  Errors       %s\n", strings.Join(s, ", "))
	}
	ServerErrorsText(buf, b.ServerErrors, "  ", 13, true)
	BlockedText(buf, b.Blocked, "  ")
	g := b.Generator
	cores := 0.0
	if b.DurationS > 0 {
		cores = g.CPUSeconds / b.DurationS
	}
	fmt.Fprintf(buf, "  Generator    %.2f CPU-s (%.2f cores), %.0f requests per CPU-second, %d connections opened; machine %.0f%% idle",
		g.CPUSeconds, cores, g.RequestsPerCPUSecond, b.ConnectionsOpened, b.MachineIdlePct)
	if g.Saturated {
		fmt.Fprint(buf, " — SATURATED: the generator, not the server, may be the limit")
	}
	fmt.Fprintln(buf)
	observerText(buf, b.Observation)
	CachesText(buf, b.Caches, "  ")
	if e := b.Environment; e != nil {
		for i, line := range sysctl.Lines(e.KernelLimits) {
			label := ""
			if i == 0 {
				label = "Kernel"
			}
			fmt.Fprintf(buf, "  %-12s %s\n", label, line)
		}
	}
	for _, wmsg := range b.Warnings {
		fmt.Fprintf(buf, "  WARNING: %s\n", wmsg)
	}
}

// observerText writes the observer's lines of a run: its samples and CPU
// per request, the workers' memory, its warnings (nothing without an
// observation).
func observerText(buf io.Writer, o *results.Observation) {
	if o == nil {
		return
	}
	d := o.Derived
	var parts []string
	for _, name := range cpuGroupOrder(d.CPUSecondsPerRequest) {
		parts = append(parts, fmt.Sprintf("%s %.3f", name, 1000*d.CPUSecondsPerRequest[name]))
	}
	fmt.Fprintf(buf, "  Observer     %d samples every %.1fs; CPU ms per request: %s\n", len(o.Samples), o.IntervalS, strings.Join(parts, ", "))
	if d.WorkerPSSP50B > 0 {
		fmt.Fprintf(buf, "  Worker PSS   p50 %.1f MiB, p95 %.1f MiB, max %.1f MiB (memory of one more worker); rest of the stack %.1f MiB; busiest worker %.0f%% of the pool's CPU\n",
			float64(d.WorkerPSSP50B)/(1<<20), float64(d.WorkerPSSP95B)/(1<<20), float64(d.WorkerPSSMaxB)/(1<<20), float64(d.OtherPSSB)/(1<<20), 100*d.WorkerImbalance)
	}
	for _, wmsg := range d.Warnings {
		fmt.Fprintf(buf, "  WARNING: %s\n", wmsg)
	}
}

// pct is a as a percentage of b (0 without b).
func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// engineText writes a Locust run's engine line: its version, workers and
// what each cost.
func engineText(w io.Writer, b *results.Bench) {
	if b.Engine == "" {
		return
	}
	fmt.Fprintf(w, "  Engine       %s %s", b.Engine, b.EngineVersion)
	if b.Workers > 0 {
		fmt.Fprintf(w, ", master and %d workers", b.Workers)
	}
	if b.MasterCPUSeconds > 0 || len(b.WorkerCPUSeconds) > 0 {
		fmt.Fprintf(w, "; CPU-s master %.2f", b.MasterCPUSeconds)
		for i, c := range b.WorkerCPUSeconds {
			perCPU := 0.0
			if c > 0 && b.Workers > 0 {
				perCPU = float64(b.Requests) / float64(b.Workers) / c
			}
			fmt.Fprintf(w, ", worker %d %.2f (~%.0f req per CPU-s)", i+1, c, perCPU)
		}
	}
	fmt.Fprintln(w)
	if b.LatencyRounded {
		fmt.Fprintln(w, "  (latencies are Locust's rounded buckets, timed from each send)")
	}
}

// benchGroups are the observer's groups in the order a bench summary
// names them; any other group follows, sorted.
var benchGroups = []string{"nginx workers", "php-fpm workers", "mariadbd", "generator", "stack"}

// cpuGroupOrder lists the groups of a CPU-per-request map in benchGroups'
// order, then the rest by name.
func cpuGroupOrder(m map[string]float64) []string {
	var out []string
	known := map[string]bool{}
	for _, name := range benchGroups {
		known[name] = true
		if _, ok := m[name]; ok {
			out = append(out, name)
		}
	}
	var rest []string
	for name := range m {
		if !known[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
