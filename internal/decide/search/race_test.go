package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/stats"
)

// randomStack draws one simulated stack: a CPU-bound page or one that
// waits, throughput noise of 3-10% per run, steal-like dips of 10-30% in
// 5-30% of the runs, 1-3% noise on CPU per request, and knob effects of
// various sizes.
func randomStack(seed uint64) (sim.Workload, int) {
	r := rand.New(rand.NewPCG(seed, 42))
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }
	w := sim.CPUBound()
	w.Name = fmt.Sprintf("cpu-%d", seed)
	w.CPUMs, w.WaitMs = u(0.4, 4), u(0, 0.3)
	if seed%2 == 1 {
		w = sim.IOWait()
		w.Name = fmt.Sprintf("wait-%d", seed)
		w.CPUMs, w.WaitMs = u(0.5, 2), u(5, 40)
	}
	w.Noise, w.StealProb, w.StealDip, w.CPUNoise = u(0.03, 0.10), u(0.05, 0.3), u(0.1, 0.3), u(0.01, 0.03)
	w.VTOffGain, w.TCPCost, w.SwitchCost = u(0, 0.1), u(0, 0.08), u(0, 0.006)
	w.GenCPUMs, w.SoftIRQPct = u(0.02, 0.1), u(0, 2)
	return w, []int{20, 50}[r.IntN(2)]
}

// raceShare is the trial budget of the bar: 15% of the grid's 96 trials.
const raceShare = 0.15

// TestRaceAgainstGrid is the bar of issue 11: over 200 seeded simulated
// stacks, the domain strategy (search trials only: the start's baseline is
// given, as the tune's drift trials measure it) reaches a median regret
// against the exhaustive grid's pick of at most 2%, with at most 15% of the
// grid's trials. Regret is judged on the model's true throughput, so it is
// not itself noise; the oracle is the true best of the grid's space.
//
//	go test ./internal/decide/search -run TestRaceAgainstGrid -v
//
// prints the distribution (the README quotes it).
func TestRaceAgainstGrid(t *testing.T) {
	const stacks = 200
	var regret, oracle, share []float64
	var worst []string
	ctx := context.Background()
	for seed := uint64(1); seed <= stacks; seed++ {
		w, conns := randomStack(seed)
		g, err := search.NewGrid(search.GridOptions{Options: search.Options{Conns: conns, Cores: w.Cores, Challenges: search.GridChallenges}})
		if err != nil {
			t.Fatal(err)
		}
		gridN := drive(t, g, sim.New(w, seed+1000))
		pick := w.True(g.Recommend().Config, conns)
		best := 0.0
		for _, pm := range []string{"static", "dynamic", "ondemand"} {
			for _, c := range search.DefaultGridChildren {
				for _, vt := range []string{"on", "off"} {
					base := knob.Defaults()
					base["opcache.validate_timestamps"] = vt
					cfg, _ := search.Pool(base, pm, c)
					best = max(best, w.True(cfg, conns))
				}
			}
		}
		st := sim.New(w, seed)
		if err := st.Apply(ctx, knob.Defaults()); err != nil {
			t.Fatal(err)
		}
		base, _ := st.Measure(ctx, conns, 10*time.Second, 2*time.Second)
		d := domain(t, search.Options{Conns: conns, Cores: w.Cores, Challenges: search.GridChallenges,
			SearchTrials: int(raceShare * float64(gridN)), Baseline: base})
		n := drive(t, d, st)
		rec := d.Recommend()
		got := w.True(rec.Config, conns)
		regret = append(regret, 1-got/pick)
		oracle = append(oracle, 1-got/best)
		share = append(share, float64(n)/float64(gridN))
		if 1-got/pick > 0.05 {
			worst = append(worst, fmt.Sprintf("%s c=%d: regret %.1f%% (%s %s workers vt=%s vs grid %s %s vt=%s), %d trials",
				w.Name, conns, 100*(1-got/pick), rec.Config["pm"], rec.Config["pm.max_children"], rec.Config["opcache.validate_timestamps"],
				g.Recommend().Config["pm"], g.Recommend().Config["pm.max_children"], g.Recommend().Config["opcache.validate_timestamps"], n))
		}
		if float64(n) > raceShare*float64(gridN) {
			t.Errorf("%s: %d search trials, more than %.0f%% of the grid's %d", w.Name, n, 100*raceShare, gridN)
		}
	}
	q := func(xs []float64, p float64) float64 { return 100 * stats.Quantile(xs, p) }
	t.Logf("%d stacks: regret against the grid's pick median %.2f%%, p90 %.2f%%, max %.2f%%; against the true best of the grid's space median %.2f%%, p90 %.2f%%",
		stacks, q(regret, 0.5), q(regret, 0.9), q(regret, 1), q(oracle, 0.5), q(oracle, 0.9))
	t.Logf("search trials / grid trials: median %.1f%%, p90 %.1f%%, max %.1f%%", q(share, 0.5), q(share, 0.9), q(share, 1))
	slices.Sort(worst)
	t.Logf("%d stacks with regret > 5%%:\n%s", len(worst), strings.Join(worst, "\n"))
	if m := stats.Median(regret); m > 0.02 {
		t.Errorf("median regret %.2f%%, want <= 2%%", 100*m)
	}
}

// raceChallenges are the race tests' challengers: the tune's defaults
// (without max_requests), the JIT among them.
var raceChallenges = []search.Challenge{
	{Name: "pm=dynamic", Group: "pm", Set: []string{"pm=dynamic"}},
	{Name: "pm=ondemand", Group: "pm", Set: []string{"pm=ondemand"}},
	{Name: "listen=tcp", Group: "listen", Set: []string{"listen=tcp"}},
	{Name: "vt=off", Group: "vt", Set: []string{"opcache.validate_timestamps=off"}},
	{Name: "jit", Group: "jit", Set: []string{"opcache.jit=tracing", "opcache.jit_buffer_size=64M"}},
}

// decisionOf is the decision on the challenger named name.
func decisionOf(rec search.Recommendation, name string) search.Decision {
	for _, x := range rec.Decisions {
		if x.Name == name {
			return x
		}
	}
	return search.Decision{}
}

// TestRaceSpareRounds: trials the time budget spares (Options.Spare) buy
// more rounds for the undecided leader, never more challengers, within
// what Spare granted; with them a small real gain measured on a noisy
// statistic is adopted more often, and a change that does nothing is
// still adopted rarely (the looks' stricter level pays for the rounds).
func TestRaceSpareRounds(t *testing.T) {
	// A CPU-bound page whose CPU per request is noisy (6% a run): a 5%
	// gain from the JIT is hard to tell in 3 rounds.
	w := sim.CPUBound()
	w.JITGain, w.CPUNoise, w.Noise, w.StealProb, w.TCPCost, w.SwitchCost, w.VTOffGain = 0.08, 0.06, 0.06, 0, 0, 0, 0
	race := func(seed uint64, spare int, w sim.Workload) (rec search.Recommendation, asked []int, trials int) {
		o := search.Options{Conns: 20, Cores: 2, Challenges: raceChallenges}
		if spare > 0 {
			o.Spare = func(planned int) int { asked = append(asked, planned); return spare }
		}
		rec, trials = runRace(t, o, w, seed)
		return rec, asked, trials
	}
	const runs = 40
	adoptedPlain, adoptedSpare, nullAdopted, most := 0, 0, 0, 0
	for seed := uint64(1); seed <= runs; seed++ {
		plain, _, n0 := race(seed, 0, w)
		spare, asked, n1 := race(seed, 16, w)
		if len(asked) != 1 || asked[0] != 14 {
			t.Fatalf("seed %d: Spare asked %v, want once with the planned 14", seed, asked)
		}
		if n0 > 14 || n1 > 14+16 {
			t.Errorf("seed %d: the race ran %d trials with 16 spare, %d without (planned 14)", seed, n1, n0)
		}
		most = max(most, decisionOf(spare, "jit").Rounds)
		adoptedPlain += map[bool]int{true: 1}[decisionOf(plain, "jit").Adopted]
		adoptedSpare += map[bool]int{true: 1}[decisionOf(spare, "jit").Adopted]
		null := w
		null.JITGain = 0
		rec, _, _ := race(seed, 16, null)
		for _, x := range rec.Decisions {
			if x.Adopted {
				nullAdopted++
				break
			}
		}
	}
	t.Logf("an 8%% gain at 6%% noise adopted in %d of %d runs with 16 spare trials, %d without; a tune where no change does anything adopted one in %d; the JIT's most rounds %d",
		adoptedSpare, runs, adoptedPlain, nullAdopted, most)
	if most <= 3 {
		t.Errorf("the leader never got more than %d rounds with 16 spare trials", most)
	}
	if adoptedSpare <= adoptedPlain {
		t.Errorf("spare rounds adopted the real gain %d times, no more than without them (%d)", adoptedSpare, adoptedPlain)
	}
	if nullAdopted > runs/10 {
		t.Errorf("a change that does nothing was adopted in %d of %d runs", nullAdopted, runs)
	}
}

// runRace runs a domain search with o on a simulated stack of w and
// returns its recommendation and the number of race (categorical) trials.
func runRace(t *testing.T, o search.Options, w sim.Workload, seed uint64) (search.Recommendation, int) {
	t.Helper()
	d := domain(t, o)
	st := sim.New(w, seed)
	ctx := context.Background()
	trials := 0
	for batch := d.Ask(); len(batch) > 0; batch = d.Ask() {
		for _, c := range batch {
			if c.Phase == search.PhaseCategorical {
				trials++
			}
			if err := st.Apply(ctx, c.Config); err != nil {
				t.Fatal(err)
			}
			b, err := st.Measure(ctx, c.Conns, 10*time.Second, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			d.Tell(c, search.Outcome{Bench: b})
		}
	}
	return d.Recommend(), trials
}

// TestRaceRevivesHalved: with trials to spare after its leaders are
// decided, the race brings back the challengers the halving left
// undecided (seen in a WordPress tune: a 1.125× PHP build left after 3
// rounds, the JIT adopted after 9, 17 of 30 minutes unused). A small real
// gain behind a large one is then decided more often than by the halving
// alone, the race stays within its budget, and a change that does nothing
// is still adopted rarely.
func TestRaceRevivesHalved(t *testing.T) {
	// validate_timestamps=off saves 15% (the leader, decided early), the
	// JIT 6% (the build of the WordPress tune), at 6% noise a run.
	w := sim.CPUBound()
	w.VTOffGain, w.JITGain, w.CPUNoise, w.Noise, w.StealProb, w.TCPCost, w.SwitchCost = 0.15, 0.06, 0.06, 0.06, 0, 0, 0
	const runs, spare = 40, 40
	o := search.Options{Conns: 20, Cores: 2, Challenges: raceChallenges, Spare: func(int) int { return spare }}
	adopted, revived, nullAdopted := 0, 0, 0
	for seed := uint64(1); seed <= runs; seed++ {
		rec, trials := runRace(t, o, w, seed)
		if trials > 14+spare {
			t.Errorf("seed %d: %d race trials, more than the planned 14 and %d spare", seed, trials, spare)
		}
		if decisionOf(rec, "jit").Adopted {
			adopted++
		}
		for _, n := range rec.Notes {
			if strings.Contains(n, "came back") {
				revived++
				break
			}
		}
		null := w
		null.JITGain = 0
		if rec, _ := runRace(t, o, null, seed); decisionOf(rec, "jit").Adopted {
			nullAdopted++
		}
	}
	t.Logf("a 6%% gain behind a 15%% one, 6%% noise, %d spare trials: adopted in %d of %d runs; the halved came back in %d; a JIT that does nothing adopted in %d",
		spare, adopted, runs, revived, nullAdopted)
	if revived == 0 {
		t.Errorf("no run brought a halved challenger back with %d spare trials", spare)
	}
	// Measured: 14 of 40 with the revival, 5 of 40 without it (the same
	// seeds); a JIT that does nothing 1 and 0.
	if adopted < runs/4 {
		t.Errorf("the 6%% gain adopted in %d of %d runs (by the halving alone: 5)", adopted, runs)
	}
	if nullAdopted > runs/10 {
		t.Errorf("a change that does nothing was adopted in %d of %d runs", nullAdopted, runs)
	}
}
