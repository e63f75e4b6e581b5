package observe

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/model/results"
)

// processCPU is this process's CPU time so far.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

// burn keeps one core busy for d of wall time.
func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := 0
	for time.Now().Before(end) {
		for i := range 10000 {
			x += i % 7
		}
	}
	_ = x
}

// TestMeasureExcludesWarmup runs a fake load that burns CPU in this process
// (the generator group) in one phase and sleeps in the other, and checks
// that the derived CPU per request only counts the measured phase.
func TestMeasureExcludesWarmup(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 3 s")
	}
	const phase = 700 * time.Millisecond
	const requests = 100
	cfg := Config{} // no stack: only the generator and the rest
	for _, burnWarmup := range []bool{true, false} {
		var measuredCPU, warmupCPU time.Duration
		b, err := MeasureHere(context.Background(), cfg, 100*time.Millisecond, func(ctx context.Context) (*results.Bench, error) {
			if burnWarmup {
				w0 := processCPU(t)
				burn(phase)
				c0 := processCPU(t)
				warmupCPU = c0 - w0
				time.Sleep(phase)
				measuredCPU = processCPU(t) - c0
			} else {
				time.Sleep(phase)
				c0 := processCPU(t)
				burn(phase)
				measuredCPU = processCPU(t) - c0
			}
			return &results.Bench{WarmupS: phase.Seconds(), DurationS: phase.Seconds(), Requests: requests}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		o := b.Observation
		if o == nil || len(o.Samples) < 10 {
			t.Fatalf("burn in warm-up %v: observation %+v", burnWarmup, o)
		}
		got := o.Derived.CPUSecondsPerRequest[GroupGenerator]
		want := measuredCPU.Seconds() / requests
		t.Logf("burn in warm-up %v: generator %.2f ms CPU per request, the process used %.2f ms per request in the measured phase; %d samples",
			burnWarmup, got*1000, want*1000, len(o.Samples))
		if burnWarmup {
			// At most one sample (100 ms of 700) straddling the
			// boundary leaks in.
			if burnt := warmupCPU.Seconds() / requests; got > 0.3*burnt {
				t.Errorf("warm-up CPU counted: %.2f ms per request, the warm-up burnt %.2f", got*1000, burnt*1000)
			}
		} else if got < 0.6*want || got > 1.4*want {
			t.Errorf("measured CPU per request %.2f ms, the process used %.2f ms", got*1000, want*1000)
		}
		if _, ok := o.Derived.CPUSecondsPerRequest["stack"]; !ok {
			t.Errorf("no stack CPU per request: %+v", o.Derived.CPUSecondsPerRequest)
		}
	}
}

func TestMeasureRunErrors(t *testing.T) {
	cfg := Config{}
	boom := errors.New("boom")
	if b, err := MeasureHere(context.Background(), cfg, 100*time.Millisecond, func(context.Context) (*results.Bench, error) {
		return nil, boom
	}); b != nil || !errors.Is(err, boom) {
		t.Fatalf("no result: got %v, %v", b, err)
	}
	if b, err := MeasureHere(context.Background(), cfg, 100*time.Millisecond, func(context.Context) (*results.Bench, error) {
		return nil, nil
	}); b != nil || err == nil {
		t.Fatalf("nil, nil: got %v, %v", b, err)
	}
	b, err := MeasureHere(context.Background(), cfg, 100*time.Millisecond, func(context.Context) (*results.Bench, error) {
		time.Sleep(250 * time.Millisecond)
		return &results.Bench{Requests: 5, DurationS: 0.25}, context.Canceled
	})
	if !errors.Is(err, context.Canceled) || b == nil || b.Observation == nil || len(b.Observation.Samples) == 0 {
		t.Fatalf("partial result: got %+v, %v", b, err)
	}
	if _, err := MeasureHere(context.Background(), cfg, time.Millisecond, nil); err == nil {
		t.Fatal("a 1 ms interval was accepted")
	}
}
