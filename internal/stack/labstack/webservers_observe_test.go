package labstack

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/servers/caddy"
	"github.com/phptune/phptune/internal/servers/h2o"
	"github.com/phptune/phptune/internal/servers/lighttpd"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/watch/observe"
)

// TestOtherServersUnderLoad observes a "strings" lab behind lighttpd (two
// workers), Caddy and h2o for two seconds of load: the web server's
// processes are groups of their own, apart from php-fpm's workers (which
// hold the per-worker PSS and imbalance), no nginx group appears, the
// accept queue of the server's port is the server's, and lighttpd's and
// h2o's status pages are read in the samples.
func TestOtherServersUnderLoad(t *testing.T) {
	labtest.Home(t)
	for _, find := range []func() (string, error){lighttpd.Find, caddy.Find, h2o.Find} {
		if _, err := find(); err != nil {
			t.Skipf("skipping: %v", err)
		}
	}
	for _, c := range []struct {
		server string
		set    []string
		// groups are the web server's groups and how many processes
		// each holds.
		groups map[string]int
	}{
		{"lighttpd-fpm", []string{"lighttpd.max_worker=2"}, map[string]int{observe.GroupLighttpd: 1, observe.GroupLighttpdWorkers: 2}},
		{"caddy-fpm", nil, map[string]int{observe.GroupCaddy: 1}},
		{"h2o-fpm", []string{"h2o.num_threads=2"}, map[string]int{observe.GroupH2O: 2}}, // h2o and its backtrace helper
	} {
		t.Run(c.server, func(t *testing.T) {
			ctx := context.Background()
			set := append([]string{"server=" + c.server, "pm=static", "pm.max_children=2"}, c.set...)
			l, err := lab.Up(ctx, lab.Options{Name: "obs-" + strings.TrimSuffix(c.server, "-fpm"), App: "strings", Set: set})
			if err != nil {
				t.Fatal(err)
			}
			defer lab.Down(l.Name)
			cfg, closeDB, err := Observer(l)
			if err != nil {
				t.Fatal(err)
			}
			defer closeDB()
			cfg.Roots = append(cfg.Roots, observe.Root{Component: observe.ComponentGenerator, PID: os.Getpid()})
			cfg.Interval = 500 * time.Millisecond
			b, err := observe.MeasureConfig(ctx, cfg, labLoad(t, l, 4, 2*time.Second, 500*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			if b.Errors > 0 || b.Requests == 0 {
				t.Fatalf("load: %d requests, %d errors %v", b.Requests, b.Errors, b.ErrorsByClass)
			}
			d := b.Observation.Derived
			t.Logf("%s: %d requests at %.0f req/s; CPU s/request %v; worker PSS p50 %d KiB; imbalance %.2f; warnings %q", c.server, b.Requests, b.ThroughputRPS, d.CPUSecondsPerRequest, d.WorkerPSSP50B>>10, d.WorkerImbalance, d.Warnings)
			cpu := d.CPUSecondsPerRequest
			// PHP's CPU (the strings app) is milliseconds a request; the
			// web server's is a tenth of that, and a few dozen requests
			// on a busy machine may stay under /proc's 10 ms tick: its
			// groups must be there, with their processes.
			if cpu[observe.GroupFPMWorkers] <= 0 {
				t.Errorf("no CPU for %q: %v", observe.GroupFPMWorkers, cpu)
			}
			for g, n := range c.groups {
				if _, ok := cpu[g]; !ok {
					t.Errorf("no %q group: %v", g, cpu)
				}
				seen := 0
				for _, smp := range b.Observation.Samples {
					for _, gs := range smp.Groups {
						if gs.Name == g {
							seen = max(seen, gs.Processes)
						}
					}
				}
				if seen != n {
					t.Errorf("group %q held %d processes, want %d", g, seen, n)
				}
			}
			for _, g := range []string{observe.GroupNginxWorkers, observe.GroupNginxMaster, observe.GroupApacheParent} {
				if _, ok := cpu[g]; ok {
					t.Errorf("a %q group in a %s lab: %v", g, c.server, cpu)
				}
			}
			if d.WorkerPSSP50B <= 0 || d.WorkerImbalance <= 0 {
				t.Errorf("PHP workers' PSS %d, imbalance %.2f: want both measured", d.WorkerPSSP50B, d.WorkerImbalance)
			}
			web := strings.TrimSuffix(c.server, "-fpm")
			var lightReads, h2oReads int
			for _, smp := range b.Observation.Samples {
				for _, q := range smp.Queues {
					if strings.HasPrefix(q.Socket, "127.0.0.1:") && q.Owner != web {
						t.Errorf("the lab's port is filed under %q, want %q", q.Owner, web)
					}
				}
				if s := smp.Lighttpd; s != nil {
					lightReads++
					if s.FastCGIRequests == 0 {
						t.Errorf("lighttpd's statistics show no FastCGI request under load: %+v", s)
					}
				}
				if s := smp.H2O; s != nil {
					h2oReads++
					if s.MaxConnections != 1024 || s.WorkerThreads != 2 {
						t.Errorf("h2o's status: %+v, want 1024 max connections and 2 threads", s)
					}
				}
			}
			if (c.server == "lighttpd-fpm") != (lightReads > 0) || (c.server == "h2o-fpm") != (h2oReads > 0) {
				t.Errorf("status pages read: lighttpd in %d samples, h2o in %d", lightReads, h2oReads)
			}
		})
	}
}

// TestFPMRefusedBehindOtherServers reproduces seed 003's failures behind
// lighttpd and h2o: one php-fpm worker with a listen backlog of 1 under 32
// connections, so php-fpm refuses or drops most connections. The load sees
// the failed requests, and the observer says why from the server's own
// status page (h2o's own 502s; lighttpd's FastCGI requests outnumbering
// its client requests, since it sends a dropped one again and counts no
// error).
func TestFPMRefusedBehindOtherServers(t *testing.T) {
	labtest.Home(t)
	for _, find := range []func() (string, error){lighttpd.Find, h2o.Find} {
		if _, err := find(); err != nil {
			t.Skipf("skipping: %v", err)
		}
	}
	for _, c := range []struct{ server, want string }{
		{"lighttpd-fpm", "lighttpd sent"},
		{"h2o-fpm", "with 502 or 503 itself"},
	} {
		t.Run(c.server, func(t *testing.T) {
			ctx := context.Background()
			set := []string{"server=" + c.server, "pm=static", "pm.max_children=1", "listen.backlog=1"}
			l, err := lab.Up(ctx, lab.Options{Name: "refuse-" + strings.TrimSuffix(c.server, "-fpm"), App: "strings", Set: set})
			if err != nil {
				t.Fatal(err)
			}
			defer lab.Down(l.Name)
			cfg, closeDB, err := Observer(l)
			if err != nil {
				t.Fatal(err)
			}
			defer closeDB()
			cfg.Interval = 500 * time.Millisecond
			b, err := observe.MeasureConfig(ctx, cfg, labLoad(t, l, 32, 2*time.Second, 0))
			if err != nil {
				t.Fatal(err)
			}
			d := b.Observation.Derived
			t.Logf("%s: %d requests, %d errors %v; warnings %q", c.server, b.Requests, b.Errors, b.ErrorsByClass, d.Warnings)
			if b.Errors == 0 {
				t.Skipf("php-fpm refused no connect (a fast machine): nothing to observe")
			}
			if b.Requests < 500 {
				// lighttpd's figure compares totals it refreshes once a
				// second: too few requests say nothing.
				t.Skipf("only %d requests in 2 s (a busy machine): too few to judge", b.Requests)
			}
			found := false
			for _, w := range d.Warnings {
				found = found || strings.Contains(w, c.want)
			}
			if !found {
				t.Errorf("%d requests failed, but no warning says %q: %q", b.Errors, c.want, d.Warnings)
			}
		})
	}
}
