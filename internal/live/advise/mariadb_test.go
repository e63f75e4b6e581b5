package advise

import (
	"strconv"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func server(pool, data, resident, reads, requests, maxConn, maxUsed, uptime int64) *MariaDB {
	return &MariaDB{PID: 7, Socket: "/run/mysqld/mysqld.sock", Version: "10.11.19-MariaDB",
		Status:     map[string]int64{"Uptime": uptime, "Max_used_connections": maxUsed, "Innodb_buffer_pool_reads": reads, "Innodb_buffer_pool_read_requests": requests},
		Vars:       map[string]string{"max_connections": itoa(maxConn), "innodb_buffer_pool_size": itoa(pool), "innodb_flush_log_at_trx_commit": "1"},
		DataIndexB: data, ResidentB: resident}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestAdviseMariaDB(t *testing.T) {
	day := int64(2 * 86400)
	www := []Pool{{Name: "www", MaxChildren: 20, WorkerPSS: workers(10, 40*mb), StatusPath: "/status", Uptime: 48 * 3600e9,
		Status: &results.FPMStatus{MaxActiveProcesses: 20}}}
	tests := []struct {
		name   string
		host   Host
		pools  []Pool
		db     *MariaDB
		knobs  []string
		finds  []string
		budget int64 // the pools' budget, MiB (0: not checked)
	}{
		{"a pool smaller than the data that misses is raised to 1.25 times the data",
			Host{MemTotal: 8192 * mb, MemAvailable: 4000 * mb}, www,
			server(128*mb, 1000*mb, 200*mb, 5000, 100000, 151, 30, day),
			[]string{"mariadb.innodb_buffer_pool_size=1280M"},
			[]string{"innodb_buffer_pool_size 128.0 MiB -> 1280.0 MiB", "hit rate 95.00%", "1.25 times the data"},
			// whole = 4000 + 400 + 200 - 819.2 = 3780.8; the database's share = 72 + 1280 → growth 1152
			2429},
		{"a pool that holds the data is kept",
			Host{MemTotal: 8192 * mb, MemAvailable: 4000 * mb}, www,
			server(1024*mb, 500*mb, 600*mb, 10, 100000, 151, 30, day),
			nil, []string{"buffer pool 1024.0 MiB, InnoDB data + indexes 500.0 MiB, hit rate 99.99%: kept"}, 0},
		{"a pool that misses but cannot grow: the memory is the pools'",
			Host{MemTotal: 2048 * mb, MemAvailable: 300 * mb}, www,
			server(128*mb, 4000*mb, 150*mb, 50000, 100000, 151, 30, day),
			nil, []string{"the data does not fit and 50.00% of page requests go to disk, but the memory budget", "kept; add memory or move the database"}, 0},
		{"the budget bounds the raise",
			Host{MemTotal: 8192 * mb, MemAvailable: 2000 * mb}, www,
			server(128*mb, 4000*mb, 150*mb, 50000, 100000, 151, 30, day),
			// whole = 2000 + 400 + 150 - 819.2 = 1730.8; room = 1730.8 - 800 - 22 = 908.8 → 896M
			[]string{"mariadb.innodb_buffer_pool_size=896M"}, []string{"5120.0 MiB would be 1.25 times the data; the memory budget"}, 0},
		{"innodb_buffer_pool_size_max bounds the raise",
			Host{MemTotal: 8192 * mb, MemAvailable: 4000 * mb}, www,
			func() *MariaDB {
				d := server(128*mb, 1000*mb, 200*mb, 5000, 100000, 151, 30, day)
				d.Vars["innodb_buffer_pool_size_max"] = itoa(600 * mb)
				return d
			}(),
			[]string{"mariadb.innodb_buffer_pool_size=512M"}, []string{"held to innodb_buffer_pool_size_max 600.0 MiB"}, 0},
		{"max_connections near its peak use is raised by a quarter",
			Host{MemTotal: 8192 * mb, MemAvailable: 4000 * mb}, www,
			func() *MariaDB {
				d := server(1024*mb, 100*mb, 300*mb, 0, 1000, 100, 100, day)
				d.Status["Connection_errors_max_connections"] = 42
				return d
			}(),
			[]string{"mariadb.max_connections=125"}, []string{"max_connections 100 -> 125", "100 connections were open at once", "42 were refused"}, 0},
		{"max_connections below the pools' workers is raised to them plus a margin",
			Host{MemTotal: 8192 * mb, MemAvailable: 4000 * mb},
			[]Pool{www[0], {Name: "shop", MaxChildren: 30, WorkerPSS: workers(3, 30*mb), StatusPath: "/status", Uptime: 48 * 3600e9, Status: &results.FPMStatus{MaxActiveProcesses: 3}}},
			// shop is lowered to 9 by memory: the recommended sizes add up to 29
			server(1024*mb, 100*mb, 300*mb, 0, 1000, 25, 12, day),
			[]string{"mariadb.max_connections=39"}, []string{"max_connections 25 -> 39: the pools' pm.max_children add up to 29"}, 0},
		{"a short uptime is not trusted, and the rest is said",
			Host{MemTotal: 8192 * mb, MemAvailable: 4000 * mb}, nil,
			func() *MariaDB {
				d := server(1024*mb, 100*mb, 300*mb, 0, 1000, 151, 3, 600)
				d.Status["Created_tmp_tables"], d.Status["Created_tmp_disk_tables"] = 100, 60
				d.Status["Slow_queries"], d.Status["Questions"], d.Status["Aborted_connects"] = 4, 900, 3
				d.Status["Qcache_hits"], d.Status["Com_select"], d.Status["Qcache_lowmem_prunes"] = 30, 70, 5
				d.Vars["slow_query_log"], d.Vars["long_query_time"] = "OFF", "10.000000"
				d.Vars["query_cache_type"], d.Vars["query_cache_size"] = "ON", "16777216"
				d.Vars["innodb_flush_log_at_trx_commit"] = "2"
				return d
			}(),
			nil, []string{"up for 10m0s since it started: too short to trust its counters", "60 of 100 temporary tables (60%) went to disk",
				"4 slow queries (longer than long_query_time 10.000000s) of 900", "the slow query log is off", "3 connection attempts failed",
				"the query cache is on (ON, 16.0 MiB): hit rate 30.0%, 5 queries pruned", "innodb_flush_log_at_trx_commit = 2"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := AdviseHost(tt.host, tt.pools, tt.db)
			if a.MariaDB == nil {
				t.Fatal("no MariaDB advice")
			}
			if strings.Join(a.MariaDB.Knobs, " ") != strings.Join(tt.knobs, " ") {
				t.Errorf("knobs %v, want %v", a.MariaDB.Knobs, tt.knobs)
			}
			if a.Changes() != (len(tt.knobs) > 0 || anyChange(a)) {
				t.Error("Changes disagrees with the knobs")
			}
			var all []string
			for _, f := range a.Findings {
				all = append(all, f.Message)
			}
			text := strings.Join(all, "\n")
			for _, w := range tt.finds {
				if !strings.Contains(text, w) {
					t.Errorf("findings lack %q:\n%s", w, text)
				}
			}
			if tt.budget > 0 {
				if got := float64(a.BudgetB) / float64(mb); got < float64(tt.budget)-1 || got > float64(tt.budget)+1 {
					t.Errorf("pools' budget %.1f MiB, want %d", got, tt.budget)
				}
			}
		})
	}
}

// TestAdviseHostWithoutDatabase: without a database the pools' advice is
// Advise's, unchanged; a database that could not be read is a warning.
func TestAdviseHostWithoutDatabase(t *testing.T) {
	h := Host{MemTotal: 2048 * mb, MemAvailable: 300 * mb}
	pools := []Pool{{Name: "www", MaxChildren: 50, PM: "dynamic", WorkerPSS: workers(10, 40*mb)}}
	a, b := Advise(h, pools), AdviseHost(h, pools, nil)
	if a.BudgetB != b.BudgetB || a.Pools[0].Recommended != b.Pools[0].Recommended || b.MariaDB != nil {
		t.Errorf("AdviseHost without a database differs: %+v vs %+v", a, b)
	}
	c := AdviseHost(h, pools, &MariaDB{Socket: "/s", Error: "refusing to talk to /s"})
	if c.MariaDB == nil || c.MariaDB.Changed() || c.Findings[0].Message != "MariaDB: refusing to talk to /s" || c.BudgetB != a.BudgetB {
		t.Errorf("unreadable database: %+v", c)
	}
}
