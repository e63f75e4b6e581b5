package labstack

import (
	"context"
	"errors"
	"sync"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/watch/cachestat"
)

// CacheCounters reads a site lab's own caches' counters (its Redis and
// Memcached: hits, misses, evictions, memory; package cachestat) at the
// start of a run's measured part and at its end, through the lab's own
// way into its seal (lab.DialCache), so that the run's result says how
// the caches served it:
//
//	cc := labstack.NewCacheCounters(ctx, l) // reads now
//	opt.OnMeasure = cc.Mark                // and again when the warm-up ends
//	b, err := load.Run(ctx, opt)
//	cc.Attach(ctx, b)                      // b.Caches: the measured part's
//
// A lab without caches makes a nil *CacheCounters, whose methods do
// nothing.
type CacheCounters struct {
	lab   *lab.Lab
	ctx   context.Context
	mu    sync.Mutex
	start []reading
}

// reading is one cache's counters, or why they were not read.
type reading struct {
	c   cachestat.Counters
	err error
}

// NewCacheCounters reads the lab's caches now: without a warm-up the
// measured part starts here.
func NewCacheCounters(ctx context.Context, l *lab.Lab) *CacheCounters {
	if l == nil || len(l.Caches) == 0 {
		return nil
	}
	cc := &CacheCounters{lab: l, ctx: context.WithoutCancel(ctx)}
	cc.start = cc.read(ctx)
	return cc
}

// Mark reads the caches again: load.Options.OnMeasure calls it when the
// warm-up ends, so that the warm-up's lookups are left out.
func (cc *CacheCounters) Mark() {
	if cc == nil {
		return
	}
	r := cc.read(cc.ctx)
	cc.mu.Lock()
	cc.start = r
	cc.mu.Unlock()
}

// Attach reads the caches at the end of the run and sets b.Caches: the
// counters' differences since the last mark, the memory held now.
func (cc *CacheCounters) Attach(ctx context.Context, b *results.Bench) {
	if cc == nil || b == nil {
		return
	}
	end := cc.read(ctx)
	cc.mu.Lock()
	start := cc.start
	cc.mu.Unlock()
	b.Caches = cacheUses(cc.lab.Caches, start, end)
}

// read reads every cache of the lab, one connection each.
func (cc *CacheCounters) read(ctx context.Context) []reading {
	out := make([]reading, len(cc.lab.Caches))
	for i, cs := range cc.lab.Caches {
		conn, err := cc.lab.DialCache(ctx, cs)
		if err != nil {
			out[i].err = err
			continue
		}
		out[i].c, out[i].err = cachestat.Read(ctx, cs.Kind, conn)
		conn.Close()
	}
	return out
}

// cacheUses are the results of servers' readings at the measured part's
// start and end.
func cacheUses(servers []lab.CacheServer, start, end []reading) []results.CacheUse {
	var out []results.CacheUse
	for i, cs := range servers {
		u := results.CacheUse{Kind: cs.Kind, Addrs: cs.Addrs, MaxBytes: cs.MaxMemoryB}
		var err error
		switch {
		case i >= len(start) || i >= len(end):
			err = errors.New("not read")
		case start[i].err != nil:
			err = start[i].err
		default:
			err = end[i].err
		}
		if err == nil {
			d, ok := cachestat.Delta(start[i].c, end[i].c)
			if !ok {
				err = errors.New("its counters went back during the run (the cache restarted)")
			} else {
				u.Hits, u.Misses, u.Evictions, u.UsedBytes = d.Hits, d.Misses, d.Evictions, d.UsedBytes
				u.HitRatio = d.HitRatio()
				if d.MaxBytes > 0 {
					u.MaxBytes = d.MaxBytes
				}
			}
		}
		if err != nil {
			u.Error = err.Error()
		}
		out = append(out, u)
	}
	return out
}
