package advise

import (
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

const mb = int64(1) << 20

func workers(n int, pss int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = pss
	}
	return out
}

func TestAdvise(t *testing.T) {
	day := 48 * time.Hour
	tests := []struct {
		name  string
		host  Host
		pools []Pool
		want  []int64  // recommended max_children per pool
		finds []string // parts of findings
	}{
		{"a pool too large for memory is lowered",
			Host{MemTotal: 2048 * mb, MemAvailable: 300 * mb},
			[]Pool{{Name: "www", MaxChildren: 50, PM: "dynamic", WorkerPSS: workers(10, 40*mb), StatusPath: "/status", Uptime: day,
				Status: &results.FPMStatus{MaxActiveProcesses: 50, MaxChildrenReached: 3}}},
			[]int64{11}, []string{"pm.max_children 50 -> 11", "exceed the pool's share"}},
		{"a saturated pool with room is raised, at most doubled",
			Host{MemTotal: 8192 * mb, MemAvailable: 6000 * mb},
			[]Pool{{Name: "www", MaxChildren: 5, WorkerPSS: workers(5, 30*mb), StatusPath: "/status", Uptime: day,
				Status: &results.FPMStatus{MaxActiveProcesses: 5, MaxChildrenReached: 12, MaxListenQueue: 7}}},
			[]int64{10}, []string{"reached pm.max_children 12 times", "up to 7 connections waited"}},
		{"a quiet pool that fits is kept",
			Host{MemTotal: 8192 * mb, MemAvailable: 6000 * mb},
			[]Pool{{Name: "www", MaxChildren: 5, WorkerPSS: workers(2, 30*mb), StatusPath: "/status", Uptime: day,
				Status: &results.FPMStatus{MaxActiveProcesses: 2}}},
			[]int64{5}, []string{"fits its share"}},
		{"pools share one budget in proportion to their peaks",
			Host{MemTotal: 4096 * mb, MemAvailable: 600 * mb},
			[]Pool{
				{Name: "busy", MaxChildren: 40, WorkerPSS: workers(20, 50*mb), StatusPath: "/status", Uptime: day, Status: &results.FPMStatus{MaxActiveProcesses: 30}},
				{Name: "quiet", MaxChildren: 40, WorkerPSS: workers(2, 50*mb), StatusPath: "/status", Uptime: day, Status: &results.FPMStatus{MaxActiveProcesses: 2}},
			},
			// budget = 600 + 1100 - 409.6 = 1290.4 MiB; shares 30:2 → 1209.75 and 80.6 MiB
			[]int64{24, 1}, nil},
		{"no status page: sized on its configuration, and said so",
			Host{MemTotal: 2048 * mb, MemAvailable: 1000 * mb},
			[]Pool{{Name: "www", File: "/etc/php/8.2/fpm/pool.d/www.conf", MaxChildren: 5, WorkerPSS: workers(2, 20*mb)}},
			[]int64{5}, []string{"pm.status_path is off", "set pm.status_path = /status in /etc/php/8.2/fpm/pool.d/www.conf"}},
		{"a short window is not trusted",
			Host{MemTotal: 2048 * mb, MemAvailable: 1000 * mb, SwapTotal: 1024 * mb, SwapFree: 1000 * mb},
			[]Pool{{Name: "www", MaxChildren: 5, WorkerPSS: workers(2, 20*mb), StatusPath: "/status", Uptime: 3 * time.Minute, Status: &results.FPMStatus{MaxActiveProcesses: 1}}},
			[]int64{5}, []string{"observed for 3m0s since its master started: too short", "24.0 MiB of swap in use"}},
		{"the cgroup limit caps the budget",
			Host{MemTotal: 16384 * mb, MemAvailable: 12000 * mb, CgroupLimit: 1024 * mb},
			[]Pool{{Name: "www", MaxChildren: 100, WorkerPSS: workers(10, 40*mb), StatusPath: "/status", Uptime: day, Status: &results.FPMStatus{MaxActiveProcesses: 100}}},
			[]int64{5}, []string{"capped by the cgroup limit 1024.0 MiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Advise(tt.host, tt.pools)
			for i, p := range a.Pools {
				if p.Recommended != tt.want[i] {
					t.Errorf("pool %s: recommended %d, want %d (%s)", p.Pool, p.Recommended, tt.want[i], p.Why)
				}
			}
			var all []string
			for _, f := range a.Findings {
				all = append(all, f.Message)
			}
			for _, p := range a.Pools {
				all = append(all, p.Why)
			}
			text := strings.Join(all, "\n")
			for _, w := range tt.finds {
				if !strings.Contains(text, w) {
					t.Errorf("findings lack %q:\n%s", w, text)
				}
			}
			if a.Changes() != (len(tt.want) > 0 && anyChange(a)) {
				t.Error("Changes disagrees with the pools")
			}
		})
	}
}

func anyChange(a Advice) bool {
	for _, p := range a.Pools {
		if p.Recommended != p.MaxChildren {
			return true
		}
	}
	return false
}

func TestMerge(t *testing.T) {
	s1 := []Pool{{Master: "/a.conf", Name: "www", MaxChildren: 5, WorkerPSS: []int64{10, 20}, StatusPath: "/status", StatusError: "busy", Uptime: time.Minute}}
	s2 := []Pool{
		{Master: "/a.conf", Name: "www", MaxChildren: 5, WorkerPSS: []int64{30}, StatusPath: "/status", Status: &results.FPMStatus{MaxActiveProcesses: 4}, Uptime: 2 * time.Minute},
		{Master: "/b.conf", Name: "shop", MaxChildren: 3, WorkerPSS: []int64{7}},
	}
	m := Merge([][]Pool{s1, s2})
	if len(m) != 2 || m[0].Name != "www" || m[1].Name != "shop" {
		t.Fatalf("%+v", m)
	}
	if got := m[0].WorkerPSS; len(got) != 3 || m[0].Status == nil || m[0].StatusError != "" || m[0].Uptime != 2*time.Minute {
		t.Errorf("www merged: %+v", m[0])
	}
	if len(s1[0].WorkerPSS) != 2 {
		t.Error("Merge changed its input")
	}
	h := MergeHosts([]Host{{MemAvailable: 500, SwapFree: 10}, {MemAvailable: 300, SwapFree: 20, CgroupLimit: 900}, {MemAvailable: 400, CgroupLimit: 700}})
	if h.MemAvailable != 300 || h.SwapFree != 0 || h.CgroupLimit != 700 {
		t.Errorf("hosts merged: %+v", h)
	}
}
