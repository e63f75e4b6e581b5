package labstack

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/watch/observe"
	"github.com/phptune/phptune/internal/watch/proc"
)

// treeCPU is the CPU in clock ticks ever used by the process trees of the
// given roots as the kernel counts it: every live process's own time plus
// what it got from children it reaped (cutime/cstime). It is independent of
// the observer's bookkeeping (sample intervals, vanished processes, the
// reaped-children tail) and covers the same processes.
func treeCPU(t *testing.T, fs *proc.FS, roots []int) uint64 {
	pids, err := fs.PIDs()
	if err != nil {
		t.Error(err)
		return 0
	}
	stats := map[int]proc.Stat{}
	children := map[int][]int{}
	for _, pid := range pids {
		st, err := fs.ReadStat(pid)
		if err != nil {
			continue
		}
		stats[pid] = st
		children[st.PPID] = append(children[st.PPID], pid)
	}
	var total uint64
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		st, ok := stats[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid] = true
		total += st.UTime + st.STime + st.CUTime + st.CSTime
		queue = append(queue, children[pid]...)
	}
	return total
}

// labLoad returns a load.Run of the lab's front page over HTTP.
func labLoad(t *testing.T, l *lab.Lab, conns int, d, warmup time.Duration) func(ctx context.Context) (*results.Bench, error) {
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		t.Fatalf("lab URL %q", l.URL)
	}
	return func(ctx context.Context) (*results.Bench, error) {
		return load.Run(ctx, load.Options{
			Target:      load.Target{Protocol: "http", Network: "tcp", Address: u.Host, Host: u.Host, Display: l.URL},
			Requests:    []load.Request{{Method: "GET", Path: "/"}},
			Connections: conns,
			Duration:    d,
			Warmup:      warmup,
			KeepAlive:   true,
			Timeout:     10 * time.Second,
		})
	}
}

// TestLabUnderLoad brings up a real lab (nginx + php-fpm with a static pool
// of 2 workers, the CPU-bound "strings" app), loads it through nginx with 8
// connections from this process and checks what the observer saw: PSS below
// RSS, the pool full, connections queued, CPU adding up. Then it recycles
// workers every 5 requests and checks the samples have no errors and no
// holes.
func TestLabUnderLoad(t *testing.T) {
	labtest.Home(t)
	ctx := context.Background()
	l, err := lab.Up(ctx, lab.Options{Name: "obs", App: "strings", Set: []string{"pm=static", "pm.max_children=2"}})
	if err != nil {
		t.Fatal(err)
	}

	cfg, closeDB, err := Observer(l)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	cfg.Roots = append(cfg.Roots, observe.Root{Component: observe.ComponentGenerator, PID: os.Getpid()})
	cfg.Others = true
	cfg.Interval = 500 * time.Millisecond
	var roots []int
	for _, r := range cfg.Roots {
		roots = append(roots, r.PID)
	}
	fs, err := proc.NewFS("/proc", "/sys")
	if err != nil {
		t.Fatal(err)
	}
	// The kernel's count of the roots' trees, read right after each sample
	// (on the sampling goroutine, a few ms after the sample's scan).
	var mu sync.Mutex
	var tree []uint64
	cfg.OnSample = func(results.Sample) {
		c := treeCPU(t, fs, roots)
		mu.Lock()
		tree = append(tree, c)
		mu.Unlock()
	}
	b, err := observe.MeasureConfig(ctx, cfg, labLoad(t, l, 8, 5*time.Second, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	obs := b.Observation
	t.Logf("%d requests (%d errors) at %.0f req/s; %d samples; derived %+v", b.Requests, b.Errors, b.ThroughputRPS, len(obs.Samples), obs.Derived)
	if b.Errors > 0 || b.Requests == 0 {
		t.Fatalf("load: %d requests, %d errors %v", b.Requests, b.Errors, b.ErrorsByClass)
	}
	if len(obs.Samples) != len(tree) || len(tree) < 8 {
		t.Fatalf("%d samples, %d tree readings", len(obs.Samples), len(tree))
	}

	var maxActive, maxTotal, statusQueue, kernelQueue int64
	var sawPSS bool
	for i, s := range obs.Samples {
		for _, e := range s.Errors {
			t.Errorf("sample %d: %s", i, e)
		}
		for _, g := range s.Groups {
			if g.Name == observe.GroupGenerator || g.Name == observe.GroupOther {
				continue
			}
			if g.Processes > 0 && g.PSSB <= 0 {
				t.Errorf("sample %d: group %s has %d processes and no PSS", i, g.Name, g.Processes)
			}
			for _, w := range g.PerProcess {
				sawPSS = true
				// opcache's shared memory, the php binary and
				// its libraries are shared by the workers: PSS
				// divides them among the sharers, RSS does not.
				if w.PSSB <= 0 || w.PSSB >= w.RSSB {
					t.Errorf("sample %d worker %d: PSS %d, RSS %d: want 0 < PSS < RSS", i, w.PID, w.PSSB, w.RSSB)
				}
			}
		}
		for _, f := range s.FPM {
			if f.Error != "" {
				// A full pool answers its status page late; the
				// kernel queue below does not need it.
				t.Logf("sample %d: fpm status: %s", i, f.Error)
				continue
			}
			maxActive = max(maxActive, f.ActiveProcesses)
			maxTotal = max(maxTotal, f.TotalProcesses)
			statusQueue = max(statusQueue, f.ListenQueue, f.MaxListenQueue)
		}
		for _, q := range s.Queues {
			if q.Owner == observe.ComponentFPM {
				kernelQueue = max(kernelQueue, q.Queued)
			}
		}
	}
	if !sawPSS {
		t.Error("no worker's memory was read")
	}
	t.Logf("fpm: peak active %d of %d; listen queue peak: status page %d, kernel %d", maxActive, maxTotal, statusQueue, kernelQueue)
	if maxActive != 2 {
		t.Errorf("active processes peaked at %d with 8 connections on pm.max_children=2; want 2", maxActive)
	}
	if statusQueue <= 0 && kernelQueue <= 0 {
		t.Errorf("no connection ever queued for php-fpm (status page %d, kernel %d) with 8 connections on 2 workers", statusQueue, kernelQueue)
	}
	if w := obs.Derived.Warnings; !strings.Contains(strings.Join(w, "\n"), "pool www") {
		t.Errorf("no warning of the pool at max_children: %q", w)
	}

	// CPU adding up, from the first sample to the last (warm-up
	// included: the accounting must hold whatever the load).
	//
	// 1. The stack's and the generator's groups against the kernel's own
	// count of those process trees (treeCPU at each sample). This is the
	// check of the observer's accounting that other work on this shared
	// machine cannot disturb. Within 10%.
	var stackGroups, allGroups, machineUS, machineSoft float64
	for _, s := range obs.Samples[1:] {
		for _, g := range s.Groups {
			c := (g.UserPct + g.SystemPct) / 100 * s.DTS
			allGroups += c
			if g.Name != observe.GroupOther {
				stackGroups += c
			}
		}
		cores := float64(s.Machine.Cores)
		machineUS += (s.Machine.UserPct + s.Machine.SystemPct) / 100 * cores * s.DTS
		machineSoft += s.Machine.SoftIRQPct / 100 * cores * s.DTS
	}
	kernel := float64(tree[len(tree)-1]-tree[0]) / proc.UserHZ
	t.Logf("CPU over %.1fs: stack+generator groups %.2f CPU-s, the kernel's count of their trees %.2f CPU-s; all groups %.2f CPU-s, machine user+system %.2f (+softirq %.2f) CPU-s",
		obs.Samples[len(obs.Samples)-1].TS-obs.Samples[0].TS, stackGroups, kernel, allGroups, machineUS, machineSoft)
	if kernel < 1 {
		t.Fatalf("the stack used only %.2f CPU-s under load", kernel)
	}
	if r := stackGroups / kernel; r < 0.9 || r > 1.1 {
		t.Errorf("stack and generator groups add up to %.0f%% of their trees' CPU, want within 10%%", r*100)
	}
	// 2. Every group, "other" included, against the machine's busy time.
	// Processes are charged the ticks of softirqs that interrupt them
	// (the machine counts those as softirq), so the groups may exceed
	// user+system by up to the softirq time; more is CPU counted twice,
	// always an error. Too little is only an error on a quiet machine:
	// short-lived processes of other work whose parent also exits within
	// an interval (a build's compiler jobs, other labs going down) are
	// seen by nobody, so the lower bound is checked only when "other"
	// processes used little CPU, and it then measures the observer, not
	// the neighbours.
	otherShare := (allGroups - stackGroups) / allGroups
	lo, hi := 0.9*machineUS, 1.1*(machineUS+machineSoft)
	switch {
	case allGroups > hi:
		t.Errorf("all groups add up to %.2f CPU-s, more than the machine's user+system %.2f + softirq %.2f CPU-s + 10%%", allGroups, machineUS, machineSoft)
	case allGroups >= lo:
	case otherShare > 0.1:
		t.Logf("groups %.2f CPU-s below 90%% of the machine's %.2f, but other work took %.0f%% of the CPU: not checked", allGroups, machineUS, otherShare*100)
	default:
		t.Errorf("all groups add up to %.2f CPU-s, machine user+system %.2f: want at least 90%%", allGroups, machineUS)
	}

	// Recycling: every worker exits after 5 requests. Processes come and
	// go between samples; no sample may report an error, and no group may
	// show processes without memory or a hole in its series.
	c2 := l.Config.Clone()
	if err := c2.Set("pm.max_requests", "5"); err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(ctx, c2); err != nil {
		t.Fatal(err)
	}
	cfg2, closeDB2, err := Observer(l)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB2()
	cfg2.Roots = append(cfg2.Roots, observe.Root{Component: observe.ComponentGenerator, PID: os.Getpid()})
	cfg2.Others = true
	cfg2.Interval = 500 * time.Millisecond
	b, err = observe.MeasureConfig(ctx, cfg2, labLoad(t, l, 4, 4*time.Second, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	obs = b.Observation
	t.Logf("recycling: %d requests (%d errors), %d samples; derived %+v", b.Requests, b.Errors, len(obs.Samples), obs.Derived)
	if b.Errors > 0 {
		t.Errorf("recycling workers every 5 requests gave %d errors %v", b.Errors, b.ErrorsByClass)
	}
	var pids = map[int]bool{}
	var prevAccepted int64 = -1
	var underLoad, empty, between int
	for i, s := range obs.Samples {
		for _, e := range s.Errors {
			t.Errorf("recycling sample %d: %s", i, e)
		}
		var workers *results.GroupSample
		for j := range s.Groups {
			if s.Groups[j].Name == observe.GroupFPMWorkers {
				workers = &s.Groups[j]
			}
		}
		if workers == nil {
			t.Errorf("recycling sample %d: no php-fpm workers group: %+v", i, s.Groups)
			continue
		}
		if workers.Processes == 0 {
			// Both workers may have exited after their fifth request
			// and the master not yet forked the next ones at the
			// instant of the scan (seen in CI: no process, 182% CPU
			// of the exited workers). A rare gap is the truth; most
			// samples must still find workers.
			between++
			t.Logf("recycling sample %d: no worker alive at the scan, CPU %.1f%%", i, workers.UserPct+workers.SystemPct)
			continue
		}
		for _, w := range workers.PerProcess {
			pids[w.PID] = true
		}
		if s.TS > 1 {
			// Workers recycled every 5 requests live tens of ms: the one
			// a sample's memory budget reads may be gone by then, so a
			// sample may miss every worker's memory, not most of them.
			underLoad++
			if workers.PSSB <= 0 || workers.UserPct+workers.SystemPct <= 0 {
				empty++
				t.Logf("recycling sample %d at %.1fs: workers group shows PSS %d, CPU %.1f%%", i, s.TS, workers.PSSB, workers.UserPct+workers.SystemPct)
			}
		}
		if len(s.FPM) != 1 {
			t.Errorf("recycling sample %d: %d fpm status entries", i, len(s.FPM))
			continue
		}
		if f := s.FPM[0]; f.Error == "" {
			if f.AcceptedConn < prevAccepted {
				t.Errorf("recycling sample %d: accepted conn went back from %d to %d", i, prevAccepted, f.AcceptedConn)
			}
			prevAccepted = f.AcceptedConn
		}
	}
	if 4*between > len(obs.Samples) {
		t.Errorf("recycling: %d of %d samples found no worker alive", between, len(obs.Samples))
	}
	if underLoad == 0 || 2*empty > underLoad {
		t.Errorf("recycling: %d of %d samples under load show no worker's PSS or CPU", empty, underLoad)
	}
	t.Logf("recycling: memory read of %d distinct workers", len(pids))
	if len(pids) < 4 {
		t.Errorf("only %d distinct workers seen while recycling every 5 requests", len(pids))
	}
	if c := obs.Derived.CPUSecondsPerRequest[observe.GroupFPMWorkers]; c <= 0 {
		t.Errorf("workers' CPU per request %v while recycling", c)
	}
}
