package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummaries(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		fn   func([]float64) float64
		want float64
	}{
		{"mean", []float64{1, 2, 3, 4}, Mean, 2.5},
		{"median odd", []float64{5, 1, 3}, Median, 3},
		{"median even", []float64{4, 1, 3, 2}, Median, 2.5},
		{"stddev", []float64{2, 4, 4, 4, 5, 5, 7, 9}, StdDev, 2.138089935},
		{"stddev one", []float64{3}, StdDev, 0},
		{"p90", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, func(x []float64) float64 { return Quantile(x, 0.9) }, 10},
		{"trimmed drops outlier", []float64{10, 10, 11, 9, 10, 100, 10, 10, 9, 11}, func(x []float64) float64 { return TrimmedMean(x, 0.1) }, 10.125},
		{"trimmed keeps one", []float64{1, 2}, func(x []float64) float64 { return TrimmedMean(x, 0.5) }, 1.5},
		{"median of means resists a bad stretch", []float64{10, 10, 10, 10, 1, 1, 10, 10, 10, 10}, func(x []float64) float64 { return MedianOfMeans(x, 5) }, 10},
		{"median of means one group", []float64{1, 2, 3}, func(x []float64) float64 { return MedianOfMeans(x, 1) }, 2},
	}
	for _, tt := range tests {
		if got := tt.fn(tt.xs); !near(got, tt.want, 1e-6) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if !math.IsNaN(Mean(nil)) || !math.IsNaN(Median(nil)) || !math.IsNaN(TrimmedMean(nil, 0.1)) || !math.IsNaN(MedianOfMeans(nil, 2)) {
		t.Error("empty input should give NaN")
	}
	s := Summarize([]float64{90, 100, 110})
	if s.N != 3 || s.Min != 90 || s.Max != 110 || !near(s.CV, 0.1, 1e-9) {
		t.Errorf("Summarize: %+v", s)
	}
}

func TestTQuantile(t *testing.T) {
	// Reference values from statistical tables.
	tests := []struct{ p, df, want float64 }{
		{0.975, 1, 12.7062},
		{0.975, 2, 4.3027},
		{0.975, 4, 2.7764},
		{0.975, 10, 2.2281},
		{0.975, 30, 2.0423},
		{0.995, 5, 4.0321},
		{0.95, 3, 2.3534},
		{0.975, 1e6, 1.9600},
		{0.025, 4, -2.7764},
		{0.5, 7, 0},
	}
	for _, tt := range tests {
		if got := TQuantile(tt.p, tt.df); !near(got, tt.want, 1e-3) {
			t.Errorf("TQuantile(%v, %v) = %v, want %v", tt.p, tt.df, got, tt.want)
		}
	}
}

func TestPairedRatio(t *testing.T) {
	// B is exactly 10% above A in every round: the interval collapses.
	a := []float64{100, 200, 150}
	b := []float64{110, 220, 165}
	ci, err := PairedRatio(a, b, 0.95)
	if err != nil || !near(ci.Ratio, 1.1, 1e-9) || !near(ci.Low, 1.1, 1e-9) || !near(ci.High, 1.1, 1e-9) {
		t.Errorf("exact ratio: %v %v", ci, err)
	}
	// Drift that affects both arms of a round alike cancels out.
	ci, _ = PairedRatio([]float64{100, 50, 80, 60}, []float64{105, 52, 85, 62}, 0.95)
	if ci.Low <= 1 {
		t.Errorf("paired rounds should separate a consistent 3-6%% gain despite drift: %v", ci)
	}
	if ci, _ := PairedRatio([]float64{1}, []float64{2}, 0.95); !math.IsInf(ci.High, 1) || ci.Low != 0 {
		t.Errorf("one round must be unbounded: %v", ci)
	}
	if _, err := PairedRatio([]float64{1, 2}, []float64{1}, 0.95); err == nil {
		t.Error("unequal lengths accepted")
	}
	if _, err := PairedRatio([]float64{1, 0}, []float64{1, 1}, 0.95); !errors.Is(err, ErrNotPositive) {
		t.Errorf("zero accepted: %v", err)
	}
	if _, err := PairedRatio(nil, nil, 0.95); !errors.Is(err, ErrTooFew) {
		t.Errorf("empty accepted: %v", err)
	}
}

// noisy returns n rounds of paired measurements with true ratio B/A = ratio,
// relative noise cv on each measurement and a slow drift common to a round.
func noisy(r *rand.Rand, n int, ratio, cv float64) (a, b []float64) {
	for i := 0; i < n; i++ {
		base := 1000 * (1 + 0.3*math.Sin(float64(i))) // drift
		a = append(a, base*math.Exp(r.NormFloat64()*cv))
		b = append(b, base*ratio*math.Exp(r.NormFloat64()*cv))
	}
	return a, b
}

// sequential runs Compare round by round until it decides.
func sequential(r *rand.Rand, ratio, cv float64, o CompareOptions) (Verdict, int) {
	a, b := noisy(r, o.MaxRounds, ratio, cv)
	for n := 1; n <= o.MaxRounds; n++ {
		d, err := Compare(a[:n], b[:n], o)
		if err != nil {
			panic(err)
		}
		if d.Verdict != NeedMore {
			return d.Verdict, n
		}
	}
	return NeedMore, o.MaxRounds
}

func TestCompareRates(t *testing.T) {
	tests := []struct {
		name  string
		ratio float64
		cv    float64
		o     CompareOptions
		want  Verdict
		// minimum share of simulated comparisons that must give want
		minShare float64
		// maximum share that may give the opposite, wrong answer
		maxWrong float64
	}{
		{"pure noise says no difference", 1.0, 0.08, CompareOptions{Confidence: 0.95, MinRounds: 3, MaxRounds: 6, Equivalence: 0.03}, NoDifference, 0.9, 0.06},
		{"pure noise, tiny noise: equivalence", 1.0, 0.005, CompareOptions{Confidence: 0.95, MinRounds: 3, MaxRounds: 6, Equivalence: 0.03}, NoDifference, 0.99, 0.01},
		{"20% gain found", 1.2, 0.05, DefaultCompare, BBetter, 0.9, 0},
		{"20% loss found", 1 / 1.2, 0.05, DefaultCompare, ABetter, 0.9, 0},
		{"latency: lower B is better", 0.8, 0.05, CompareOptions{Confidence: 0.95, MinRounds: 3, MaxRounds: 5, LowerIsBetter: true}, BBetter, 0.9, 0},
	}
	for _, tt := range tests {
		r := rand.New(rand.NewPCG(1, 2))
		const trials = 400
		var hit, wrong int
		for i := 0; i < trials; i++ {
			v, _ := sequential(r, tt.ratio, tt.cv, tt.o)
			if v == tt.want {
				hit++
			}
			if v == ABetter || v == BBetter {
				if v != tt.want {
					wrong++
				}
			}
		}
		if share := float64(hit) / trials; share < tt.minShare {
			t.Errorf("%s: %s in %.1f%% of comparisons, want >= %.0f%%", tt.name, tt.want, 100*share, 100*tt.minShare)
		}
		if share := float64(wrong) / trials; share > tt.maxWrong {
			t.Errorf("%s: wrong verdict in %.1f%%, want <= %.0f%%", tt.name, 100*share, 100*tt.maxWrong)
		}
	}
}

func TestCompareSteps(t *testing.T) {
	o := CompareOptions{Confidence: 0.95, MinRounds: 3, MaxRounds: 4}
	tests := []struct {
		name string
		a, b []float64
		want Verdict
	}{
		{"before min rounds", []float64{100, 100}, []float64{200, 200}, NeedMore},
		{"clear gain", []float64{100, 101, 99}, []float64{150, 149, 152}, BBetter},
		{"undecided, budget left", []float64{100, 120, 90}, []float64{110, 100, 105}, NeedMore},
		{"undecided, budget spent", []float64{100, 120, 90, 100}, []float64{110, 100, 105, 98}, NoDifference},
	}
	for _, tt := range tests {
		d, err := Compare(tt.a, tt.b, o)
		if err != nil || d.Verdict != tt.want {
			t.Errorf("%s: %v (%v) %v, want %v", tt.name, d.Verdict, d.CI, err, tt.want)
		}
	}
}

func TestDrift(t *testing.T) {
	tests := []struct {
		name          string
		before, after []float64
		want          bool
	}{
		{"stable", []float64{100, 104, 98}, []float64{101, 99, 103}, false},
		{"machine got 30% slower", []float64{100, 102, 99}, []float64{70, 71, 69}, true},
		{"small but significant move within tolerance", []float64{100, 100.1, 99.9}, []float64{102, 102.1, 101.9}, false},
		{"one before value borrows the after spread", []float64{100}, []float64{60, 61, 59}, true},
	}
	for _, tt := range tests {
		d, err := Drift(tt.before, tt.after, 0.95, 0.05)
		if err != nil || d.Drifted != tt.want {
			t.Errorf("%s: %+v %v, want drifted=%v", tt.name, d, err, tt.want)
		}
	}
	if _, err := Drift([]float64{1}, []float64{1}, 0.95, 0.05); !errors.Is(err, ErrTooFew) {
		t.Errorf("two values accepted: %v", err)
	}
}

func TestComparePooled(t *testing.T) {
	o := CompareOptions{Confidence: 0.95, MinRounds: 3, MaxRounds: 4, Equivalence: 0.03}
	tests := []struct {
		name    string
		ratios  []float64 // true B/A of each pair
		cv      float64
		want    []Verdict
		minHit  float64 // share of simulations where every pair got want
		perPair bool
	}{
		{"pure noise, four challengers", []float64{1, 1, 1, 1}, 0.06, []Verdict{NoDifference, NoDifference, NoDifference, NoDifference}, 0.8, false},
		{"one real 15% gain among ties", []float64{1, 1.15, 1, 1}, 0.05, []Verdict{NoDifference, BBetter, NoDifference, NoDifference}, 0.75, false},
	}
	for _, tt := range tests {
		r := rand.New(rand.NewPCG(3, 4))
		const sims = 300
		hit, falsePos, pairs := 0, 0, 0
		for s := 0; s < sims; s++ {
			var ps []Pair
			for _, ratio := range tt.ratios {
				a, b := noisy(r, o.MaxRounds, ratio, tt.cv)
				ps = append(ps, Pair{A: a, B: b})
			}
			// Sequential: decide each pair at the first round it can.
			final := make([]Verdict, len(ps))
			for n := 1; n <= o.MaxRounds; n++ {
				var cut []Pair
				for _, p := range ps {
					cut = append(cut, Pair{A: p.A[:n], B: p.B[:n]})
				}
				ds, err := ComparePooled(cut, o)
				if err != nil {
					t.Fatal(err)
				}
				for i, d := range ds {
					if final[i] == NeedMore {
						final[i] = d.Verdict
					}
				}
			}
			all := true
			for i, v := range final {
				if v != tt.want[i] {
					all = false
				}
				if tt.ratios[i] == 1 {
					pairs++
					if v == ABetter || v == BBetter {
						falsePos++
					}
				}
			}
			if all {
				hit++
			}
		}
		if share := float64(hit) / sims; share < tt.minHit {
			t.Errorf("%s: all verdicts right in %.0f%%, want >= %.0f%%", tt.name, 100*share, 100*tt.minHit)
		}
		if fp := float64(falsePos) / float64(pairs); fp > 0.06 {
			t.Errorf("%s: false positives in %.1f%% of tied pairs", tt.name, 100*fp)
		}
	}
	if _, err := ComparePooled([]Pair{{A: []float64{1}, B: nil}}, o); err == nil {
		t.Error("unequal pair accepted")
	}
}
