package capacity_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/phptune/phptune/internal/decide/capacity"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// simRunner runs steps on a simulated stack.
func simRunner(st *sim.Stack) Runner {
	return RunnerFunc(func(ctx context.Context, p Plan) (*results.Bench, error) {
		return st.MeasureRate(ctx, p)
	})
}

// trueCapacity is the noise-free highest rate at which the simulated
// stack's p99 stays within bound for steps of warmup and d.
func trueCapacity(w sim.Workload, cfg knob.Config, bound float64, warmup, d time.Duration) float64 {
	n := cfg.PHPWorkers()
	mu := w.Capacity(cfg)
	svc := w.CPU(cfg, int(n)) + w.WaitMs
	lo, hi := 0.0, 2*mu
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if sim.OpenLatency(mid, mu, svc, warmup, d, 99) < bound {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func mustSLO(t *testing.T, s string) SLO {
	t.Helper()
	slo, err := ParseSLO(s)
	if err != nil {
		t.Fatal(err)
	}
	return slo
}

func mustCfg(t *testing.T, set ...string) knob.Config {
	t.Helper()
	c, err := knob.Defaults().Apply(set)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSearchFindsTheKnee: on noisy simulated stacks (6% run-to-run noise,
// steal dips in 5% of the steps) the search brackets the capacity within
// its tolerance, and the bracket holds the noise-free capacity within the
// noise.
func TestSearchFindsTheKnee(t *testing.T) {
	tests := []struct {
		name  string
		w     sim.Workload
		set   []string
		slo   string
		start float64 // as a fraction of the true capacity
	}{
		{"io, distro pool, p99<1s", sim.IOWait(), nil, "p99<1s", 0.5},
		{"io, static 48, p99<1s", sim.IOWait(), []string{"pm=static", "pm.max_children=48"}, "p99<1s", 0.5},
		{"io, static 48, start far below", sim.IOWait(), []string{"pm=static", "pm.max_children=48"}, "p99<1s", 0.02},
		{"io, static 48, start above", sim.IOWait(), []string{"pm=static", "pm.max_children=48"}, "p99<1s", 3},
		{"cpu, p99<100ms", sim.CPUBound(), nil, "p99<100ms", 0.5},
		{"cpu, p95<50ms,errors<0.1%", sim.CPUBound(), nil, "p95<50ms,errors<0.1%", 0.5},
	}
	for _, tt := range tests {
		for seed := uint64(1); seed <= 8; seed++ {
			st := sim.New(tt.w, seed)
			cfg := mustCfg(t, tt.set...)
			if err := st.Apply(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			slo := mustSLO(t, tt.slo)
			w, d, _ := StepLength(slo, 1000)
			truth := trueCapacity(tt.w, cfg, slo.Latency[len(slo.Latency)-1].MaxMs, w, d)
			if slo.Latency[0].Percentile != 99 {
				// p95 bound: the true capacity under that percentile.
				truth = trueCapacityAt(tt.w, cfg, slo.Latency[0], w, d)
			}
			res, err := Search(context.Background(), simRunner(st), Options{SLO: slo, StartRate: math.Max(1, tt.start*truth), Warmup: w, Duration: d})
			if err != nil {
				t.Fatalf("%s seed %d: %v", tt.name, seed, err)
			}
			if res.Outcome != OutcomeBracketed {
				t.Errorf("%s seed %d: outcome %q (%v)", tt.name, seed, res.Outcome, res.Warnings)
				continue
			}
			if res.FirstFailRPS > res.CapacityRPS*1.1*(1+1e-9) || res.FirstFailRPS <= res.CapacityRPS {
				t.Errorf("%s seed %d: bracket [%g, %g] wider than the 10%% tolerance", tt.name, seed, res.CapacityRPS, res.FirstFailRPS)
			}
			// 6% noise per step, 5% steal dips: within ±20% of the truth.
			if res.CapacityRPS < 0.8*truth || res.CapacityRPS > 1.2*truth {
				t.Errorf("%s seed %d: capacity %g rps, true %g (steps %s)", tt.name, seed, res.CapacityRPS, truth, describe(res))
			}
			if len(res.Steps) > DefaultMaxSteps {
				t.Errorf("%s seed %d: %d steps", tt.name, seed, len(res.Steps))
			}
		}
	}
}

func trueCapacityAt(w sim.Workload, cfg knob.Config, term results.SLOTerm, warmup, d time.Duration) float64 {
	mu := w.Capacity(cfg)
	svc := w.CPU(cfg, int(cfg.PHPWorkers())) + w.WaitMs
	lo, hi := 0.0, 2*mu
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if sim.OpenLatency(mid, mu, svc, warmup, d, term.Percentile) < term.MaxMs {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func describe(res *results.Capacity) string {
	var b strings.Builder
	for _, s := range res.Steps {
		v := "fail"
		if s.Pass {
			v = "pass"
		}
		b.WriteString(" ")
		b.WriteString(s.Phase)
		b.WriteString(":")
		b.WriteString(strconv.FormatFloat(s.RateRPS, 'f', -1, 64))
		b.WriteString(":")
		b.WriteString(v)
	}
	return b.String()
}

// quiet is the io workload without noise, so an injected step is the only
// disturbance.
func quiet() sim.Workload {
	w := sim.IOWait()
	w.Noise, w.StealProb = 0, 0
	return w
}

// TestNotFooledByANoisyStep injects one disturbed step into a quiet
// simulated stack: a step that passes well above the capacity (the
// machine was quiet for it alone), or one that fails well below it (a
// neighbour took the CPU, unseen by the steal figure). With the drift
// check the search still brackets the true capacity; without it, the same
// injection misleads it, which shows the check is what saves it.
func TestNotFooledByANoisyStep(t *testing.T) {
	cfg := mustCfg(t, "pm=static", "pm.max_children=48")
	slo := mustSLO(t, "p99<1s")
	w, d, _ := StepLength(slo, 1000)
	truth := trueCapacity(quiet(), cfg, 1000, w, d)
	tests := []struct {
		name string
		// scale returns the service-rate factor of a step, given
		// whether one was injected already.
		inject func(rate float64) float64
		start  float64
	}{
		{"a lucky pass above capacity", func(rate float64) float64 {
			if rate > 1.05*truth {
				return 2
			}
			return 1
		}, 0.5 * truth},
		{"an unlucky failure below capacity", func(rate float64) float64 {
			if rate < 0.8*truth {
				return 0.3
			}
			return 1
		}, 0.6 * truth},
	}
	for _, tt := range tests {
		for _, confirm := range []bool{true, false} {
			st := sim.New(quiet(), 1)
			if err := st.Apply(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			injected := false
			st.Scale = func(_ int, rate float64) float64 {
				if f := tt.inject(rate); f != 1 && !injected {
					injected = true
					return f
				}
				return 1
			}
			o := Options{SLO: slo, StartRate: tt.start, Warmup: w, Duration: d}
			if !confirm {
				o.ConfirmRounds = -1
			}
			res, err := Search(context.Background(), simRunner(st), o)
			if err != nil {
				t.Fatal(err)
			}
			if !injected {
				t.Fatalf("%s: nothing was injected (steps%s)", tt.name, describe(res))
			}
			t.Logf("%s confirm=%v truth %.0f: %g%s", tt.name, confirm, truth, res.CapacityRPS, describe(res))
			within := res.CapacityRPS >= 0.9*truth && res.CapacityRPS <= 1.02*truth
			if confirm && (!within || !res.Confirmed) {
				t.Errorf("%s: capacity %g rps (confirmed %v), true %g; steps%s", tt.name, res.CapacityRPS, res.Confirmed, truth, describe(res))
			}
			if !confirm && within {
				t.Errorf("%s without the drift check: capacity %g rps is right; the injection does not test the check (steps%s)", tt.name, res.CapacityRPS, describe(res))
			}
		}
	}
}

// TestStealRepeats: a failing step under CPU steal is measured again at
// once, and a tie between its runs is broken by a third.
func TestStealRepeats(t *testing.T) {
	slo := mustSLO(t, "p99<1s")
	calls := 0
	var plans []Plan
	r := RunnerFunc(func(ctx context.Context, p Plan) (*results.Bench, error) {
		calls++
		plans = append(plans, p)
		b := &results.Bench{Requests: 1000, RateAskedRPS: p.Rate, RateAchievedRPS: p.Rate, Latency: results.Latency{P99Ms: 100},
			Observation: &results.Observation{}}
		if calls == 2 { // the second step fails under 40% steal
			b.Latency.P99Ms = 5000
			b.Observation.Derived.MaxStealPct = 40
		}
		if p.Rate >= 400 {
			b.Latency.P99Ms = 3000
		}
		return b, nil
	})
	res, err := Search(context.Background(), r, Options{SLO: slo, StartRate: 100, Warmup: time.Second, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) < 4 || res.Steps[2].Phase != PhaseRepeat || res.Steps[3].Phase != PhaseRepeat || res.Steps[2].RateRPS != res.Steps[1].RateRPS {
		t.Fatalf("no repeat after the failure under steal: steps%s", describe(res))
	}
	if res.CapacityRPS < 337 || res.CapacityRPS >= 400 || !res.Confirmed {
		t.Errorf("capacity %g (confirmed %v), want the bracket below 400; steps%s", res.CapacityRPS, res.Confirmed, describe(res))
	}
	// The stack idles before a step only after a failing one: 2 × the
	// 1 s bound.
	for i, p := range plans {
		want := time.Duration(0)
		if i > 0 && !res.Steps[i-1].Pass {
			want = 2 * time.Second
		}
		if p.Settle != want || p.N != i+1 || p.Drain != 2*time.Second || p.Timeout != 10*time.Second {
			t.Errorf("plan %d: %+v, want settle %s", i+1, p, want)
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "steps ran with more than 10% CPU steal") {
		t.Errorf("warnings %q do not mention the steal", res.Warnings)
	}
}

func TestSearchBoundsAndBudget(t *testing.T) {
	slo := mustSLO(t, "p99<1s")
	w, d, _ := StepLength(slo, 100)
	newStack := func(set ...string) *sim.Stack {
		st := sim.New(quiet(), 1)
		if err := st.Apply(context.Background(), mustCfg(t, set...)); err != nil {
			t.Fatal(err)
		}
		return st
	}
	// Below the minimum: the io page takes 21 ms, a 5 ms bound never holds.
	res, err := Search(context.Background(), simRunner(newStack()), Options{SLO: mustSLO(t, "p99<5ms"), StartRate: 50})
	if err != nil || res.Outcome != OutcomeBelowMin || res.CapacityRPS != 0 || res.Steps[len(res.Steps)-1].RateRPS != 1 {
		t.Errorf("below minimum: %v %+v steps%s", err, res, describe(res))
	}
	// Above the maximum.
	res, err = Search(context.Background(), simRunner(newStack()), Options{SLO: slo, StartRate: 10, MaxRate: 40})
	if err != nil || res.Outcome != OutcomeAboveMax || res.CapacityRPS != 40 {
		t.Errorf("above maximum: %v %+v", err, res)
	}
	// A time budget of three steps: not converged, said so, and the
	// planned time respected.
	// (From 10 rps every step passes: no settling, no drain.)
	one := w + d
	st := newStack("pm=static", "pm.max_children=48")
	res, err = Search(context.Background(), simRunner(st), Options{SLO: slo, StartRate: 10, Warmup: w, Duration: d, TimeBudget: 3*one + time.Second})
	if err != nil || res.Outcome != OutcomeNotConverged || len(res.Steps) != 3 || !strings.Contains(strings.Join(res.Warnings, " "), "time budget") {
		t.Errorf("time budget: %v outcome %q, %d steps, warnings %q", err, res.Outcome, len(res.Steps), res.Warnings)
	}
	// Steps run out in the drift check: bracketed, unconfirmed, said so.
	full, err := Search(context.Background(), simRunner(newStack("pm=static", "pm.max_children=48")), Options{SLO: slo, StartRate: 1000, Warmup: w, Duration: d})
	if err != nil || !full.Confirmed {
		t.Fatalf("full search: %v %+v", err, full)
	}
	firstConfirm := 0
	for _, s := range full.Steps {
		if s.Phase == PhaseConfirm {
			firstConfirm = s.N
			break
		}
	}
	res, err = Search(context.Background(), simRunner(newStack("pm=static", "pm.max_children=48")), Options{SLO: slo, StartRate: 1000, Warmup: w, Duration: d, MaxSteps: firstConfirm})
	if err != nil || res.Outcome != OutcomeBracketed || res.Confirmed || !strings.Contains(strings.Join(res.Warnings, " "), "drift check") {
		t.Errorf("cut in the drift check: %v outcome %q confirmed %v warnings %q", err, res.Outcome, res.Confirmed, res.Warnings)
	}
	res, err = Search(context.Background(), simRunner(newStack()), Options{SLO: slo, StartRate: 10, MaxSteps: 2})
	if err != nil || res.Outcome != OutcomeNotConverged || len(res.Steps) != 2 {
		t.Errorf("max steps: %v %+v", err, res)
	}
	// The runner's own budget (a tune's clock): the same stop, its reason kept.
	st = newStack()
	res, err = Search(context.Background(), RunnerFunc(func(c context.Context, p Plan) (*results.Bench, error) {
		if p.N == 3 {
			return nil, fmt.Errorf("%w: the tune has 10s left", ErrBudget)
		}
		return st.MeasureRate(c, p)
	}), Options{SLO: slo, StartRate: 10})
	if err != nil || res.Outcome != OutcomeNotConverged || len(res.Steps) != 2 || !strings.Contains(strings.Join(res.Warnings, " "), "the tune has 10s left") {
		t.Errorf("runner budget: %v outcome %q, %d steps, warnings %q", err, res.Outcome, len(res.Steps), res.Warnings)
	}
	// Interrupted: the steps so far and the error.
	ctx, cancel := context.WithCancel(context.Background())
	st = newStack()
	r := RunnerFunc(func(c context.Context, p Plan) (*results.Bench, error) {
		if p.N == 3 {
			cancel()
		}
		return st.MeasureRate(c, p)
	})
	res, err = Search(ctx, r, Options{SLO: slo, StartRate: 10})
	if !errors.Is(err, context.Canceled) || res == nil || len(res.Steps) != 2 {
		t.Errorf("interrupted: %v, %+v", err, res)
	}
}

func TestOptionsValidate(t *testing.T) {
	slo := mustSLO(t, "p99<500ms")
	tests := []struct {
		o     Options
		field string
	}{
		{Options{SLO: slo, StartRate: 0.5}, "StartRate"},
		{Options{SLO: slo, StartRate: 10, MinRate: 0.5}, "MinRate"},
		{Options{SLO: slo, StartRate: 10, MaxRate: 0.5}, "MaxRate"},
		{Options{SLO: slo, StartRate: 10, MaxRate: 5}, "StartRate"},
		{Options{SLO: slo, StartRate: 10, MinRate: 20, MaxRate: 100}, "StartRate"},
		{Options{SLO: slo, StartRate: math.NaN()}, "StartRate"},
		{Options{SLO: slo, StartRate: 10, Growth: 1.01}, "Growth"},
		{Options{SLO: slo, StartRate: 10, Tolerance: 0.001}, "Tolerance"},
		{Options{SLO: slo, StartRate: 10, Duration: 500 * time.Millisecond}, "Duration"},
		{Options{SLO: slo, StartRate: 10, TimeBudget: 5 * time.Second}, "TimeBudget"},
		{Options{StartRate: 10}, "SLO"},
		{Options{SLO: slo, StartRate: 10, Errors: ErrorLimit{Rate: 2}}, "Errors"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%+v: %v, want a FieldError on %s", tt.o, err, tt.field)
		}
	}
	ok := Options{SLO: slo, StartRate: 10, TimeBudget: time.Minute}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}

func TestStepLength(t *testing.T) {
	tests := []struct {
		slo      string
		rate     float64
		warm, d  time.Duration
		ruleHint string
	}{
		{"p99<500ms", 2000, 2 * time.Second, 5 * time.Second, "10 × the bound"},
		{"p99<1s", 2000, 2 * time.Second, 10 * time.Second, ""},
		{"p99<1s", 40, 2 * time.Second, 12500 * time.Millisecond, "5 requests beyond p99"},
		{"p99.9<1s", 40, 2 * time.Second, 60 * time.Second, ""},
		{"p99<3s", 1000, 6 * time.Second, 30 * time.Second, ""},
		{"p99<20s", 1000, 10 * time.Second, 60 * time.Second, ""},
		{"errors<1%", 1000, 2 * time.Second, 10 * time.Second, ""},
		{"p50<10ms", 1000, 2 * time.Second, 5 * time.Second, ""},
	}
	for _, tt := range tests {
		w, d, rule := StepLength(mustSLO(t, tt.slo), tt.rate)
		if w != tt.warm || d != tt.d || !strings.Contains(rule, tt.ruleHint) {
			t.Errorf("StepLength(%s, %g) = %s, %s, %q; want %s, %s", tt.slo, tt.rate, w, d, rule, tt.warm, tt.d)
		}
	}
}
