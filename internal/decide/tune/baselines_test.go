package tune

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

func TestPlanBaselines(t *testing.T) {
	static4, _ := search.Pool(knob.Defaults(), "static", 4)
	io := baselineInputs{start: knob.Defaults(), cores: 2, memAvailB: 23 << 30, workerB: 129 * mib / 10, workerRSS: true,
		mem: search.Memory{WorkerB: 11 * mib, OtherB: 150 * mib}, budgetB: 1 << 30}
	both := []string{BaselineCalculator, BaselineTwoPerCore}
	for _, tc := range []struct {
		name     string
		in       func(baselineInputs) baselineInputs
		wanted   []string
		calcNot  string // substring of the calculator's NotMeasured ("" = measured)
		twoNot   string
		calcSets string
	}{
		{"io: the formula does not fit 1 GiB", func(b baselineInputs) baselineInputs { return b }, both,
			"does not fit the 1 GiB memory budget: 1,643 workers × 11 MiB (PSS p95) + 150 MiB for the rest = 17.8 GiB", "", "pm.max_children=1643"},
		{"no budget: both measured", func(b baselineInputs) baselineInputs { b.budgetB = 0; return b }, both, "", "", "pm.start_servers=821"},
		{"none asked", func(b baselineInputs) baselineInputs { b.budgetB = 0; return b }, nil, "not asked", "not asked", "pm.max_children=1643"},
		{"2xcores is the start", func(b baselineInputs) baselineInputs { b.start = static4; b.budgetB = 0; return b }, both, "", "the same as the start", "pm.max_children=1643"},
		{"no worker measured", func(b baselineInputs) baselineInputs { b.workerB = 0; return b }, both, "cannot be computed: no php-fpm worker", "", ""},
		{"no MemAvailable", func(b baselineInputs) baselineInputs { b.memAvailB = 0; return b }, both, "cannot be computed: MemAvailable", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs, cfgs := planBaselines(tc.in(io), tc.wanted)
			if len(bs) != 2 || len(cfgs) != 2 || bs[0].Name != BaselineCalculator || bs[1].Name != BaselineTwoPerCore {
				t.Fatalf("%+v", bs)
			}
			for i, want := range []string{tc.calcNot, tc.twoNot} {
				got := bs[i].NotMeasured
				if (want == "") != (got == "") || !strings.Contains(got, want) {
					t.Errorf("%s: not measured %q, want %q", bs[i].Name, got, want)
				}
			}
			if sets := strings.Join(bs[0].Settings, " "); !strings.Contains(sets, tc.calcSets) {
				t.Errorf("calculator sets %q, want %q; rule %q", sets, tc.calcSets, bs[0].Rule)
			}
			if bs[0].Rule == "" || bs[1].Rule != "a static pool of 2 × 2 cores" {
				t.Errorf("rules %q, %q", bs[0].Rule, bs[1].Rule)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1646: "1,646", 1234567: "1,234,567", -1646: "-1,646"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestHoldoutWithBaselines: on the simulated io page the holdout measures
// the calculator's pool and 2 × cores beside start and recommended, and
// the recommendation beats 2 × cores (4 workers waiting on the database).
func TestHoldoutWithBaselines(t *testing.T) {
	f := newFixture(t, sim.IOWait(), 11, "")
	tn, err := f.tuner.Run(context.Background(), Options{ID: "bl", Conns: 50, Cores: 2, MemAvailableB: 2 << 30,
		Baselines: []string{BaselineCalculator, BaselineTwoPerCore}, NoCurve: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tn.Baselines) != 2 {
		t.Fatalf("baselines %+v", tn.Baselines)
	}
	labels := map[string]int{}
	for _, tr := range tn.Trials {
		if tr.Phase == PhaseHoldout {
			labels[knob.Config(tr.Config)["pm"]+"/"+tr.Config["pm.max_children"]]++
		}
	}
	for _, b := range tn.Baselines {
		if b.NotMeasured != "" || b.Rounds != 4 || b.Ratio <= 0 {
			t.Errorf("%s: %+v", b.Name, b)
		}
		if labels[b.Config["pm"]+"/"+b.Config["pm.max_children"]] != 4 {
			t.Errorf("%s measured %v times in the holdout", b.Name, labels)
		}
	}
	if two := tn.Baselines[1]; two.CILow < 3 {
		t.Errorf("recommended/2xcores %.2f× [%.2f, %.2f], want well above 1 on a page that waits", two.Ratio, two.CILow, two.CIHigh)
	}
	if ev := tn.Files["evidence.txt"]; !strings.Contains(ev, "rules of thumb") || !strings.Contains(ev, "0.9 × MemAvailable 2 GiB") {
		t.Errorf("evidence:\n%s", ev)
	}
}

// TestBaselinesResume: a run with baselines interrupted in its holdout
// resumes to the same trials.
func TestBaselinesResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	opt := Options{ID: "blr", Conns: 50, Cores: 2, MemAvailableB: 2 << 30, Baselines: []string{BaselineCalculator, BaselineTwoPerCore},
		Challenges: []string{"pm=dynamic"}, NoCurve: true}
	whole := newFixture(t, sim.IOWait(), 12, "")
	full, err := whole.tuner.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	stopAt := len(full.Trials) - 5 // inside the holdout
	f := newFixture(t, sim.IOWait(), 12, path)
	ctx, cancel := context.WithCancel(context.Background())
	f.tuner.Progress = func(p Progress) {
		if p.Trial == stopAt {
			cancel()
		}
	}
	if _, err := f.tuner.Run(ctx, opt); err == nil {
		t.Fatal("not interrupted")
	}
	g := newFixture(t, sim.IOWait(), 13, path)
	tn, err := g.tuner.Resume(context.Background(), "blr")
	if err != nil {
		t.Fatal(err)
	}
	if len(tn.Trials) != len(full.Trials) || tn.Baselines[0].Rounds == 0 {
		t.Errorf("resumed: %d trials, want %d; baselines %+v", len(tn.Trials), len(full.Trials), tn.Baselines)
	}
}

// steady gives every configuration the same throughput with noise, so the
// holdout's interval includes 1 and is wider than the margin.
type steady struct {
	*sim.Stack
	n int
}

func (s *steady) Measure(ctx context.Context, conns int, d, w time.Duration) (*results.Bench, error) {
	b, err := s.Stack.Measure(ctx, conns, d, w)
	if err != nil {
		return nil, err
	}
	s.n++
	x := 100 * (1 + 0.15*float64(s.n%3-1))
	b.ThroughputRPS, b.Latency.P99Ms = x, 5000/x
	return b, nil
}

// TestHoldoutExtends: an undecided holdout gets more rounds up to
// HoldoutMaxRounds without a time budget, up to what the budget left as it
// started affords with one (at least twice the planned rounds, none added
// with a budget already spent), stores that grant with the run, and
// reports its per-look confidence.
func TestHoldoutExtends(t *testing.T) {
	for _, tc := range []struct {
		name                string
		budget              time.Duration
		wantRounds, wantMax int
	}{
		{"no budget: up to the cap", 0, 16, 16},
		{"tight budget: the planned rounds", 5 * time.Minute, 4, 8},
		{"roomy budget: what it affords", 9 * time.Minute, 9, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, sim.CPUBound(), 14, "")
			f.tuner.Stack = &steady{Stack: f.stack}
			tn, err := f.tuner.Run(context.Background(), Options{ID: "x", Conns: 10, Cores: 2, NoCurve: true, TimeBudget: tc.budget,
				Challenges: []string{"pm=dynamic"}})
			if err != nil {
				t.Fatal(err)
			}
			h := tn.Holdout
			if h == nil || h.Rounds != tc.wantRounds || h.MaxRounds != tc.wantMax || h.PlannedRounds != 4 {
				t.Fatalf("holdout %+v, want %d rounds of at most %d", h, tc.wantRounds, tc.wantMax)
			}
			if h.Confidence <= 0.95 || h.Confidence >= 1 {
				t.Errorf("confidence %v: up to %d looks need a stricter level per look", h.Confidence, tc.wantMax-3)
			}
			ev := tn.Files["evidence.txt"]
			if added := strings.Contains(ev, "more rounds of start and recommended"); added != (tc.wantRounds > 4) {
				t.Errorf("evidence says rounds were added: %v\n%s", added, ev)
			}
			if stored, raw := f.storedOptions(t, "x"); stored.HoldoutRoundsGranted == nil || *stored.HoldoutRoundsGranted != tc.wantMax {
				t.Errorf("stored options %s: want holdout_rounds_granted %d", raw, tc.wantMax)
			}
		})
	}
}

// TestLiveStartWithDistroBaseline: a tune whose start is a live site's
// pool (static, 7 workers) starts there — its drift trials and the
// holdout's "before" run that pool — reports it as "live", and measures
// the distro's defaults beside it as a baseline.
func TestLiveStartWithDistroBaseline(t *testing.T) {
	live, err := knob.Defaults().Apply([]string{"pm=static", "pm.max_children=7", "opcache.validate_timestamps=off"})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{ID: "live", Conns: 50, Cores: 2, MemAvailableB: 2 << 30, NoCurve: true}
	opt.UseLiveStart(live)
	if opt.StartFrom != StartLive || !slices.Equal(opt.Baselines, []string{BaselineDistro}) {
		t.Fatalf("options %q %q", opt.StartFrom, opt.Baselines)
	}
	f := newFixture(t, sim.IOWait(), 11, "")
	tn, err := f.tuner.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if tn.StartFrom != StartLive || tn.Start["pm"] != "static" || tn.Start["pm.max_children"] != "7" {
		t.Errorf("start %s: %v", tn.StartFrom, knob.Config(tn.Start).Overrides())
	}
	for _, tr := range tn.Trials {
		if tr.Phase == PhaseDrift && (tr.Config["pm"] != "static" || tr.Config["pm.max_children"] != "7") {
			t.Errorf("drift trial %d ran %v, not the live pool", tr.N, knob.Config(tr.Config).Overrides())
		}
	}
	var distro *results.Baseline
	for i := range tn.Baselines {
		if tn.Baselines[i].Name == BaselineDistro {
			distro = &tn.Baselines[i]
		}
	}
	if distro == nil || distro.NotMeasured != "" || distro.Rounds == 0 || distro.Config["pm"] != "dynamic" || distro.Config["pm.max_children"] != "5" {
		t.Fatalf("distro baseline %+v", distro)
	}
	if sets := strings.Join(distro.Settings, " "); !strings.Contains(sets, "pm=dynamic") || !strings.Contains(sets, "opcache.validate_timestamps=on") {
		t.Errorf("distro sets %q", sets)
	}
	for _, b := range tn.Baselines {
		if b.Name != BaselineDistro && b.NotMeasured != "not asked for (--baselines)" {
			t.Errorf("%s: %q", b.Name, b.NotMeasured)
		}
	}
	// A start at the distro's defaults has no distro baseline.
	g := newFixture(t, sim.IOWait(), 11, "")
	plain, err := g.tuner.Run(context.Background(), Options{ID: "plain", Conns: 50, Cores: 2, NoCurve: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range plain.Baselines {
		if b.Name == BaselineDistro {
			t.Errorf("a distro start got a distro baseline: %+v", b)
		}
	}
	if plain.StartFrom != "" {
		t.Errorf("start from %q", plain.StartFrom)
	}
}
