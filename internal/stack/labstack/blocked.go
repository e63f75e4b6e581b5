package labstack

import (
	"context"
	"sort"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/seal"
)

// BlockedCounter counts what a sealed lab's processes tried to reach
// outside the lab during a run: the seal's counters read at the start
// (NewBlockedCounter) and subtracted at the end (Since). For a lab that is
// not sealed it counts nothing.
type BlockedCounter struct {
	l      *lab.Lab
	before []seal.Attempt
	err    error
}

// NewBlockedCounter reads the seal's counters now.
func NewBlockedCounter(ctx context.Context, l *lab.Lab) *BlockedCounter {
	c := &BlockedCounter{l: l}
	if l.Sealed() {
		c.before, c.err = l.Attempts(ctx)
	}
	return c
}

// Since is what the lab's processes tried to reach since the counter was
// made, by destination, most first; a warning when the counters could not
// be read (the run's attempts are then unknown, not none).
func (c *BlockedCounter) Since(ctx context.Context) ([]results.Blocked, string) {
	if !c.l.Sealed() {
		return nil, ""
	}
	if c.err != nil {
		return nil, "the seal's counters of blocked connections could not be read at the start: " + c.err.Error()
	}
	after, err := c.l.Attempts(ctx)
	if err != nil {
		return nil, "the seal's counters of blocked connections could not be read at the end: " + err.Error()
	}
	return BlockedDelta(c.before, after), ""
}

// BlockedDelta is what after counts beyond before, per destination and
// protocol, leaving out destinations with nothing new; sorted by count,
// most first, then by destination.
func BlockedDelta(before, after []seal.Attempt) []results.Blocked {
	type key struct{ proto, dest string }
	was := map[key]uint64{}
	for _, a := range before {
		was[key{a.Proto, a.Dest.String()}] += a.Count
	}
	var out []results.Blocked
	for _, a := range after {
		k := key{a.Proto, a.Dest.String()}
		if a.Count > was[k] {
			out = append(out, results.Blocked{Proto: k.proto, Dest: k.dest, Count: a.Count - was[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Dest != out[j].Dest {
			return out[i].Dest < out[j].Dest
		}
		return out[i].Proto < out[j].Proto
	})
	return out
}

// CacheWarnings are what a sealed site lab recorded of the cache servers
// its site names (lab.Lab.SiteCaches), for a run's warnings: an address
// that leads nowhere inside the seal (the numbers are without that
// cache), or the lab's own server there, which starts empty (production's
// cache is never copied, so the first requests fill it).
func CacheWarnings(l *lab.Lab) []string {
	if l == nil || !l.Sealed() {
		return nil
	}
	return l.SiteCaches
}
