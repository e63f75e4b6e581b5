package observe

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

// fpmPool is a php-fpm started for one test.
type fpmPool struct {
	dir, sock string
	pid       int
}

// startFPM starts a real php-fpm with a static pool of 4 workers recycled
// every maxRequests requests, a 50 ms sleeping script and a CPU-burning
// one. As root the workers run as www-data, so the directories are made
// traversable.
func startFPM(t testing.TB, maxRequests int) *fpmPool {
	t.Helper()
	if testing.Short() {
		t.Skip("starts php-fpm; skipped with -short")
	}
	fpm, err := phpfpm.Find()
	if err != nil {
		t.Skipf("php-fpm is not installed: %v", err)
	}
	fpmBin := fpm.Path
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	userLines := ""
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("www-data"); err != nil {
			t.Skip("running as root needs the www-data user for the workers")
		}
		userLines = "user = www-data\ngroup = www-data\n"
	}
	p := &fpmPool{dir: dir, sock: filepath.Join(dir, "fpm.sock")}
	conf := fmt.Sprintf(`[global]
pid = %[1]s/fpm.pid
error_log = %[1]s/fpm.log
daemonize = no
[www]
%[2]slisten = %[3]s
listen.mode = 0666
listen.backlog = 511
pm = static
pm.max_children = 4
pm.max_requests = %[4]d
pm.status_path = /status
`, dir, userLines, p.sock, maxRequests)
	files := map[string]string{
		"fpm.conf": conf,
		"slow.php": "<?php usleep(50000); echo 'slow';",
		// About 10-20 ms of CPU on this machine.
		"cpu.php": "<?php $s = 0; for ($i = 0; $i < 300000; $i++) { $s += $i % 7; } echo $s;",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(fpmBin, "-F", "-y", filepath.Join(dir, "fpm.conf"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := os.Create(filepath.Join(dir, "fpm.out"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.pid = cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-p.pid, syscall.SIGKILL)
			<-done
		}
	})
	for i := 0; ; i++ {
		c, err := net.Dial("unix", p.sock)
		if err == nil {
			c.Close()
			break
		}
		if i > 100 {
			log, _ := os.ReadFile(filepath.Join(dir, "fpm.out"))
			t.Fatalf("php-fpm did not listen on %s: %v\n%s", p.sock, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// load runs conns clients, each sending script requests back to back until
// d has passed; it returns the number of successful responses.
func (p *fpmPool) load(t *testing.T, script string, conns int, d time.Duration) int64 {
	t.Helper()
	end := time.Now().Add(d)
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	var mu sync.Mutex
	var ok, failed int64
	var firstErr error
	var wg sync.WaitGroup
	params := fcgi.Params("GET", "/"+script, filepath.Join(p.dir, script), nil, nil)
	for range conns {
		wg.Go(func() {
			// Compare clocks rather than ctx.Err(): a context reports
			// its deadline a moment after it has passed, and requests
			// sent in between fail at once.
			for n := 0; n < 100000 && time.Now().Before(end); n++ {
				rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
				resp, err := fcgi.Get(rctx, "unix", p.sock, params, nil)
				rcancel()
				mu.Lock()
				switch {
				case err == nil && resp.Status == 200:
					ok++
				case time.Now().Before(end):
					failed++
					if firstErr == nil || err == nil {
						if err == nil {
							err = fmt.Errorf("status %d: %.200q %.200q", resp.Status, resp.Body, resp.Stderr)
						}
						firstErr = err
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed > 0 {
		t.Errorf("%d of %d requests to %s failed, first: %v", failed, ok+failed, script, firstErr)
	}
	return ok
}

func (p *fpmPool) observer(t testing.TB, interval time.Duration) *Observer {
	t.Helper()
	o, err := New(Config{
		Interval: interval,
		Roots:    []Root{{ComponentFPM, p.pid}, {ComponentGenerator, os.Getpid()}},
		Others:   true,
		FPM:      []FPMSource{{Pool: "www", Fetch: FPMFetcher("unix", p.sock, "/status", peercred.Any), MaxChildren: 4}},
		Sockets:  []Socket{{Owner: ComponentFPM, Addr: "unix:" + p.sock}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestRealFPM loads a real php-fpm past its pool size and checks what the
// observer saw against what must be true.
func TestRealFPM(t *testing.T) {
	p := startFPM(t, 25)
	o := p.observer(t, 500*time.Millisecond)
	if err := o.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Phase 1: 8 clients on 4 workers, 50 ms sleeps: the pool is full
	// and connections wait in the kernel's accept queue.
	sat := p.load(t, "slow.php", 8, 3*time.Second)
	tSat := o.Elapsed()
	// Phase 2: 2 clients burning CPU on 2 cores, workers recycled every
	// 25 requests: CPU must add up although processes come and go.
	cpuReqs := p.load(t, "cpu.php", 2, 4*time.Second)
	obs := o.Stop()
	Derive(obs, Window{FromS: tSat + 0.5, Requests: cpuReqs})
	t.Logf("saturation phase: %d requests; cpu phase: %d requests; %d samples", sat, cpuReqs, len(obs.Samples))

	var maxActive, maxQueued, backlog int64
	var sawPSS bool
	for i, s := range obs.Samples {
		for _, e := range s.Errors {
			t.Errorf("sample %d: %s", i, e)
		}
		var workers *results.GroupSample
		for j := range s.Groups {
			if s.Groups[j].Name == GroupFPMWorkers {
				workers = &s.Groups[j]
			}
		}
		if workers == nil || workers.Processes == 0 {
			t.Errorf("sample %d: no php-fpm workers group or no workers: %+v", i, s.Groups)
			continue
		}
		for _, w := range workers.PerProcess {
			if w.PSSB <= 0 || w.RSSB <= 0 {
				continue
			}
			sawPSS = true
			// Opcache's shared memory and the binary are shared
			// with the other workers: PSS splits them, RSS does not.
			if w.PSSB >= w.RSSB {
				t.Errorf("sample %d worker %d: PSS %d >= RSS %d", i, w.PID, w.PSSB, w.RSSB)
			}
		}
		for _, f := range s.FPM {
			if f.Error == "" {
				maxActive = max(maxActive, f.ActiveProcesses, f.MaxActiveProcesses)
			}
		}
		if s.TS <= tSat {
			for _, q := range s.Queues {
				maxQueued = max(maxQueued, q.Queued)
				backlog = q.Backlog
			}
		}
	}
	if !sawPSS {
		t.Error("no worker memory was sampled")
	}
	if maxActive != 4 {
		t.Errorf("php-fpm's active processes peaked at %d, want max_children 4", maxActive)
	}
	if maxQueued <= 0 {
		t.Errorf("kernel accept queue of %s never above 0 with 8 clients on 4 workers", p.sock)
	}
	t.Logf("peak active %d, peak kernel queue %d (backlog %d)", maxActive, maxQueued, backlog)
	last := obs.Samples[len(obs.Samples)-1]
	for _, g := range last.Groups {
		for _, w := range g.PerProcess {
			t.Logf("worker %d: RSS %.1f MiB, PSS %.1f MiB, USS %.1f MiB", w.PID, mib(w.RSSB), mib(w.PSSB), mib(w.USSB))
			break
		}
	}

	// Per-group CPU (the stack, this test process and every other
	// process) against the machine's user+system time, over the CPU phase.
	var groups, machine, fpm, other float64
	for _, s := range obs.Samples {
		if s.TS-s.DTS/2 < tSat+0.5 {
			continue
		}
		for _, g := range s.Groups {
			c := (g.UserPct + g.SystemPct) / 100 * s.DTS
			groups += c
			if g.Name == GroupFPMWorkers || g.Name == GroupFPMMaster {
				fpm += c
			}
			if g.Name == GroupOther {
				other += c
			}
		}
		machine += (s.Machine.UserPct + s.Machine.SystemPct) / 100 * float64(s.Machine.Cores) * s.DTS
	}
	t.Logf("CPU phase: groups %.2f CPU-s, machine user+system %.2f CPU-s, php-fpm %.2f CPU-s; derived %+v", groups, machine, fpm, obs.Derived)
	if machine <= 0.5 {
		t.Fatalf("machine busy only %.2f CPU-s in the CPU phase", machine)
	}
	if r := groups / machine; r < 0.9 || r > 1.1 {
		t.Errorf("groups add up to %.0f%% of the machine's CPU, want within 10%%", r*100)
	}
	// Against what this test's processes used: on a shared machine other
	// work ("other") may take most of the CPU.
	if own := groups - other; fpm < 0.5*own {
		t.Errorf("php-fpm %.2f CPU-s of the %.2f this test's processes used: the load did not reach the workers' group", fpm, own)
	}
	if c := obs.Derived.CPUSecondsPerRequest[GroupFPMWorkers]; c <= 0 || c > 1 {
		t.Errorf("CPU seconds per request of the workers: %v", c)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
