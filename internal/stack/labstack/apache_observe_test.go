package labstack

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/watch/observe"
)

// TestApacheUnderLoad observes a "strings" lab behind each Apache server
// for two seconds of load: Apache's parent and children are groups of their
// own, with mod_php's children counted as the PHP workers (per-worker PSS
// and imbalance) and, with php-fpm, Apache's children as web server only.
func TestApacheUnderLoad(t *testing.T) {
	labtest.Home(t)
	if _, err := apache.Find(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := apache.FindModPHP(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	for _, c := range []struct {
		server  string
		set     []string
		web     string // the web server's children
		workers string // the PHP workers
		conns   int
		// full: more connections than children, so mod_status shows every
		// slot busy and the kernel queues the rest: the pool-at-size fact.
		full bool
	}{
		// Prefork with KeepAlive on: each generator connection keeps its
		// child, so with as many connections as children the status
		// request waits for one to close (MaxKeepAliveRequests) and most
		// samples miss the page. KeepAlive off frees a child after every
		// request, and the page is read in its turn in the queue.
		{"apache-event-fpm", []string{"pm=static", "pm.max_children=2"}, observe.GroupApacheWorkers, observe.GroupFPMWorkers, 4, false},
		{"apache-prefork-modphp", []string{"apache.keepalive=off", "apache.max_request_workers=4", "apache.prefork.start_servers=2", "apache.prefork.min_spare_servers=1", "apache.prefork.max_spare_servers=2"}, "", observe.GroupApacheModPHPWorkers, 4, false},
		{"apache-prefork-modphp", []string{"apache.keepalive=off", "apache.max_request_workers=2", "apache.prefork.start_servers=2", "apache.prefork.min_spare_servers=2", "apache.prefork.max_spare_servers=3"}, "", observe.GroupApacheModPHPWorkers, 8, true},
	} {
		t.Run(c.server, func(t *testing.T) {
			ctx := context.Background()
			l, err := lab.Up(ctx, lab.Options{Name: "obs-" + c.server[:13], App: "strings", Set: append([]string{"server=" + c.server}, c.set...)})
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
			b, err := observe.MeasureConfig(ctx, cfg, labLoad(t, l, c.conns, 2*time.Second, 500*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			if b.Errors > 0 || b.Requests == 0 {
				t.Fatalf("load: %d requests, %d errors %v", b.Requests, b.Errors, b.ErrorsByClass)
			}
			d := b.Observation.Derived
			t.Logf("%s: %d requests at %.0f req/s; CPU s/request %v; worker PSS p50 %d KiB; imbalance %.2f", c.server, b.Requests, b.ThroughputRPS, d.CPUSecondsPerRequest, d.WorkerPSSP50B>>10, d.WorkerImbalance)
			cpu := d.CPUSecondsPerRequest
			if cpu[c.workers] <= 0 {
				t.Errorf("no CPU for the PHP workers (%s): %v", c.workers, cpu)
			}
			if c.web != "" && cpu[c.web] <= 0 {
				t.Errorf("no CPU for Apache's children (%s): %v", c.web, cpu)
			}
			if _, ok := cpu[observe.GroupApacheParent]; !ok {
				t.Errorf("no %q group: %v", observe.GroupApacheParent, cpu)
			}
			if _, ok := cpu[observe.GroupNginxWorkers]; ok {
				t.Errorf("an nginx group in an Apache lab: %v", cpu)
			}
			if d.WorkerPSSP50B <= 0 || d.WorkerImbalance <= 0 {
				t.Errorf("PHP workers' PSS %d, imbalance %.2f: want both measured", d.WorkerPSSP50B, d.WorkerImbalance)
			}
			// mod_status is read as the fpm status page is.
			read := 0
			for _, smp := range b.Observation.Samples {
				if a := smp.Apache; a != nil {
					read++
					if a.Slots == 0 || a.MPM == "" {
						t.Errorf("mod_status sample without slots or MPM: %+v", a)
					}
				}
			}
			if read == 0 {
				t.Errorf("no sample read Apache's mod_status (%s)", l.ServerStatusURL)
			}
			t.Logf("mod_status read in %d of %d samples; warnings %q", read, len(b.Observation.Samples), d.Warnings)
			if c.full && !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "the pool is at MaxRequestWorkers") }) {
				t.Errorf("%d connections on 2 children: no pool-at-size warning in %q", c.conns, d.Warnings)
			}
		})
	}
}
