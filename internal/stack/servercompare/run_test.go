package servercompare

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/interleave"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// fakeWorld tunes and measures without a lab: each server's tuned
// configuration and throughput are given; measuring is instant.
type fakeWorld struct {
	mu       sync.Mutex
	tuned    map[string]knob.Config // absent: the tune fails
	rps      map[string]float64     // by label
	budgets  []time.Duration
	measured []string // labels, in order
	recorded []int
	// cancelAfter cancels the context after this many measurements.
	cancelAfter int
	cancel      context.CancelFunc
	// noStart: labels that fail to start.
	noStart map[string]bool
}

func (w *fakeWorld) env() Env {
	return Env{
		Tune: func(ctx context.Context, start knob.Config, budget time.Duration) (*results.Tune, error) {
			w.budgets = append(w.budgets, budget)
			rec, ok := w.tuned[start.Server()]
			if !ok {
				return nil, errors.New("no trial could start")
			}
			return &results.Tune{ID: "t-" + start.Server(), Recommended: rec, Files: map[string]string{"recommended.knobs": "x"}}, nil
		},
		Runner: interleave.RunnerFunc(func(ctx context.Context, r interleave.Run) (interleave.Outcome, error) {
			if err := ctx.Err(); err != nil {
				return interleave.Outcome{}, err
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.noStart[r.Label] {
				return interleave.Outcome{Failed: "failed to start: it will not"}, nil
			}
			w.measured = append(w.measured, r.Label)
			if w.cancelAfter > 0 && len(w.measured) == w.cancelAfter {
				w.cancel()
			}
			x := run{rps: w.rps[r.Label] * (1 + 0.01*float64(r.Round)), p99: 10, workerCPU: []float64{50, 50}, cpu: fpmCPU(0.001, 0.004, 0)}
			return interleave.Outcome{Bench: x.bench()}, nil
		}),
		Record: func(ctx context.Context, n int, r interleave.Run, o interleave.Outcome, started time.Time) error {
			w.recorded = append(w.recorded, n)
			return nil
		},
	}
}

func static(server string, n string) knob.Config {
	c := DefaultConfig(server)
	c[knob.WorkersKnob(server)] = n
	if knob.RunsFPM(server) {
		c["pm"] = "static"
	}
	return c
}

func testOptions(servers ...string) Options {
	return Options{ID: "run", App: "hello", Workload: "front", Servers: servers, Conns: 8, TimeBudget: 10 * time.Minute, Rounds: 3,
		Duration: time.Second, Warmup: 0, TrialDuration: time.Second, TrialWarmup: 0}
}

func TestRun(t *testing.T) {
	w := &fakeWorld{
		tuned: map[string]knob.Config{
			knob.NginxFPM: static(knob.NginxFPM, "3"),
			// The tune kept the default: one configuration stands for both.
			knob.ApachePreforkModPHP: DefaultConfig(knob.ApachePreforkModPHP),
			// knob.UnitPHP's tune fails: its default is still measured.
		},
		rps: map[string]float64{"nginx-fpm tuned": 300, "nginx-fpm default": 200, "apache-prefork-modphp (tuned = default)": 250, "unit default": 100, "seed": 90},
	}
	opt := testOptions(knob.NginxFPM, knob.ApachePreforkModPHP, knob.UnitPHP)
	opt.Added = []Added{{Label: "seed", Config: static(knob.UnitPHP, "20")}}
	res, err := Run(context.Background(), opt, w.env())
	if err != nil {
		t.Fatal(err)
	}
	per, _ := opt.Budget().PerTune()
	if len(w.budgets) != 3 || w.budgets[0] != per || w.budgets[2] != per || res.TuneBudgetS != per.Seconds() {
		t.Errorf("tune budgets %v, want 3 × %s", w.budgets, per)
	}
	if len(res.Configs) != 5 || res.RoundsRun != 3 || len(w.measured) != 15 || len(w.recorded) != 15 || w.recorded[14] != 15 {
		t.Fatalf("%d configurations, %d rounds, %d runs, %d recorded", len(res.Configs), res.RoundsRun, len(w.measured), len(w.recorded))
	}
	// Rotated order: each configuration first once in three rounds.
	firsts := map[string]bool{w.measured[0]: true, w.measured[5]: true, w.measured[10]: true}
	if len(firsts) != 3 {
		t.Errorf("the order was not rotated: %v", w.measured)
	}
	if res.Best != "nginx-fpm tuned" {
		t.Errorf("best %q", res.Best)
	}
	roles := map[string]string{}
	for _, c := range res.Configs {
		roles[c.Label] = c.Role
	}
	want := map[string]string{"nginx-fpm tuned": results.RoleTuned, "nginx-fpm default": results.RoleDefault,
		"apache-prefork-modphp (tuned = default)": results.RoleBoth, "unit default": results.RoleDefault, "seed": results.RoleAdded}
	for l, r := range want {
		if roles[l] != r {
			t.Errorf("%s: role %q, want %q (roles %v)", l, roles[l], r, roles)
		}
	}
	st := map[string]results.ServerTune{}
	for _, s := range res.Servers {
		st[s.Server] = s
	}
	if s := st[knob.NginxFPM]; s.TuneID != "t-nginx-fpm" || strings.Join(s.Changes, " ") != "pm=static pm.max_children=3" || s.TunedVsDefault == nil || !Faster(s.TunedVsDefault) {
		t.Errorf("nginx-fpm: %+v", s)
	}
	if s := st[knob.ApachePreforkModPHP]; len(s.Changes) != 0 || s.TunedVsDefault != nil || s.Failed != "" {
		t.Errorf("prefork: %+v", s)
	}
	if s := st[knob.UnitPHP]; !strings.Contains(s.Failed, "no trial could start") {
		t.Errorf("unit: %+v", s)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "its default is still measured") {
		t.Errorf("warnings %v", res.Warnings)
	}
	// Each loser is diagnosed (figures the same: no single cause).
	if len(res.Diagnoses) == 0 {
		t.Errorf("no diagnosis for the slower configurations")
	}
}

func TestRunKeepsAFailingConfiguration(t *testing.T) {
	w := &fakeWorld{tuned: map[string]knob.Config{knob.NginxFPM: static(knob.NginxFPM, "3")},
		rps: map[string]float64{"nginx-fpm tuned": 300}, noStart: map[string]bool{"nginx-fpm default": true}}
	res, err := Run(context.Background(), testOptions(knob.NginxFPM), w.env())
	if err != nil {
		t.Fatal(err)
	}
	var failed *results.ServerConfig
	for i, c := range res.Configs {
		if c.Label == "nginx-fpm default" {
			failed = &res.Configs[i]
		}
	}
	if failed == nil || !strings.Contains(failed.Failed, "failed to start") || failed.Rank != 0 {
		t.Fatalf("the failing configuration: %+v", failed)
	}
	// Dropped after its failure: measured (tried) once, not every round.
	if len(w.measured) != 3 {
		t.Errorf("runs %v", w.measured)
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &fakeWorld{tuned: map[string]knob.Config{knob.NginxFPM: static(knob.NginxFPM, "3")},
		rps: map[string]float64{"nginx-fpm tuned": 300, "nginx-fpm default": 200}, cancelAfter: 5, cancel: cancel}
	res, err := Run(ctx, testOptions(knob.NginxFPM), w.env())
	var ie *InterruptedError
	if !errors.As(err, &ie) || !IsInterrupted(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want an InterruptedError", err)
	}
	if res == nil || !res.Interrupted {
		t.Fatalf("no partial result: %+v", res)
	}
	// Five runs: rounds 1 and 2 whole, round 3 cut after its first.
	if res.RoundsRun != 2 || len(w.recorded) != 5 {
		t.Errorf("rounds run %d, recorded %d", res.RoundsRun, len(w.recorded))
	}
	if res.Best == "" || len(res.Configs) != 2 || res.Configs[0].Rounds < 2 {
		t.Errorf("the partial summary: best %q, %+v", res.Best, res.Configs)
	}

	// Interrupted during a tune: what was tuned is kept, nothing measured.
	ctx2, cancel2 := context.WithCancel(context.Background())
	env := w.env()
	tuneOnce := env.Tune
	env.Tune = func(ctx context.Context, start knob.Config, budget time.Duration) (*results.Tune, error) {
		if start.Server() == knob.ApacheEventFPM {
			cancel2()
			return nil, ctx.Err()
		}
		return tuneOnce(ctx, start, budget)
	}
	res, err = Run(ctx2, testOptions(knob.NginxFPM, knob.ApacheEventFPM), env)
	if !IsInterrupted(err) || res == nil || len(res.Servers) != 2 || res.Servers[0].TuneID == "" || res.Servers[1].Failed != "interrupted" || len(res.Configs) != 0 {
		t.Errorf("interrupted in a tune: %v, %+v", err, res)
	}
}

func TestRunRefusesATooSmallBudget(t *testing.T) {
	opt := testOptions(knob.NginxFPM, knob.ApacheEventFPM)
	opt.TimeBudget = time.Minute
	w := &fakeWorld{}
	if _, err := Run(context.Background(), opt, w.env()); err == nil || len(w.budgets) != 0 {
		t.Errorf("a 1-minute budget for two servers: %v, tunes %v", err, w.budgets)
	}
}

func TestPlan(t *testing.T) {
	opt := testOptions(knob.NginxFPM, knob.UnitPHP)
	ms := Plan(opt, map[string]knob.Config{knob.NginxFPM: static(knob.NginxFPM, "4")})
	var labels []string
	for _, m := range ms {
		labels = append(labels, m.Label+"/"+m.Role)
		if m.Config.Server() != m.Server {
			t.Errorf("%s runs %s", m.Label, m.Config.Server())
		}
	}
	if got := strings.Join(labels, ", "); got != "nginx-fpm tuned/tuned, nginx-fpm default/default, unit default/default" {
		t.Errorf("plan %s", got)
	}
}
