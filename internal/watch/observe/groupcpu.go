package observe

import (
	"fmt"
	"slices"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/proc"
)

// groupTally accumulates one sample's CPU ticks and memory per group.
type groupTally struct {
	g      results.GroupSample
	user   uint64
	sys    uint64
	tail   uint64 // CPU of processes not seen, credited through a parent's cutime
	detail bool   // per-process figures are kept (PHP workers)
}

// groupTallies holds a sample's tallies by group name and registers each
// new group with the observer so later samples keep it in their series.
type groupTallies struct {
	o      *Observer
	byName map[string]*groupTally
}

// get returns the tally of a group, creating it empty.
func (t groupTallies) get(name string) *groupTally {
	a := t.byName[name]
	if a == nil {
		a = &groupTally{g: results.GroupSample{Name: name}, detail: IsPHPWorkers(name)}
		t.byName[name] = a
		if !slices.Contains(t.o.groups, name) {
			t.o.groups = append(t.o.groups, name)
		}
	}
	return a
}

// groupSamples turns two scans into per-group CPU and memory. busy is the
// machine's busy CPU in the interval in ticks (0: unknown), the ceiling of
// the CPU credited to processes that were not seen.
func (o *Observer) groupSamples(cur map[int]procInfo, dt, busy float64, errs *[]string) []results.GroupSample {
	t := groupTallies{o: o, byName: map[string]*groupTally{}}
	o.addConfiguredGroups(t, cur, errs)
	pct := func(ticks uint64) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(ticks) / proc.UserHZ / dt * 100
	}
	pids := make([]int, 0, len(cur))
	for pid, p := range cur {
		if p.group != "" {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	o.refreshMemory(cur, pids, dt, errs)
	o.addSeenProcesses(t, cur, pids, pct)
	o.addReapedCPU(t, cur, o.vanishedCPU(cur))
	if busy > 0 {
		o.capTails(t, cur, busy)
	}
	out := make([]results.GroupSample, 0, len(t.byName))
	slices.SortStableFunc(o.groups, func(a, b string) int { return groupRank(a) - groupRank(b) })
	for _, name := range o.groups {
		a, ok := t.byName[name]
		if !ok {
			continue
		}
		a.g.UserPct = pct(a.user + a.tail)
		a.g.SystemPct = pct(a.sys)
		out = append(out, a.g)
	}
	return out
}

// addConfiguredGroups creates the groups of the configured roots: they
// always have their groups, even empty, so a series has no holes; a
// missing root is reported.
func (o *Observer) addConfiguredGroups(t groupTallies, cur map[int]procInfo, errs *[]string) {
	for _, r := range o.cfg.Roots {
		rg, cg := groupsOf(r.Component)
		t.get(rg)
		if cg != GroupFPMWorkers || len(o.poolNames) <= 1 {
			t.get(cg)
		}
		if _, ok := cur[r.PID]; !ok {
			*errs = append(*errs, fmt.Sprintf("%s (pid %d) is not running", r.Component, r.PID))
		}
	}
	if o.cfg.Others {
		t.get(GroupOther)
	}
}

// addSeenProcesses adds each process's CPU since the previous scan and its
// last memory reading to its group; pct turns ticks into percent of a core.
func (o *Observer) addSeenProcesses(t groupTallies, cur map[int]procInfo, pids []int, pct func(uint64) float64) {
	for _, pid := range pids {
		p := cur[pid]
		a := t.get(p.group)
		u, sy := p.stat.UTime, p.stat.STime
		if old, ok := o.prev[pid]; ok && old.stat.StartTime == p.stat.StartTime {
			u, sy = sub(u, old.stat.UTime), sub(sy, old.stat.STime)
		}
		// else: born since the previous sample, all its CPU is new.
		a.user += u
		a.sys += sy
		a.g.Processes++
		if p.group == GroupOther {
			continue
		}
		me, ok := o.mem[pkey{pid, p.stat.StartTime}]
		if !ok {
			continue
		}
		mem := me.mem
		a.g.RSSB += mem.RSS
		a.g.PSSB += mem.PSS
		a.g.USSB += mem.USS
		if a.detail {
			a.g.PerProcess = append(a.g.PerProcess, results.ProcessSample{
				PID: pid, CPUPct: pct(u + sy), RSSB: mem.RSS, PSSB: mem.PSS, USSB: mem.USS})
		}
	}
}

// reaped is the CPU last seen of a parent's children gone since the
// previous sample, and the group they belonged to.
type reaped struct {
	seen  uint64
	group string
}

// vanishedCPU finds the processes gone since the previous sample and sums,
// per surviving parent, the CPU last seen of each one's subtree of gone
// processes: a gone process's own time and its cutime then, plus that of
// gone children it reaped in between (a php-fpm master stopped with its
// workers), which the parent's cutime now also includes.
func (o *Observer) vanishedCPU(cur map[int]procInfo) map[int]*reaped {
	gone := map[int]procInfo{}
	kids := map[int][]int{}
	for pid, old := range o.prev {
		if p, ok := cur[pid]; ok && p.stat.StartTime == old.stat.StartTime {
			continue
		}
		gone[pid] = old
		kids[old.stat.PPID] = append(kids[old.stat.PPID], pid)
	}
	var subtree func(pid, depth int) uint64
	subtree = func(pid, depth int) uint64 {
		old := gone[pid]
		n := old.stat.CPUTicks() + old.stat.CUTime + old.stat.CSTime
		if depth < 64 {
			for _, k := range kids[pid] {
				n += subtree(k, depth+1)
			}
		}
		return n
	}
	vanished := map[int]*reaped{}
	for pid, old := range gone {
		if _, parentGone := gone[old.stat.PPID]; parentGone || old.group == "" {
			continue // counted in its gone parent's subtree
		}
		r := vanished[old.stat.PPID]
		if r == nil {
			r = &reaped{group: old.group}
			vanished[old.stat.PPID] = r
		}
		r.seen += subtree(pid, 0)
	}
	return vanished
}

// addReapedCPU credits what processes that exited since the previous
// sample spent unseen: their last moments of CPU were not seen, but their
// parent's cutime/cstime grew by their whole lifetime when it reaped them.
// What was not yet counted is that growth minus what was seen, credited to
// the children's group.
func (o *Observer) addReapedCPU(t groupTallies, cur map[int]procInfo, vanished map[int]*reaped) {
	owed := map[pkey]owedCPU{}
	for ppid, p := range cur {
		old, ok := o.prev[ppid]
		if !ok || old.stat.StartTime != p.stat.StartTime || p.group == "" {
			continue
		}
		k := pkey{ppid, p.stat.StartTime}
		grew := sub(p.stat.CUTime+p.stat.CSTime, old.stat.CUTime+old.stat.CSTime)
		// Children nobody saw (born and reaped within the interval)
		// belong to the parent's worker group.
		group := o.childGroupOf(p.group)
		var seen, seenNow uint64
		if r := vanished[ppid]; r != nil {
			seenNow, group = r.seen, r.group
		}
		prevOwed := o.owed[k]
		if prevOwed.ticks > 0 && seenNow == 0 {
			group = prevOwed.group
		}
		seen = seenNow + prevOwed.ticks
		if grew < seen {
			// The parent was read before it reaped children seen
			// gone: their time shows in its cutime next interval.
			// Only this interval's debt is carried, once.
			if left := min(seen-grew, seenNow); left > 0 {
				owed[k] = owedCPU{ticks: left, group: group}
			}
			continue
		}
		// Split between user and system is unknown here; it is
		// counted as user time.
		t.get(group).tail += grew - seen
	}
	o.owed = owed
}

// childGroupOf names the group of the children a process of group parent
// forks: a master's workers, or the group itself.
func (o *Observer) childGroupOf(parent string) string {
	switch parent {
	case GroupFPMMaster:
		return GroupFPMWorkers
	case GroupNginxMaster:
		return GroupNginxWorkers
	case GroupLighttpd:
		return GroupLighttpdWorkers
	case GroupApacheParent:
		for _, r := range o.cfg.Roots {
			if r.Component == ComponentApacheModPHP {
				return GroupApacheModPHPWorkers
			}
		}
		return GroupApacheWorkers
	case GroupUnitMain:
		// The prototype reaps the application processes.
		return GroupUnitWorkers
	}
	return parent
}

// capTails keeps the unseen CPU within what the machine spent beyond what
// the processes' own counters show. When it exceeds that, a parent was
// read after it reaped a child that the same scan still read alive, and
// its cutime growth repeats the child's whole life: the tails are scaled
// down. The machine's tick counts and the processes' times differ by a
// few percent, hence the margin.
func (o *Observer) capTails(t groupTallies, cur map[int]procInfo, busy float64) {
	var direct, tails float64
	for pid, p := range cur {
		c := p.stat.CPUTicks()
		if old, ok := o.prev[pid]; ok && old.stat.StartTime == p.stat.StartTime {
			c = sub(c, old.stat.CPUTicks())
		}
		direct += float64(c)
	}
	for _, a := range t.byName {
		tails += float64(a.tail)
	}
	if room := 1.1*busy + 2 - direct; tails > max(room, 0) {
		f := max(room, 0) / tails
		for _, a := range t.byName {
			a.tail = uint64(float64(a.tail) * f)
		}
	}
}

// sub is a - b, or 0 when b is larger (a counter that went backwards).
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
