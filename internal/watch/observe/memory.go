package observe

import (
	"errors"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/watch/proc"
)

// refreshMemory re-reads smaps_rollup for as many stack processes as the
// budget allows: never-read processes first, then the stalest readings.
func (o *Observer) refreshMemory(cur map[int]procInfo, pids []int, dt float64, errs *[]string) {
	live := make(map[pkey]bool, len(pids))
	var todo []pkey
	for _, pid := range pids {
		p := cur[pid]
		if p.group == GroupOther {
			continue
		}
		k := pkey{pid, p.stat.StartTime}
		live[k] = true
		todo = append(todo, k)
	}
	for k := range o.mem {
		if !live[k] {
			delete(o.mem, k)
		}
	}
	slices.SortStableFunc(todo, func(a, b pkey) int {
		return o.mem[a].at.Compare(o.mem[b].at) // zero time (never read) first
	})
	budget := o.cfg.MemoryBudgetPct
	if budget <= 0 {
		budget = 0.2
	}
	n := len(todo)
	if o.memCost > 0 && dt > 0 && !o.fullMemory {
		n = int(budget / 100 * dt / o.memCost.Seconds())
	}
	n = max(n, 1)
	var ru0, ru1 unix.Rusage
	now := time.Now()
	read := 0
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru0)
	for _, k := range todo {
		if read >= n {
			break
		}
		m, err := o.fs.ReadMemory(k.pid)
		read++
		if err != nil {
			if !errors.Is(err, proc.ErrGone) && len(*errs) < 10 {
				*errs = append(*errs, err.Error())
			}
			continue
		}
		o.mem[k] = memEntry{mem: m, at: now}
	}
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru1)
	if read > 0 {
		c := (tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)) / time.Duration(read)
		if o.memCost == 0 {
			o.memCost = c
		} else {
			o.memCost = (o.memCost*3 + c) / 4
		}
		o.memCost = max(o.memCost, 10*time.Microsecond)
	}
}
