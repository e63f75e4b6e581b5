package livehost

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/live/liveapply"
)

// probeEvery is the time between two requests of a ReloadProbe.
const probeEvery = 50 * time.Millisecond

// ReloadProbe sends requests to a pool while its master reloads (its
// status page over FastCGI, or a connection without one), one every
// probeEvery, and counts those that fail: a reload that kills a worker
// busy with a request, or leaves the socket unserved, shows here. A
// request may wait as long as the master's grace: during a graceful
// reload new requests wait in the listen queue.
type ReloadProbe struct {
	mu   sync.Mutex
	runs []ProbeRun
	// judged: Step's health check ran once; the reloads of an undo after
	// it are counted, not judged again.
	judged bool
}

// ProbeRun is what one reload's probe saw.
type ProbeRun struct {
	Requests, Failed int
	First            error // the first failure
}

func (r ProbeRun) String() string {
	if r.Failed == 0 {
		return fmt.Sprintf("0 of %d probe requests failed", r.Requests)
	}
	return fmt.Sprintf("%d of %d probe requests failed (the first: %v)", r.Failed, r.Requests, r.First)
}

// Runs are the reloads probed so far, in order.
func (p *ReloadProbe) Runs() []ProbeRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProbeRun{}, p.runs...)
}

// start probes f until the returned func is called, which waits for the
// requests under way and records the run.
func (p *ReloadProbe) start(ctx context.Context, f FPM) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var run ProbeRun
	var wg sync.WaitGroup
	done := make(chan struct{})
	// A request may wait out the master's grace in the listen queue.
	timeout := f.timeout() + ReloadGrace
	go func() {
		defer close(done)
		tick := time.NewTicker(probeEvery)
		defer tick.Stop()
		for {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rctx, rcancel := context.WithTimeout(context.Background(), timeout)
				defer rcancel()
				err := f.probeOnce(rctx)
				mu.Lock()
				defer mu.Unlock()
				run.Requests++
				if err != nil {
					run.Failed++
					if run.First == nil {
						run.First = err
					}
				}
			}()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		wg.Wait()
		p.mu.Lock()
		p.runs = append(p.runs, run)
		p.mu.Unlock()
	}
}

// Step is the probe as a transaction step named "reload-probe", to go
// after php-fpm's: its health check fails when a request failed during
// the reload of the change. It judges once, and never in an undo: the
// reloads of an undo are counted, not judged, and a change undone because
// another server failed before this check ran is not blamed on its probe.
func (p *ReloadProbe) Step() liveapply.Step {
	return liveapply.Step{Name: "reload-probe", Healthy: func(ctx context.Context) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.judged || len(p.runs) == 0 || liveapply.Undoing(ctx) {
			return nil
		}
		p.judged = true
		if r := p.runs[0]; r.Failed > 0 {
			return fmt.Errorf("requests failed while php-fpm reloaded: %s", r)
		}
		return nil
	}}
}
