package advise

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MariaDB is a live MariaDB server as read (package livehost reads it):
// its counters since it started (SHOW GLOBAL STATUS), its variables (SHOW
// GLOBAL VARIABLES), the size of its InnoDB tables and its memory.
type MariaDB struct {
	PID     int
	Socket  string
	Version string
	// Status holds the counters read, by name (Uptime, Max_used_connections...).
	Status map[string]int64
	// Vars holds the variables read, by name (max_connections...).
	Vars map[string]string
	// DataIndexB is the data and indexes of its InnoDB tables (a sum from
	// information_schema); DataError says why it was not read.
	DataIndexB int64
	DataError  string
	// ResidentB is the server process's memory (PSS).
	ResidentB int64
	// Error says why the server could not be read at all.
	Error string
}

// MariaDBAdvice is the database's part of the advice.
type MariaDBAdvice struct {
	PID     int    `json:"pid,omitempty"`
	Socket  string `json:"socket,omitempty"`
	Version string `json:"version,omitempty"`
	// Error says why the server was not read.
	Error              string  `json:"error,omitempty"`
	UptimeS            int64   `json:"uptime_seconds"`
	MaxConnections     int64   `json:"max_connections"`
	MaxUsedConnections int64   `json:"max_used_connections"`
	PoolsMaxChildren   int64   `json:"pools_max_children"`
	BufferPoolB        int64   `json:"innodb_buffer_pool_size_bytes"`
	DataIndexB         int64   `json:"innodb_data_index_bytes"`
	HitRate            float64 `json:"buffer_pool_hit_rate"` // -1: no page requests
	ResidentB          int64   `json:"resident_bytes"`
	// RecommendedBufferPoolB is the raised pool (0: kept).
	RecommendedBufferPoolB int64 `json:"recommended_innodb_buffer_pool_size_bytes,omitempty"`
	// Knobs are the recommended changes as knob assignments
	// (mariadb.max_connections=200), what phptune apply takes.
	Knobs []string `json:"knobs,omitempty"`
}

// Changed reports whether a MariaDB setting should change.
func (m MariaDBAdvice) Changed() bool { return len(m.Knobs) > 0 }

// Thresholds of the database's findings.
const (
	// ConnectionMargin is kept above the pools' workers in max_connections
	// for cron, backups, an administrator and monitoring.
	ConnectionMargin = 10
	// NearConnections is the share of max_connections that counts as
	// near it.
	NearConnections = 0.9
	// BufferPoolHeadroom is the recommended pool as a multiple of the
	// InnoDB data and indexes.
	BufferPoolHeadroom = 1.25
	// BufferPoolUnit is what the recommended pool is rounded to.
	BufferPoolUnit = 128 << 20
	// MinBufferPoolHitRate is the buffer pool's hit rate below which a
	// pool smaller than the data is raised.
	MinBufferPoolHitRate = 0.99
	// TmpDiskShare is the share of temporary tables on disk that is
	// worth a warning (MySQLTuner's 25%).
	TmpDiskShare = 0.25
	// maxBufferPool is the knob's upper bound.
	maxBufferPool = 64 << 30
)

// AdviseHost is Advise with the host's MariaDB (nil: none found): the
// database and the pools share the one memory budget. The budget is the
// memory available plus what the workers and the database hold now, less
// the reserve; the database's share is what it holds besides its buffer
// pool plus the pool it is recommended (a pool not yet filled counts at
// its full size: it fills as data is read), and the pools are sized in
// the rest, so neither is counted twice. A buffer pool smaller than the
// InnoDB data, with a hit rate below 99%, is raised to 1.25 times the
// data (in 128 MiB steps) when the memory left after the pools at their
// peak allows it; max_connections is raised when it is near its peak use
// or below the pools' total pm.max_children plus a margin (each PHP worker
// may hold a connection).
func AdviseHost(h Host, pools []Pool, db *MariaDB) Advice {
	if db == nil {
		return Advise(h, pools)
	}
	if db.Error != "" {
		a := Advise(h, pools)
		a.MariaDB = &MariaDBAdvice{PID: db.PID, Socket: db.Socket, Error: db.Error}
		a.Findings = append([]Finding{{Severity: "warning", Message: "MariaDB: " + db.Error}}, a.Findings...)
		return a
	}
	m := &MariaDBAdvice{PID: db.PID, Socket: db.Socket, Version: db.Version, ResidentB: db.ResidentB, DataIndexB: db.DataIndexB, HitRate: -1,
		UptimeS: db.Status["Uptime"], MaxConnections: varInt(db, "max_connections"), MaxUsedConnections: db.Status["Max_used_connections"],
		BufferPoolB: varInt(db, "innodb_buffer_pool_size")}
	if req := db.Status["Innodb_buffer_pool_read_requests"]; req > 0 {
		m.HitRate = 1 - float64(min(db.Status["Innodb_buffer_pool_reads"], req))/float64(req)
	}
	var out []Finding
	say := func(sev, format string, args ...any) {
		out = append(out, Finding{Severity: sev, Message: "MariaDB: " + fmt.Sprintf(format, args...)})
	}

	// The whole budget, and the database's share of it.
	var held, poolsNeed int64
	for _, p := range pools {
		for _, b := range p.WorkerPSS {
			held += b
		}
		poolsNeed += peakWorkers(p) * p95(p.WorkerPSS)
	}
	whole := max(0, h.MemAvailable+held+db.ResidentB-Reserve(h))
	overhead := max(0, db.ResidentB-m.BufferPoolB)
	recommendBufferPool(m, db, whole, poolsNeed, overhead, say)
	pool := m.BufferPoolB
	if m.RecommendedBufferPoolB > 0 {
		pool = m.RecommendedBufferPoolB
	}
	share := overhead + pool
	h.DatabaseGrowthB = max(0, share-db.ResidentB)
	a := Advise(h, pools)
	a.MariaDB = m

	if up := time.Duration(m.UptimeS) * time.Second; up < MinWindow {
		say("warning", "up for %s since it started: too short to trust its counters (max used connections %d, buffer pool hit rate %s); run advise again after a day of traffic",
			up, m.MaxUsedConnections, rate(m.HitRate))
	}
	for _, p := range a.Pools {
		m.PoolsMaxChildren += p.Recommended
	}
	recommendConnections(m, db, say)
	otherFindings(db, say)
	say("info", "holds %s (PSS); its share of the memory budget is %s (%s besides the buffer pool + the pool %s), the pools get the rest",
		mib(db.ResidentB), mib(share), mib(overhead), mib(pool))
	a.Findings = append(out, a.Findings...)
	sortFindings(a.Findings)
	return a
}

// recommendBufferPool raises a buffer pool smaller than the data that
// misses, within the memory left after the pools at their peak and the
// database's other memory.
func recommendBufferPool(m *MariaDBAdvice, db *MariaDB, whole, poolsNeed, overhead int64, say func(string, string, ...any)) {
	if db.DataError != "" {
		say("warning", "the size of its InnoDB tables could not be read (%s): the buffer pool is not sized", db.DataError)
		return
	}
	state := fmt.Sprintf("buffer pool %s, InnoDB data + indexes %s, hit rate %s", mib(m.BufferPoolB), mib(m.DataIndexB), rate(m.HitRate))
	if m.DataIndexB <= m.BufferPoolB || m.HitRate < 0 || m.HitRate >= MinBufferPoolHitRate {
		say("info", "%s: kept", state)
		return
	}
	target := roundUp(int64(BufferPoolHeadroom*float64(m.DataIndexB)), BufferPoolUnit)
	room := (whole - poolsNeed - overhead) / BufferPoolUnit * BufferPoolUnit
	fit := min(target, room, maxBufferPool)
	// MariaDB 10.11.12 and later cannot grow the pool past
	// innodb_buffer_pool_size_max without a restart.
	limit := varInt(db, "innodb_buffer_pool_size_max")
	if limit > 0 && fit > limit {
		fit = limit / BufferPoolUnit * BufferPoolUnit
		if fit > m.BufferPoolB {
			say("info", "the buffer pool is held to innodb_buffer_pool_size_max %s, the most SET GLOBAL can give it; more needs that raised and a restart", mib(limit))
		}
	}
	if fit <= m.BufferPoolB {
		say("warning", "%s: the data does not fit and %.2f%% of page requests go to disk, but the memory budget %s leaves %s for the pool after the pools at their peak (%s) and the server's other memory (%s): kept; add memory or move the database",
			state, 100*(1-m.HitRate), mib(whole), mib(max(0, room)), mib(poolsNeed), mib(overhead))
		return
	}
	note := fmt.Sprintf("%g times the data, in %s steps", BufferPoolHeadroom, mib(BufferPoolUnit))
	if fit < target {
		note = fmt.Sprintf("%s would be %g times the data; the memory budget %s allows %s after the pools at their peak (%s)", mib(target), BufferPoolHeadroom, mib(whole), mib(fit), mib(poolsNeed))
	}
	m.RecommendedBufferPoolB = fit
	m.Knobs = append(m.Knobs, fmt.Sprintf("mariadb.innodb_buffer_pool_size=%dM", fit>>20))
	say("warning", "innodb_buffer_pool_size %s -> %s: %s: the data does not fit and %.2f%% of page requests go to disk (%s)",
		mib(m.BufferPoolB), mib(fit), state, 100*(1-m.HitRate), note)
}

// recommendConnections raises max_connections near its peak use or below
// the pools' workers.
func recommendConnections(m *MariaDBAdvice, db *MariaDB, say func(string, string, ...any)) {
	if m.MaxConnections <= 0 {
		say("warning", "max_connections could not be read")
		return
	}
	refused := db.Status["Connection_errors_max_connections"]
	want := m.PoolsMaxChildren + ConnectionMargin
	var why []string
	if m.PoolsMaxChildren > 0 && m.MaxConnections < want {
		why = append(why, fmt.Sprintf("the pools' pm.max_children add up to %d and each PHP worker may hold a connection (+%d for cron, backups and an administrator)", m.PoolsMaxChildren, ConnectionMargin))
	}
	near := float64(m.MaxUsedConnections) >= NearConnections*float64(m.MaxConnections)
	if near || refused > 0 {
		want = max(want, int64(math.Ceil(1.25*float64(max(m.MaxUsedConnections, m.MaxConnections)))))
		why = append(why, fmt.Sprintf("%d connections were open at once since it started, of max_connections %d, and %d were refused for lack of one", m.MaxUsedConnections, m.MaxConnections, refused))
	}
	want = min(want, 100000)
	if len(why) == 0 || want <= m.MaxConnections {
		say("info", "connections: at most %d open at once of max_connections %d (the pools' pm.max_children add up to %d); %d connected, %d running now",
			m.MaxUsedConnections, m.MaxConnections, m.PoolsMaxChildren, db.Status["Threads_connected"], db.Status["Threads_running"])
		return
	}
	m.Knobs = append(m.Knobs, fmt.Sprintf("mariadb.max_connections=%d", want))
	say("warning", "max_connections %d -> %d: %s", m.MaxConnections, want, strings.Join(why, "; "))
}

// otherFindings are what advise reports without a knob to change.
func otherFindings(db *MariaDB, say func(string, string, ...any)) {
	st := db.Status
	if n := st["Aborted_connects"]; n > 0 {
		say("info", "%d connection attempts failed since it started (Aborted_connects: wrong passwords, timeouts, clients without privileges)", n)
	}
	if tmp, disk := st["Created_tmp_tables"], st["Created_tmp_disk_tables"]; tmp > 0 && float64(disk) > TmpDiskShare*float64(tmp) {
		say("warning", "%d of %d temporary tables (%.0f%%) went to disk: raise tmp_table_size and max_heap_table_size together by hand (phptune has no knob for them), or find the queries (TEXT and BLOB columns always go to disk)",
			disk, tmp, 100*float64(disk)/float64(tmp))
	}
	if n := st["Slow_queries"]; n > 0 {
		logNote := ""
		if !on(db.Vars["slow_query_log"]) {
			logNote = "; the slow query log is off: set slow_query_log = 1 to see which"
		}
		say("info", "%d slow queries (longer than long_query_time %ss) of %d since it started%s", n, db.Vars["long_query_time"], st["Questions"], logNote)
	}
	if t := db.Vars["query_cache_type"]; t != "" && !strings.EqualFold(t, "OFF") && t != "0" && varIntOf(db.Vars["query_cache_size"]) > 0 {
		hits, sel := st["Qcache_hits"], st["Com_select"]
		hr := "no SELECT yet"
		if hits+sel > 0 {
			hr = fmt.Sprintf("hit rate %.1f%%", 100*float64(hits)/float64(hits+sel))
		}
		say("info", "the query cache is on (%s, %s): %s, %d queries pruned for lack of memory; every write to a table empties its entries and the cache takes one lock: measure with it off (query_cache_type = 0) before keeping it",
			t, mib(varIntOf(db.Vars["query_cache_size"])), hr, st["Qcache_lowmem_prunes"])
	}
	if v := db.Vars["innodb_flush_log_at_trx_commit"]; v != "" && v != "1" {
		say("info", "innodb_flush_log_at_trx_commit = %s: a crash of the host can lose about the last second of commits (1 is durable)", v)
	}
}

// sortFindings puts warnings first, keeping the order within each.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity == "warning" && fs[j].Severity != "warning" })
}

func varInt(db *MariaDB, name string) int64 { return varIntOf(db.Vars[name]) }

func varIntOf(v string) int64 {
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

func on(v string) bool { return v == "1" || strings.EqualFold(v, "ON") }

func rate(r float64) string {
	if r < 0 {
		return "unknown (no page requests)"
	}
	return fmt.Sprintf("%.2f%%", 100*r)
}

// roundUp rounds n up to a multiple of unit.
func roundUp(n, unit int64) int64 { return (n + unit - 1) / unit * unit }

func databaseNote(h Host) string {
	if h.DatabaseGrowthB <= 0 {
		return ""
	}
	return fmt.Sprintf(" - the database's growth %s", mib(h.DatabaseGrowthB))
}
