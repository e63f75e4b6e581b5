package labstack

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/watch/observe"
	"github.com/phptune/phptune/internal/watch/proc"
)

// TestPoolsBehindUpstream runs a lab whose php-fpm has two pools behind
// nginx's upstream, with kept FastCGI connections: the load is served
// without errors by both pools, and the observer reads each pool's status
// on its own socket and each socket's accept queue. Then Apply goes back
// to one pool.
func TestPoolsBehindUpstream(t *testing.T) {
	labtest.Home(t)
	ctx := context.Background()
	l, err := lab.Up(ctx, lab.Options{Name: "pools", App: "strings", Set: []string{
		"pm=static", "pm.max_children=6", "fpm.pools=2", "nginx.worker_processes=2", "nginx.fastcgi_keepalive=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.FPMPools) != 2 || l.FPMPools[0] != l.FPMListen {
		t.Fatalf("pools %q, first %q", l.FPMPools, l.FPMListen)
	}
	cfg, closeDB, err := Observer(l)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	cfg.Interval = 500 * time.Millisecond
	b, err := observe.MeasureConfig(ctx, cfg, labLoad(t, l, 8, 4*time.Second, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if b.Errors > 0 || b.Requests == 0 {
		t.Fatalf("load: %d requests, %d errors %v", b.Requests, b.Errors, b.ErrorsByClass)
	}
	first, last := map[string]int64{}, map[string]int64{}
	total := map[string]int64{}
	sockets := map[string]bool{}
	for _, s := range b.Observation.Samples {
		for _, f := range s.FPM {
			if f.Error != "" {
				t.Logf("fpm status: %s", f.Error)
				continue
			}
			if _, ok := first[f.Pool]; !ok {
				first[f.Pool] = f.AcceptedConn
			}
			last[f.Pool] = f.AcceptedConn
			total[f.Pool] = max(total[f.Pool], f.TotalProcesses)
		}
		for _, q := range s.Queues {
			if q.Owner == observe.ComponentFPM {
				sockets[q.Socket] = true
			}
		}
	}
	t.Logf("%d requests at %.0f req/s; accepted per pool %v -> %v; workers %v; fpm sockets %v", b.Requests, b.ThroughputRPS, first, last, total, sockets)
	for _, pool := range []string{"www", "www2"} {
		if last[pool]-first[pool] < 10 {
			t.Errorf("pool %s accepted %d connections during the load; the upstream should balance over both", pool, last[pool]-first[pool])
		}
		if total[pool] != 3 {
			t.Errorf("pool %s ran %d workers, want its share 3 of 6", pool, total[pool])
		}
	}
	if len(sockets) != 2 {
		t.Errorf("the observer sampled %d fpm sockets' queues, want 2", len(sockets))
	}

	if err := l.Apply(ctx, cfgOf(t, "pm=static", "pm.max_children=4")); err != nil {
		t.Fatal(err)
	}
	if len(l.FPMPools) != 0 || !strings.HasSuffix(l.FPMListen, "php-fpm.sock") {
		t.Errorf("after going back to one pool: pools %q, listen %q", l.FPMPools, l.FPMListen)
	}
	b, err = labLoad(t, l, 4, time.Second, 0)(ctx)
	if err != nil || b.Errors > 0 || b.Requests == 0 {
		t.Fatalf("one pool again: %v, %d requests, %d errors", err, b.Requests, b.Errors)
	}
	if err := l.Apply(ctx, cfgOf(t, "pm=static", "pm.max_children=6", "fpm.pools=3")); err != nil {
		t.Fatal(err)
	}
	// Every process of the lab and each pool's workers (the master's
	// children) are gone after lab down.
	var pids []int
	for _, p := range l.Processes {
		pids = append(pids, p.PID)
		if p.Component == "php-fpm" {
			pids = append(pids, childrenOf(t, p.PID)...)
		}
	}
	if len(pids) < 2+6 {
		t.Fatalf("found %d processes (%v); want nginx, php-fpm and its 6 workers", len(pids), pids)
	}
	if err := lab.Down("pools"); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("left behind after lab down: %d %q", pid, cmdline)
		}
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(t *testing.T, pid int) []int {
	fs, err := proc.NewFS("/proc", "/sys")
	if err != nil {
		t.Fatal(err)
	}
	pids, err := fs.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, p := range pids {
		if st, err := fs.ReadStat(p); err == nil && st.PPID == pid {
			out = append(out, p)
		}
	}
	return out
}

func cfgOf(t *testing.T, set ...string) knob.Config {
	t.Helper()
	c, err := knob.Defaults().Apply(set)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
