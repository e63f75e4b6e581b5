package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
	"github.com/phptune/phptune/internal/model/store"
)

const mib = int64(1) << 20

type fixture struct {
	tuner    *Tuner
	stack    *sim.Stack
	db       *store.DB
	clock    *time.Time
	progress []Progress
}

func newFixture(t *testing.T, w sim.Workload, seed uint64, dbPath string) *fixture {
	t.Helper()
	if dbPath == "" {
		dbPath = filepath.Join(t.TempDir(), "results.db")
	}
	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &fixture{stack: sim.New(w, seed), db: db, clock: &clock}
	f.stack.Clock = f.clock
	f.tuner = &Tuner{Stack: f.stack, Store: db, Now: func() time.Time { return *f.clock },
		Progress: func(p Progress) { f.progress = append(f.progress, p) }}
	return f
}

// storedOptions is what the store holds of run id's options, decoded and
// as stored (for messages).
func (f *fixture) storedOptions(t *testing.T, id string) (Options, string) {
	t.Helper()
	r, err := f.db.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var stored Options
	if err := json.Unmarshal(r.Options, &stored); err != nil {
		t.Fatal(err)
	}
	return stored, string(r.Options)
}

func TestTuneIO(t *testing.T) {
	f := newFixture(t, sim.IOWait(), 1, "")
	ctx := context.Background()
	tn, err := f.tuner.Run(ctx, Options{ID: "io", App: "io", Workload: "front", Conns: 50, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := tn.Holdout
	if h == nil || h.ThroughputRatio < 7 || h.ThroughputCILow < 5 || h.P99Ratio > 0.3 {
		t.Fatalf("holdout: %+v", h)
	}
	t.Logf("io: %d trials, holdout %.2f× [%.2f, %.2f], p99 %.2f×, %s workers, wall %.0fs, predicted %d MiB, measured %d MiB",
		len(tn.Trials), h.ThroughputRatio, h.ThroughputCILow, h.ThroughputCIHi, h.P99Ratio, tn.Recommended["pm.max_children"], tn.WallS, tn.PredictedMemB>>20, tn.MeasuredMemB>>20)
	// The knob file brings up exactly the recommendation.
	assign, err := knob.ParseFile(tn.Files["recommended.knobs"])
	if err != nil {
		t.Fatal(err)
	}
	back, err := knob.Defaults().Apply(assign)
	if err != nil || len(knob.Diff(back, tn.Recommended)) != 0 {
		t.Errorf("knob file does not reproduce the recommendation: %v %v", knob.Diff(back, tn.Recommended), err)
	}
	if !strings.Contains(tn.Diff, "\n-pm.max_children = 5\n") || !strings.Contains(tn.Diff, "\n+pm.max_children = "+tn.Recommended["pm.max_children"]+"\n") {
		t.Errorf("diff lacks the pool change:\n%s", tn.Diff)
	}
	// Every changed knob has an effect with an interval.
	if len(tn.Changes) != len(knob.Diff(tn.Start, tn.Recommended)) {
		t.Errorf("changes %d for %d changed knobs", len(tn.Changes), len(knob.Diff(tn.Start, tn.Recommended)))
	}
	for _, e := range tn.Changes {
		if e.Ratio <= 0 || e.CILow > e.Ratio || e.CIHigh < e.Ratio || e.Verdict == "" {
			t.Errorf("effect %+v", e)
		}
		if e.Knob == "pm.max_children" && !strings.HasSuffix(e.Verdict, "better") {
			t.Errorf("pool effect %+v", e)
		}
	}
	// Memory: prediction from PSS p95 matches what the holdout measured.
	if tn.PredictedMemB == 0 || tn.MeasuredMemB == 0 || tn.MeasuredMemB > tn.PredictedMemB || float64(tn.MeasuredMemB) < 0.9*float64(tn.PredictedMemB) {
		t.Errorf("memory: predicted %d, measured %d", tn.PredictedMemB, tn.MeasuredMemB)
	}
	// Stored: every trial, and the final result.
	stored, _ := f.db.Trials(ctx, "io")
	if len(stored) != len(tn.Trials) || f.stack.Measures != len(tn.Trials) {
		t.Errorf("stored %d, result %d, measured %d trials", len(stored), len(tn.Trials), f.stack.Measures)
	}
	r, _ := f.db.Run(ctx, "io")
	if r.Status != store.StatusDone || r.Result == nil || r.Result.Holdout == nil {
		t.Errorf("run not finished in the database: %+v", r)
	}
	// Progress: one update per trial, in order, with an estimate.
	if len(f.progress) != len(tn.Trials) {
		t.Errorf("%d progress updates for %d trials", len(f.progress), len(tn.Trials))
	}
	for i, p := range f.progress {
		if p.Trial != i+1 || p.Total < p.Trial || p.Phase == "" {
			t.Errorf("progress %d: %+v", i, p)
			break
		}
	}
	if last := f.progress[len(f.progress)-1]; last.BestRPS < 1500 {
		t.Errorf("best so far %.0f", last.BestRPS)
	}
	if ev := tn.Files["evidence.txt"]; !strings.Contains(ev, "knee scan") || !strings.Contains(ev, "pm=dynamic") || !strings.Contains(ev, "holdout") {
		t.Errorf("evidence:\n%s", ev)
	}
	t.Logf("evidence.txt:\n%s", tn.Files["evidence.txt"])
	if len(tn.Curves) != 1 || len(tn.Curves[0].Points) < 3 {
		t.Errorf("curves: %+v", tn.Curves)
	}
}

func TestInterruptAndResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	f := newFixture(t, sim.IOWait(), 2, path)
	ctx, cancel := context.WithCancel(context.Background())
	const stopAt = 9
	f.tuner.Progress = func(p Progress) {
		if p.Trial == stopAt {
			cancel()
		}
	}
	_, err := f.tuner.Run(ctx, Options{ID: "r", Conns: 50, Cores: 2, Challenges: []string{"pm=dynamic", "opcache.validate_timestamps=off"}})
	var ie *InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "--resume r") {
		t.Fatalf("want an interruption that says how to resume, got %v", err)
	}
	r, _ := f.db.Run(context.Background(), "r")
	if r.Status != store.StatusInterrupted {
		t.Errorf("status %s", r.Status)
	}
	stored, _ := f.db.Trials(context.Background(), "r")
	if len(stored) != stopAt {
		t.Fatalf("%d trials stored, want %d", len(stored), stopAt)
	}

	// A new process: new stack, same database.
	g := newFixture(t, sim.IOWait(), 3, path)
	tn, err := g.tuner.Resume(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if g.stack.Measures != len(tn.Trials)-stopAt {
		t.Errorf("resumed run measured %d trials, want %d (total %d, %d stored)", g.stack.Measures, len(tn.Trials)-stopAt, len(tn.Trials), stopAt)
	}
	reused := 0
	for _, p := range g.progress {
		if p.Reused {
			reused++
		}
	}
	if reused != stopAt {
		t.Errorf("%d trials reported as reused, want %d", reused, stopAt)
	}
	if tn.Holdout == nil || tn.Holdout.ThroughputRatio < 7 {
		t.Errorf("resumed tune holdout %+v", tn.Holdout)
	}
	// Resuming a finished run returns its result without measuring.
	before := g.stack.Measures
	if again, err := g.tuner.Resume(context.Background(), "r"); err != nil || again.ID != "r" || g.stack.Measures != before {
		t.Errorf("resume of a done run: %v, measured %d more", err, g.stack.Measures-before)
	}
}

func TestFailedStartsAreRecorded(t *testing.T) {
	w := sim.IOWait()
	w.FailAbove = 30
	f := newFixture(t, w, 4, "")
	tn, err := f.tuner.Run(context.Background(), Options{ID: "f", Conns: 50, Cores: 2, Challenges: []string{"pm=dynamic"}})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, tr := range tn.Trials {
		if tr.Status == StatusFailed {
			failed++
			if !strings.Contains(tr.Log, "fork() failed") || tr.FailReason == "" || tr.Bench != nil {
				t.Errorf("failed trial without its log: %+v", tr)
			}
		}
	}
	if failed == 0 {
		t.Error("no failed trial recorded")
	}
	if n := tn.Recommended["pm.max_children"]; knob.Config(tn.Recommended).Int("pm.max_children") > 30 {
		t.Errorf("recommended %s children, which do not start", n)
	}
	if tn.Holdout == nil || tn.Holdout.ThroughputRatio < 4 {
		t.Errorf("holdout %+v", tn.Holdout)
	}
}

func TestTimeBudget(t *testing.T) {
	f := newFixture(t, sim.IOWait(), 5, "")
	budget := 4 * time.Minute // each simulated trial takes ~15 s
	tn, err := f.tuner.Run(context.Background(), Options{ID: "b", Conns: 50, Cores: 2, TimeBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(tn.Warnings, "\n"), "time budget ran out") {
		t.Errorf("no budget warning: %q", tn.Warnings)
	}
	if tn.Holdout == nil {
		t.Error("no holdout: the budget must leave room for it")
	}
	if wall := time.Duration(tn.WallS * float64(time.Second)); wall > budget+30*time.Second {
		t.Errorf("took %s with a budget of %s", wall, budget)
	}
	if knob.Config(tn.Recommended).Int("pm.max_children") <= 5 {
		t.Errorf("best so far should already be a bigger pool, got %s", tn.Recommended["pm.max_children"])
	}
}

func TestMemoryBudget(t *testing.T) {
	w := sim.IOWait()
	budget := w.OtherB + 16*w.WorkerB + 4*mib
	f := newFixture(t, w, 6, "")
	tn, err := f.tuner.Run(context.Background(), Options{ID: "m", Conns: 50, Cores: 2, Limits: results.Limits{MemoryBudgetB: budget}})
	if err != nil {
		t.Fatal(err)
	}
	if tn.PredictedMemB > budget || tn.MeasuredMemB > budget {
		t.Errorf("predicted %d MiB, measured %d MiB, budget %d MiB", tn.PredictedMemB>>20, tn.MeasuredMemB>>20, budget>>20)
	}
	for _, tr := range tn.Trials {
		if w.Memory(tr.Config, tr.Connections) > budget && tr.Phase != PhaseDrift && tr.Phase != PhaseHoldout {
			// Trials beyond the budget may only happen before the first
			// measurement told the strategy a worker's size.
			if tr.N > 3 {
				t.Errorf("trial %d (%s) would use %d MiB, over the budget", tr.N, tr.Phase, w.Memory(tr.Config, tr.Connections)>>20)
			}
		}
	}
}

// drifting slows the stack down as the tune goes on.
type drifting struct {
	*sim.Stack
	n int
}

func (d *drifting) Measure(ctx context.Context, conns int, dur, warm time.Duration) (*results.Bench, error) {
	b, err := d.Stack.Measure(ctx, conns, dur, warm)
	if b != nil {
		d.n++
		b.ThroughputRPS *= 1 / (1 + 0.03*float64(d.n))
	}
	return b, err
}

func TestDriftAndReset(t *testing.T) {
	w := sim.CPUBound()
	w.StealProb = 0
	f := newFixture(t, w, 7, "")
	f.tuner.Stack = &drifting{Stack: f.stack}
	tn, err := f.tuner.Run(context.Background(), Options{ID: "d", Conns: 20, Cores: 2, ResetBetween: true, Challenges: []string{"pm=dynamic"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(tn.Warnings, "\n"), "drifted") {
		t.Errorf("no drift warning: %q", tn.Warnings)
	}
	if f.stack.Resets != len(tn.Trials) {
		t.Errorf("%d resets for %d trials", f.stack.Resets, len(tn.Trials))
	}
}

func TestGridStrategy(t *testing.T) {
	f := newFixture(t, sim.CPUBound(), 8, "")
	tn, err := f.tuner.Run(context.Background(), Options{ID: "g", Conns: 20, Cores: 2, Strategy: "grid", HoldoutRounds: 2, HoldoutMaxRounds: 2, DriftRuns: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(tn.Trials) != 1+len(search.DefaultGridChildren)*6+4+2*len(DefaultCurveConns(20)) {
		t.Errorf("%d trials", len(tn.Trials))
	}
}

func TestOptionsErrors(t *testing.T) {
	f := newFixture(t, sim.CPUBound(), 9, "")
	for _, o := range []Options{{Objective: "speed"}, {Strategy: "magic"}, {Challenges: []string{"nope"}}} {
		if _, err := f.tuner.Run(context.Background(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
		time.Sleep(time.Millisecond)
		*f.clock = f.clock.Add(time.Second) // fresh run ID
	}
}

func TestEffects(t *testing.T) {
	start := knob.Defaults()
	rec, _ := start.Apply([]string{"pm=static", "pm.max_children=40", "opcache.validate_timestamps=off"})
	decs := []search.Decision{
		{Name: "pm=dynamic", Changes: []knob.Change{{Knob: "pm", From: "static", To: "dynamic"}}, Rounds: 4,
			CI: stats.RatioCI{Ratio: 0.9, Low: 0.8, High: 0.95, Confidence: 0.95}},
		{Name: "vt", Changes: []knob.Change{{Knob: "opcache.validate_timestamps", From: "on", To: "off"}}, Rounds: 4, Adopted: true,
			CI: stats.RatioCI{Ratio: 1.1, Low: 1.05, High: 1.2, Confidence: 0.95}},
	}
	hold := stats.RatioCI{Ratio: 8, Low: 7, High: 9, Confidence: 0.95}
	got := effects(start, rec, decs, hold, true)
	want := map[string]struct {
		ratio   float64
		verdict string
	}{
		"pm":                          {1 / 0.9, "better"},
		"pm.max_children":             {8, "(holdout, all changes together) better"},
		"opcache.validate_timestamps": {1.1, "better"},
	}
	if len(got) != len(want) {
		t.Fatalf("effects %+v", got)
	}
	for _, e := range got {
		w := want[e.Knob]
		if !near(e.Ratio, w.ratio) || e.Verdict != w.verdict {
			t.Errorf("%s: %+v, want %+v", e.Knob, e, w)
		}
	}
	// A challenger that left the race after one round has no interval
	// ([0, 0]): the holdout speaks for the change (a capacity tune of the
	// io page stored +Inf bounds here and could not be saved).
	one := []search.Decision{{Name: "pm=dynamic", Changes: []knob.Change{{Knob: "pm", From: "static", To: "dynamic"}}, Rounds: 1,
		CI: stats.RatioCI{Ratio: 0.24, Confidence: 0.99}}}
	for _, e := range effects(start, rec, one, hold, true) {
		if math.IsInf(e.CILow, 0) || math.IsInf(e.CIHigh, 0) || (e.Knob == "pm" && (e.Ratio != 8 || !strings.HasPrefix(e.Verdict, "(holdout"))) {
			t.Errorf("one-round decision: %+v", e)
		}
	}
	if e := effects(start, rec, nil, stats.RatioCI{}, false); e[0].Verdict != "not measured" {
		t.Errorf("without a holdout: %+v", e)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestResumeMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	f := newFixture(t, sim.CPUBound(), 10, path)
	ctx, cancel := context.WithCancel(context.Background())
	f.tuner.Progress = func(p Progress) {
		if p.Trial == 4 {
			cancel()
		}
	}
	if _, err := f.tuner.Run(ctx, Options{ID: "x", Conns: 20, Cores: 2}); err == nil {
		t.Fatal("not interrupted")
	}
	// Someone edited the stored trial 3: resuming must refuse, not mix runs.
	trials, _ := f.db.Trials(context.Background(), "x")
	trials[2].Key = "edited"
	if err := f.db.SaveTrial(context.Background(), "x", trials[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tuner.Resume(context.Background(), "x"); !errors.Is(err, ErrResumeMismatch) {
		t.Errorf("resume over a mismatching trial: %v", err)
	}
}

func TestCurve(t *testing.T) {
	for _, tc := range []struct {
		conns int
		want  []int
	}{{50, []int{12, 25, 100}}, {20, []int{5, 10, 40}}, {2, []int{1, 4}}, {1, []int{2}}} {
		if got := DefaultCurveConns(tc.conns); !slices.Equal(got, tc.want) {
			t.Errorf("DefaultCurveConns(%d) = %v, want %v", tc.conns, got, tc.want)
		}
	}

	// Without a time budget: start and recommended at each level, in
	// pairs, from the highest concurrency down, after the holdout.
	f := newFixture(t, sim.IOWait(), 11, "")
	tn, err := f.tuner.Run(context.Background(), Options{ID: "c", Conns: 20, Cores: 2, Challenges: []string{"pm=dynamic"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range tn.Trials {
		if tr.Phase != PhaseCurve {
			if got != nil {
				t.Errorf("trial %d (%s) after the curve", tr.N, tr.Phase)
			}
			continue
		}
		which := "start"
		if maps.Equal(tr.Config, tn.Recommended) {
			which = "recommended"
		} else if !maps.Equal(tr.Config, tn.Start) {
			t.Errorf("curve trial %d measured neither start nor recommended", tr.N)
		}
		got = append(got, fmt.Sprintf("%s@%d", which, tr.Connections))
	}
	want := []string{"start@40", "recommended@40", "start@10", "recommended@10", "start@5", "recommended@5"}
	if !slices.Equal(got, want) {
		t.Errorf("curve trials %v, want %v", got, want)
	}

	// NoCurve skips it; a time budget that is spent cuts it with a warning.
	f = newFixture(t, sim.IOWait(), 12, "")
	tn, err = f.tuner.Run(context.Background(), Options{ID: "n", Conns: 20, Cores: 2, NoCurve: true, Challenges: []string{"pm=dynamic"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range tn.Trials {
		if tr.Phase == PhaseCurve {
			t.Fatalf("NoCurve ran curve trial %d", tr.N)
		}
	}
	f = newFixture(t, sim.IOWait(), 13, "")
	tn, err = f.tuner.Run(context.Background(), Options{ID: "b", Conns: 50, Cores: 2, TimeBudget: 4 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(tn.Warnings, "\n"), "curve trials") {
		t.Errorf("no warning about the curve cut short: %q", tn.Warnings)
	}
}

// TestSpareTrialsResume: with time to spare the race is granted more
// trials as it starts; the grant is stored with the run, so a run
// interrupted mid-race resumes onto the same rounds (no mismatch), and
// the evidence says so. --search-trials turns the grant off and caps the
// search.
func TestSpareTrialsResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	f := newFixture(t, sim.CPUBound(), 4, path)
	ctx, cancel := context.WithCancel(context.Background())
	raced := 0
	f.tuner.Progress = func(p Progress) {
		if p.Phase == search.PhaseCategorical {
			if raced++; raced == 9 {
				cancel()
			}
		}
	}
	opt := Options{ID: "s", Conns: 20, Cores: 2, TimeBudget: 40 * time.Minute}
	if _, err := f.tuner.Run(ctx, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("want an interruption, got %v", err)
	}
	stored, raw := f.storedOptions(t, "s")
	if stored.RaceExtraTrials == nil || *stored.RaceExtraTrials <= 0 {
		t.Fatalf("stored options %s: no spare trials granted", raw)
	}
	g := newFixture(t, sim.CPUBound(), 5, path)
	*g.clock = g.clock.Add(3 * time.Hour) // a resumed run's clock says nothing of the first run's
	tn, err := g.tuner.Resume(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if ev := tn.Files["evidence.txt"]; !strings.Contains(ev, fmt.Sprintf("may spend %d more that the time budget spares", *stored.RaceExtraTrials)) {
		t.Errorf("evidence does not state the grant:\n%s", ev)
	}

	h := newFixture(t, sim.CPUBound(), 4, "")
	tn, err = h.tuner.Run(context.Background(), Options{ID: "c", Conns: 20, Cores: 2, TimeBudget: 40 * time.Minute, SearchTrials: 10})
	if err != nil {
		t.Fatal(err)
	}
	search := 0
	for _, tr := range tn.Trials {
		if tr.Phase != PhaseDrift && tr.Phase != PhaseHoldout && tr.Phase != PhaseCurve {
			search++
		}
	}
	if search > 10 || strings.Contains(tn.Files["evidence.txt"], "time budget spares") {
		t.Errorf("--search-trials 10: %d search trials, evidence:\n%s", search, tn.Files["evidence.txt"])
	}
}

// TestHoldoutGrantResume: the holdout's rounds are granted once, as it
// starts, from the time budget left then; a run interrupted mid-holdout
// resumes with the stored grant (the same looks, no mismatch) although
// the resumed run's clock would grant another.
func TestHoldoutGrantResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	f := newFixture(t, sim.CPUBound(), 14, path)
	f.tuner.Stack = &steady{Stack: f.stack}
	ctx, cancel := context.WithCancel(context.Background())
	held := 0
	f.tuner.Progress = func(p Progress) {
		if p.Phase == PhaseHoldout {
			if held++; held == 10 {
				cancel()
			}
		}
	}
	opt := Options{ID: "h", Conns: 10, Cores: 2, NoCurve: true, TimeBudget: 9 * time.Minute, Challenges: []string{"pm=dynamic"}}
	if _, err := f.tuner.Run(ctx, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("want an interruption, got %v", err)
	}
	stored, raw := f.storedOptions(t, "h")
	if stored.HoldoutRoundsGranted == nil {
		t.Fatalf("stored options %s: no holdout grant", raw)
	}
	granted := *stored.HoldoutRoundsGranted
	g := newFixture(t, sim.CPUBound(), 15, path)
	g.tuner.Stack = &steady{Stack: g.stack}
	*g.clock = g.clock.Add(3 * time.Hour)
	tn, err := g.tuner.Resume(context.Background(), "h")
	if err != nil {
		t.Fatal(err)
	}
	if h := tn.Holdout; h == nil || h.MaxRounds != granted || h.Rounds < 5 || h.Rounds > granted {
		t.Errorf("resumed holdout %+v, want at most %d rounds as granted before the interruption", tn.Holdout, granted)
	}
}
