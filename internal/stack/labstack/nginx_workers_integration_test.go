package labstack

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/watch/observe"
)

// TestNginxWorkerKnobs runs a lab with nginx's worker knobs: nginx -t
// accepts them, the lab serves, every worker may open the files asked
// for, and with reuseport the observer sums the workers' accept queues on
// the one address.
func TestNginxWorkerKnobs(t *testing.T) {
	labtest.Home(t)
	ctx := context.Background()
	l, err := lab.Up(ctx, lab.Options{Name: "workers", App: "hello", Set: []string{"nginx.worker_processes=2", "nginx.reuseport=on",
		"nginx.multi_accept=on", "nginx.worker_cpu_affinity=auto", "nginx.worker_rlimit_nofile=8192"}})
	if err != nil {
		t.Fatal(err)
	}
	var nginxPID int
	for _, p := range l.Processes {
		if p.Component == "nginx" {
			nginxPID = p.PID
		}
	}
	workers := childrenOf(t, nginxPID)
	if len(workers) != 2 {
		t.Fatalf("nginx runs %d workers, want 2", len(workers))
	}
	for _, w := range workers {
		limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", w))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(limits), "\n") {
			if strings.HasPrefix(line, "Max open files") && !strings.Contains(line, " 8192 ") {
				t.Errorf("nginx worker %d: %q, want a soft limit of 8192 (worker_rlimit_nofile)", w, line)
			}
		}
	}
	cfg, closeDB, err := Observer(l)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	cfg.Interval = 500 * time.Millisecond
	b, err := observe.MeasureConfig(ctx, cfg, labLoad(t, l, 16, 2*time.Second, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if b.Errors > 0 || b.Requests == 0 {
		t.Fatalf("load: %d requests, %d errors %v", b.Requests, b.Errors, b.ErrorsByClass)
	}
	sockets := 0
	for _, s := range b.Observation.Samples {
		for _, e := range s.Errors {
			t.Errorf("sample: %s", e)
		}
		for _, q := range s.Queues {
			if q.Owner == observe.ComponentNginx {
				sockets = max(sockets, q.Sockets)
			}
		}
	}
	if sockets != 2 {
		t.Errorf("the observer saw %d nginx sockets on the lab's address, want 2 (reuseport: one per worker)", sockets)
	}
}
