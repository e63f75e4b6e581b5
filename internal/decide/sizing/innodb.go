package sizing

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// KnobBufferPool is InnoDB's page cache.
const KnobBufferPool = "mariadb.innodb_buffer_pool_size"

// MinHitRate is the buffer pool's hit rate below which a full pool is
// raised even though the data seemed to fit by size: the pool also holds
// undo and system pages, and misses are disk reads on every request.
const MinHitRate = 0.99

// bufferPoolUnit is what MariaDB rounds the pool to (its default
// innodb_buffer_pool_chunk_size), so the setting is what the server runs.
const bufferPoolUnit = 128 << 20

// decideBufferPool sizes the InnoDB buffer pool from the tables' data and
// indexes and the pool's hit rate during the runs. Unlike opcache, a larger
// pool becomes resident as data is read, so a raise must fit the memory
// budget beside the rest of the stack's predicted memory.
func decideBufferPool(cfg knob.Config, in Inputs) results.SizeDecision {
	var agg *results.InnoDBStatus
	var trials []int
	// A lab reads InnoDB whenever it runs MariaDB: runtime figures
	// without InnoDB and without a MariaDB error mean there is none.
	why := "the stack reported no InnoDB figures"
	for _, r := range in.Readings {
		if r.Bench == nil || r.Bench.Runtime == nil {
			continue
		}
		st := r.Bench.Runtime.InnoDB
		if st == nil {
			if why == "the stack reported no InnoDB figures" {
				why = "the stack runs no MariaDB"
			}
			for _, e := range r.Bench.Runtime.Errors {
				if strings.HasPrefix(e, "mariadb") {
					why = e
					break
				}
			}
			continue
		}
		if agg == nil {
			c := *st
			c.ReadRequests, c.Reads = 0, 0
			agg = &c
		}
		agg.DataB, agg.IndexB = max(agg.DataB, st.DataB), max(agg.IndexB, st.IndexB)
		agg.PagesData, agg.PagesTotal = max(agg.PagesData, st.PagesData), max(agg.PagesTotal, st.PagesTotal)
		agg.ReadRequests += st.ReadRequests
		agg.Reads += min(st.Reads, st.ReadRequests)
		trials = append(trials, r.Trial)
	}
	if agg == nil {
		return notRead(cfg, KnobBufferPool, why)
	}
	pool := cfg.Bytes(KnobBufferPool)
	need := agg.DataB + agg.IndexB
	sh := share(need, pool)
	fill := share(agg.PagesData, agg.PagesTotal)
	hit := 1.0
	if agg.ReadRequests > 0 {
		hit = 1 - float64(agg.Reads)/float64(agg.ReadRequests)
	}
	d := decision(cfg, KnobBufferPool, trials)
	d.Figures["size_bytes"], d.Figures["data_index_bytes"], d.Figures["used_share"] = b2f(pool), b2f(need), sh
	d.Figures["pages_data"], d.Figures["pages_total"], d.Figures["read_requests"], d.Figures["reads"], d.Figures["hit_rate"] = b2f(agg.PagesData), b2f(agg.PagesTotal), b2f(agg.ReadRequests), b2f(agg.Reads), hit
	hits := "no page requests during the runs"
	if agg.ReadRequests > 0 {
		hits = fmt.Sprintf("hit rate %.2f%% over %d page requests", 100*hit, agg.ReadRequests)
	}
	state := fmt.Sprintf("InnoDB data + indexes %s (%s of the pool); %d of %d pages hold data; %s", mib(need), pct(sh), agg.PagesData, agg.PagesTotal, hits)
	missing := agg.ReadRequests > 0 && hit < MinHitRate && fill >= 0.95
	if sh <= NearFull && !missing {
		d.Action = ActionKept
		d.Reason = fmt.Sprintf("kept %s: %s", d.From, state)
		return d
	}
	target := int64(Headroom * float64(need))
	if missing {
		target = max(target, int64(Headroom*float64(pool)))
	}
	target = roundUp(target, bufferPoolUnit)
	if in.MemoryBudgetB > 0 {
		room := in.MemoryBudgetB - in.PredictedMemB
		if target-pool > room {
			fit := pool + max(room, 0)/bufferPoolUnit*bufferPoolUnit
			if fit <= pool {
				d.Action = ActionKept
				d.Reason = fmt.Sprintf("kept %s: %s; it should be %s, but the memory budget %s leaves %s beside the stack's predicted %s",
					d.From, state, knob.FormatSize(target), mib(in.MemoryBudgetB), mib(max(room, 0)), mib(in.PredictedMemB))
				return d
			}
			set(cfg, &d, fit)
			d.Reason = fmt.Sprintf("%s %s → %s: %s; %.0f× the data would be %s, the memory budget %s allows %s", d.Action, d.From, d.To, state, Headroom, knob.FormatSize(target), mib(in.MemoryBudgetB), d.To)
			return d
		}
	}
	set(cfg, &d, target)
	d.Reason = fmt.Sprintf("%s %s → %s: %s; %.0f× the data (or the pool when it misses), rounded up to MariaDB's 128 MiB chunks", d.Action, d.From, d.To, state, Headroom)
	return d
}
