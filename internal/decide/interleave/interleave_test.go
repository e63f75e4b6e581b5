package interleave

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		r     int
		which []int
		want  []int
	}{
		{0, []int{0, 1}, []int{0, 1}},
		{1, []int{0, 1}, []int{1, 0}},
		{2, []int{0, 1}, []int{0, 1}},
		{1, []int{0, 1, 2}, []int{1, 2, 0}},
		{2, []int{0, 1, 2}, []int{2, 0, 1}},
		{1, []int{0, 2}, []int{2, 0}},
		{3, []int{5}, []int{5}},
	} {
		if got := Order(tc.r, tc.which); !slices.Equal(got, tc.want) {
			t.Errorf("Order(%d, %v) = %v, want %v", tc.r, tc.which, got, tc.want)
		}
	}
}

func pool(t *testing.T, pm string, n int) knob.Config {
	t.Helper()
	c, err := search.Pool(knob.Defaults(), pm, n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSessionOnSim measures the distro default against a large static pool
// on a simulated io stack (20 ms waits): the pool wins by far, every round
// measures both in rotated order, each in a fresh start.
func TestSessionOnSim(t *testing.T) {
	st := sim.New(sim.IOWait(), 7)
	var order []string
	s := New([]Config{{"default", knob.Defaults()}, {"static50", pool(t, "static", 50)}, {"static4", pool(t, "static", 4)}},
		StackRunner{Stack: st, Conns: 50, Duration: 5 * time.Second, Warmup: time.Second})
	s.OnRun = func(r Run, o Outcome) { order = append(order, fmt.Sprintf("%d:%s", r.Round, r.Label)) }
	if err := s.Run(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	want := []string{"0:default", "0:static50", "0:static4", "1:static50", "1:static4", "1:default",
		"2:static4", "2:default", "2:static50", "3:default", "3:static50", "3:static4"}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if st.Applies != 12 || st.Measures != 12 {
		t.Errorf("%d applies, %d measures: every run needs fresh processes", st.Applies, st.Measures)
	}
	ci, err := s.Ratio(0, 1, Throughput, 0.95, P99)
	if err != nil {
		t.Fatal(err)
	}
	if ci.N != 4 || ci.Low < 5 || ci.Ratio > 12 {
		t.Errorf("static50/default %v", ci)
	}
	p99, err := s.Ratio(0, 1, P99, 0.95)
	if err != nil || p99.Ratio > 0.5 {
		t.Errorf("p99 static50/default %v %v", p99, err)
	}
	if got := len(s.Values(2, Throughput)); got != 4 {
		t.Errorf("%d values", got)
	}
}

// TestFailures: a configuration that fails to start is dropped after its
// first failure with DropFailed (compare) and retried without it (holdout);
// ratios pair only rounds where both ran.
func TestFailures(t *testing.T) {
	for _, drop := range []bool{true, false} {
		w := sim.IOWait()
		w.FailAbove = 40
		st := sim.New(w, 1)
		s := New([]Config{{"default", knob.Defaults()}, {"big", pool(t, "static", 60)}}, StackRunner{Stack: st, Conns: 10, Duration: time.Second})
		s.DropFailed = drop
		if err := s.Run(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		if s.Failed(1) == "" || s.Failed(0) != "" {
			t.Errorf("drop=%v: failures %q %q", drop, s.Failed(0), s.Failed(1))
		}
		wantApplies := 6
		if drop {
			wantApplies = 4
		}
		if st.Applies != wantApplies {
			t.Errorf("drop=%v: %d applies, want %d", drop, st.Applies, wantApplies)
		}
		if _, err := s.Ratio(0, 1, Throughput, 0.95); !errors.Is(err, ErrNoPairs) {
			t.Errorf("drop=%v: ratio without pairs: %v", drop, err)
		}
	}
}

// flaky fails the measurement of one configuration in chosen rounds.
type flaky struct {
	runs int
	fail map[int]bool // run numbers (from 0) that fail
	rps  map[string]float64
}

func (f *flaky) Run(ctx context.Context, r Run) (Outcome, error) {
	n := f.runs
	f.runs++
	if f.fail[n] {
		return Outcome{Failed: "boom"}, nil
	}
	x := f.rps[r.Label] * (1 + 0.01*float64(r.Round%3))
	return Outcome{Bench: &results.Bench{ThroughputRPS: x, Latency: results.Latency{P99Ms: 1000 / x}}}, nil
}

func TestPairedSkipsIncompleteRounds(t *testing.T) {
	f := &flaky{fail: map[int]bool{2: true}, rps: map[string]float64{"a": 100, "b": 150}}
	s := New([]Config{{Label: "a"}, {Label: "b"}}, f)
	if err := s.Run(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	a, b := s.Paired(0, 1, Throughput)
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("pairs %v %v: round 2's b failed", a, b)
	}
	if s.Outcome(1, 1).OK() || !s.Outcome(0, 1).OK() {
		t.Error("round 1: b (first in the rotated order) failed, a ran")
	}
}

func TestStopOnFatal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	s := New([]Config{{Label: "a"}, {Label: "b"}}, RunnerFunc(func(ctx context.Context, r Run) (Outcome, error) {
		n++
		if n == 3 {
			cancel()
			return Outcome{}, ctx.Err()
		}
		return Outcome{Bench: &results.Bench{ThroughputRPS: 1}}, nil
	}))
	if err := s.Run(ctx, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if n != 3 {
		t.Errorf("%d runs after the interruption", n)
	}
}

// noisy gives b/a = ratio with multiplicative noise that alternates, so
// the interval is wide for few rounds.
type noisy struct {
	ratio, spread float64
	calls         int
}

func (n *noisy) Run(ctx context.Context, r Run) (Outcome, error) {
	n.calls++
	x := 100.0
	if r.Index == 1 {
		x *= n.ratio
		if r.Round%2 == 0 {
			x *= 1 + n.spread
		} else {
			x /= 1 + n.spread
		}
	}
	return Outcome{Bench: &results.Bench{ThroughputRPS: x}}, nil
}

func TestExtend(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ratio      float64
		spread     float64
		max        int
		budget     int // rounds More allows beyond the planned ones
		wantRounds int
		want       stats.Verdict
	}{
		{"clear at the first look", 2, 0.01, 8, 10, 4, stats.BBetter},
		{"equal within the margin", 1, 0.001, 8, 10, 4, stats.NoDifference},
		{"straddles: more rounds until the cap", 1.04, 0.08, 8, 10, 8, stats.NoDifference},
		{"straddles: the budget stops it", 1.04, 0.08, 8, 1, 5, stats.NeedMore},
		{"no extension planned", 1.04, 0.08, 4, 10, 4, stats.NoDifference},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &noisy{ratio: tc.ratio, spread: tc.spread}
			s := New([]Config{{Label: "a"}, {Label: "b"}, {Label: "c"}}, r)
			if err := s.Run(context.Background(), 4); err != nil {
				t.Fatal(err)
			}
			left := tc.budget
			d, err := s.Extend(context.Background(), 0, 1, Sequential{
				Compare: stats.CompareOptions{Confidence: 0.95, MinRounds: 4, MaxRounds: tc.max, Equivalence: 0.03},
				More:    func() bool { left--; return left >= 0 },
				Which:   []int{0, 1},
			})
			if err != nil {
				t.Fatal(err)
			}
			if s.Rounds() != tc.wantRounds || d.Verdict != tc.want {
				t.Errorf("%d rounds, %v %v; want %d rounds, %v", s.Rounds(), d.Verdict, d.CI, tc.wantRounds, tc.want)
			}
			if got := r.calls; got != 12+2*(tc.wantRounds-4) {
				t.Errorf("%d runs: added rounds measure only a and b", got)
			}
			if tc.max > 4 && d.CI.Confidence <= 0.95 {
				t.Errorf("confidence %v: repeated looks need a stricter per-look level", d.CI.Confidence)
			}
		})
	}
}
