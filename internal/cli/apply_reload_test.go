package cli

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// steadyProbe sends about rate requests a second through nginx to php-fpm
// until stop is closed, every fourth to a page that sleeps 200 ms (a
// request in flight when php-fpm reloads), and counts those that fail.
type steadyProbe struct {
	mu       sync.Mutex
	sent     int
	failures []string
	wg       sync.WaitGroup
}

func (p *steadyProbe) run(n *hosttest.NginxHost, rate int, stop <-chan struct{}) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			p.wg.Wait()
			return
		case <-tick.C:
		}
		path := "/index.php"
		if i%4 == 0 {
			path = "/slow.php"
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			resp, err := client.Get(n.URL(path))
			msg := ""
			if err != nil {
				msg = err.Error()
			} else {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !strings.HasSuffix(string(b), "ok\n") {
					msg = fmt.Sprintf("%s: %d %.60q", path, resp.StatusCode, b)
				}
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			p.sent++
			if msg != "" {
				p.failures = append(p.failures, time.Now().Format("15:04:05.000")+" "+msg)
			}
		}()
	}
}

// TestApplyRollbackUnderLoadDropsNoRequest applies a pool change and rolls
// it back 20 times while a steady probe (50 requests a second, a quarter
// of them taking 200 ms) goes through nginx to Debian's php-fpm, copied
// and started: no request may fail. Debian's php-fpm.conf leaves
// process_control_timeout at 0, with which a reload kills the workers
// busy with a request (nginx answers 502); the first apply on such a
// master sets it in a transaction of its own, kept when the
// recommendation is rolled back, so every later reload lets the requests
// in flight finish.
func TestApplyRollbackUnderLoadDropsNoRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and nginx and reloads them 40 times")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	defer func(f func() bool) { stdinIsTerminal = f }(stdinIsTerminal)
	stdinIsTerminal = func() bool { return false }
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	if err := os.WriteFile(filepath.Join(n.DocRoot, "slow.php"), []byte("<?php usleep(200000); echo \"slow ok\\n\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	knobs := filepath.Join(t.TempDir(), "recommended.knobs")
	if err := os.WriteFile(knobs, []byte("pm.max_children=8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host := []string{"--root", h.Root}
	cycle := func(i int) {
		t.Helper()
		if out, errs, code := runCLI(t, append([]string{"apply", "--knobs", knobs, "--yes", "--settle", "0s"}, host...)...); code != 0 {
			t.Fatalf("apply %d: exit %d\n%s%s", i, code, out, errs)
		}
		if out, errs, code := runCLI(t, append([]string{"rollback", "--yes"}, host...)...); code != 0 {
			t.Fatalf("rollback %d: exit %d\n%s%s", i, code, out, errs)
		}
	}
	// The first apply on this master makes its reloads graceful: an
	// administrator's first apply, before the load starts.
	cycle(0)

	stop := make(chan struct{})
	p := &steadyProbe{}
	done := make(chan struct{})
	go func() { p.run(n, 50, stop); close(done) }()
	time.Sleep(500 * time.Millisecond)
	for i := 1; i <= 20; i++ {
		cycle(i)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	<-done
	if p.sent < 500 {
		t.Errorf("the probe sent only %d requests", p.sent)
	}
	if len(p.failures) > 0 {
		t.Errorf("%d of %d requests failed during 20 apply/rollback cycles; the first: %s", len(p.failures), p.sent, strings.Join(p.failures[:min(5, len(p.failures))], "; "))
	}
	t.Logf("%d requests, %d failed", p.sent, len(p.failures))
}

// rollbackGrace checks that the first apply on the copy's master made its
// reloads graceful in a transaction the recommendation's rollback left,
// and rolls that one back too.
func rollbackGrace(t *testing.T, h *hosttest.Host, host []string) {
	t.Helper()
	grace := filepath.Join(h.PoolDir, livehost.GraceDropInName)
	if b, err := os.ReadFile(grace); err != nil || !strings.Contains(string(b), "[global]\nprocess_control_timeout = 10s\n") {
		t.Errorf("the recommendation's rollback did not leave %s: %q %v", grace, b, err)
	}
	out, errs, code := runCLI(t, append([]string{"rollback", "--yes"}, host...)...)
	if code != 0 || !strings.Contains(out, "Rolled back transaction") {
		t.Fatalf("second rollback: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(grace); err == nil {
		t.Errorf("the second rollback left %s", grace)
	}
}

// TestApplyWatchesOnlyThePoolsServer: apply to a php-fpm copy that the
// running nginx (another copy's, named with --nginx-config) does not pass
// to reads no log of that nginx for the error rate: it says so and reads
// the pool's status page.
func TestApplyWatchesOnlyThePoolsServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and nginx")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	served := hosttest.Debian(t)
	n := served.Nginx(t)
	alone := hosttest.Debian(t)
	knobs := filepath.Join(t.TempDir(), "recommended.knobs")
	os.WriteFile(knobs, []byte("pm.max_children=6\n"), 0o644)
	out, errs, code := runCLI(t, "apply", "--knobs", knobs, "--yes", "--settle", "1s", "--root", alone.Root, "--nginx-config", n.Conf)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "no running nginx passes to pool www (unix:"+alone.Socket+")") || !strings.Contains(errs, "pool www's status page") {
		t.Errorf("apply did not say no nginx passes to the pool:\n%s", errs)
	}
	if strings.Contains(errs, n.Access) {
		t.Errorf("apply read the logs of an nginx that does not serve the pool:\n%s", errs)
	}
	if out, errs, code := runCLI(t, "rollback", "--yes", "--root", alone.Root, "--nginx-config", n.Conf); code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, errs)
	}
}
