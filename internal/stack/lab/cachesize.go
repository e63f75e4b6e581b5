package lab

import (
	"fmt"
	"slices"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

// A lab's cache is sized as production's: the maxmemory (Redis) or -m
// (Memcached) discovery read from production's configuration
// (site.Cache.MaxMemoryBytes, SizeFrom), with its eviction policy, capped
// at a quarter of the lab's memory limit (--memory-max) so that the cache
// cannot take the memory meant for PHP and MariaDB. Without production's
// value (not read, or Redis with no maxmemory) the lab's default applies
// (cacheMemory) with least-recently-used eviction.

// cacheCap is the most one cache server of a lab with memory budget
// budget may take (0: no cap): a quarter of the budget, at least 8 MiB.
func cacheCap(budget int64) int64 {
	if budget <= 0 {
		return 0
	}
	return max(budget/4, 8<<20)
}

// sizeFrom sizes cs from production's cache c (what discovery read of
// it) within the lab's memory budget, and says so in cs.SizeText.
func (cs *CacheServer) sizeFrom(c site.Cache, budget int64) {
	cs.MaxMemoryB, cs.Policy = cacheMemory(budget), ""
	switch {
	case c.SizeFrom == "":
		note := c.SizeNote
		if note == "" {
			note = "not read"
		}
		cs.SizeText = fmt.Sprintf("at most %d MiB, the lab's default (production's size: %s)", cs.MaxMemoryB>>20, note)
		return
	case c.MaxMemoryBytes <= 0:
		cs.SizeText = fmt.Sprintf("at most %d MiB, the lab's default: production sets no limit (%s)", cs.MaxMemoryB>>20, c.SizeFrom)
		return
	}
	switch {
	case cs.Kind == "memcached" && c.Policy == "noeviction":
		cs.Policy = c.Policy
	case cs.Kind == "redis" && c.Policy == "":
		cs.Policy = "noeviction" // Redis's default, which production runs with
	case cs.Kind == "redis" && slices.Contains(site.RedisPolicies, c.Policy):
		cs.Policy = c.Policy
	}
	want := max(c.MaxMemoryBytes, 1<<20)
	if cs.Kind == "memcached" {
		want = max(want>>20, 1) << 20 // Memcached takes whole MiB
	}
	cs.MaxMemoryB = want
	policy := ""
	if cs.Kind == "redis" {
		policy = ", maxmemory-policy " + cs.Policy + " as production's"
	} else if cs.Policy == "noeviction" {
		policy = ", -M (no evictions) as production's"
	}
	if limit := cacheCap(budget); limit > 0 && want > limit {
		cs.MaxMemoryB = limit
		if cs.Kind == "memcached" {
			cs.MaxMemoryB = limit >> 20 << 20
		}
		cs.Capped = true
		cs.SizeText = fmt.Sprintf("at most %d MiB: production's %s (%s) capped at a quarter of the lab's memory limit (%d MiB)%s",
			cs.MaxMemoryB>>20, mibText(want), c.SizeFrom, budget>>20, policy)
		return
	}
	cs.SizeText = fmt.Sprintf("at most %s, production's (%s)%s", mibText(cs.MaxMemoryB), c.SizeFrom, policy)
}

// mibText is n bytes in MiB, with a fraction when not whole.
func mibText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// sizeServers sizes each planned server from the first of the site's
// caches it serves whose size discovery read (else the first it
// serves).
func (pl *cachePlan) sizeServers(caches []site.Cache) {
	for j := range pl.servers {
		pick := -1
		for i, c := range caches {
			if pl.placed[i] != j {
				continue
			}
			if pick < 0 || caches[pick].SizeFrom == "" && c.SizeFrom != "" {
				pick = i
			}
		}
		if pick >= 0 {
			pl.servers[j].sizeFrom(caches[pick], pl.budget)
		}
	}
}
