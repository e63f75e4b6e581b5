// Package speedprobe measures how fast this machine runs a fixed unit of
// work at the moment, so that CPU per request can be read at a common
// machine speed.
//
// On a shared VM the CPU time a request costs moves with the neighbours:
// a busy sibling hyperthread or a cache-hungry tenant slows every
// instruction, and /proc charges the slower instructions to the process
// (only steal, time not run at all, is left out). The stack's CPU per
// request of one configuration moved by a third from trial to trial here
// with no steal. A probe that runs the same small piece of work every
// 100 ms during a trial and reads the CPU time it took (its own thread's
// clock) slows with the stack: divided by the probe's median, CPU per
// request is in "probe units", which the neighbours move far less. The
// work is a pointer chase over 1 MiB with arithmetic, 1.5-2 ms here, so
// memory latency and the core's speed both count, as they do for an
// interpreter; it costs about 1.7% of one core (median readings of
// 1.69-1.77 ms every 100 ms in three WordPress tunes of 26 Nov 2026).
package speedprobe

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/model/stats"
)

// Every is the time between two probes.
const Every = 100 * time.Millisecond

const (
	chaseWords = 1 << 18 // 1 MiB of uint32
	chaseSteps = 20_000
)

// Reading is one probe: when it ran (seconds since the probe started) and
// the CPU time the unit of work took.
type Reading struct {
	AtS   float64
	CPUMs float64
}

// Probe runs the unit of work every Every in a goroutine of its own.
type Probe struct {
	start  time.Time
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	readings []Reading
}

// Start begins probing; readings' times count from start.
func Start(ctx context.Context, start time.Time) *Probe {
	ctx, cancel := context.WithCancel(ctx)
	p := &Probe{start: start, cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p
}

func (p *Probe) loop(ctx context.Context) {
	defer close(p.done)
	// The thread's CPU clock measures the work only if the goroutine stays
	// on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	chain := newChain()
	t := time.NewTicker(Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ms, ok := chain.timed()
		if !ok {
			continue
		}
		r := Reading{AtS: time.Since(p.start).Seconds(), CPUMs: ms}
		p.mu.Lock()
		p.readings = append(p.readings, r)
		p.mu.Unlock()
	}
}

// Stop ends probing and returns every reading.
func (p *Probe) Stop() []Reading {
	p.cancel()
	<-p.done
	return p.Readings()
}

// Readings returns a copy of the readings so far.
func (p *Probe) Readings() []Reading {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.readings)
}

// Median is the median CPU time of the readings taken after fromS and, when
// toS > 0, up to toS; n is how many there were (0: no median).
func Median(rs []Reading, fromS, toS float64) (ms float64, n int) {
	var v []float64
	for _, r := range rs {
		if r.AtS > fromS && (toS <= 0 || r.AtS <= toS) && r.CPUMs > 0 {
			v = append(v, r.CPUMs)
		}
	}
	if len(v) == 0 {
		return 0, 0
	}
	return stats.Median(v), len(v)
}

// chain is a random cyclic permutation to chase through.
type chain struct {
	next []uint32
	sink uint64
}

func newChain() *chain {
	n := chaseWords
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	x := uint64(0x9E3779B97F4A7C15) // fixed seed: the same work every time
	for i := n - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		j := int(x % uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	c := &chain{next: make([]uint32, n)}
	for i := range order {
		c.next[order[i]] = order[(i+1)%n]
	}
	return c
}

// timed runs the unit of work and returns its CPU time in milliseconds.
func (c *chain) timed() (float64, bool) {
	t0, ok0 := threadCPU()
	c.work()
	t1, ok1 := threadCPU()
	if !ok0 || !ok1 || t1 <= t0 {
		return 0, false
	}
	return float64(t1-t0) / 1e6, true
}

func (c *chain) work() {
	idx := uint32(0)
	s := c.sink
	for i := 0; i < chaseSteps; i++ {
		idx = c.next[idx]
		s += uint64(idx) * 2654435761
		if s&7 == 3 {
			s ^= s >> 13
		}
	}
	c.sink = s
}

func threadCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
