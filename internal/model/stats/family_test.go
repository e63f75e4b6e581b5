package stats

import (
	"math"
	"testing"
)

func TestHolm(t *testing.T) {
	tests := []struct {
		name   string
		p      []float64
		m      int
		reject []bool
		levels []float64
	}{
		// Textbook: 0.01 <= 0.05/4, 0.015 <= 0.05/3, 0.03 > 0.05/2 stops.
		{"step-down stops at the first failure", []float64{0.03, 0.01, 0.5, 0.015}, 4,
			[]bool{false, true, false, true}, []float64{0.025, 0.0125, 0.05, 1.0 / 60}},
		{"none", []float64{0.2, 0.04}, 2, []bool{false, false}, []float64{0.05, 0.025}},
		{"untested members of the family count", []float64{0.02}, 3, []bool{false}, []float64{0.05 / 3}},
		{"single is uncorrected", []float64{0.04}, 1, []bool{true}, []float64{0.05}},
		// 0.024 would pass its own level 0.025, but Holm stopped at 0.02 > 0.05/3.
		{"a later small enough p is not rejected after a stop", []float64{0.011, 0.02, 0.024}, 4,
			[]bool{true, false, false}, []float64{0.0125, 0.05 / 3, 0.025}},
	}
	for _, tt := range tests {
		rej, lev := Holm(tt.p, tt.m, 0.05)
		for i := range tt.p {
			if rej[i] != tt.reject[i] || !near(lev[i], tt.levels[i], 1e-12) {
				t.Errorf("%s: hypothesis %d: reject %v level %v, want %v %v", tt.name, i, rej[i], lev[i], tt.reject[i], tt.levels[i])
			}
		}
	}
}

func TestPooledTests(t *testing.T) {
	pairs := []Pair{
		{A: []float64{100, 100, 100}, B: []float64{110, 112, 108}},
		{A: []float64{100, 100}, B: []float64{101, 99}},
		{A: nil, B: nil},
	}
	tests, err := PooledTests(pairs)
	if err != nil {
		t.Fatal(err)
	}
	if tests[0].DF != 3 || tests[0].N != 3 || tests[2].N != 0 || tests[2].P != 1 {
		t.Fatalf("tests %+v", tests)
	}
	if tests[0].P > 0.01 || tests[1].P < 0.5 {
		t.Errorf("p-values %v %v: a 10%% gain with 1%% noise must be significant, ±1%% must not", tests[0].P, tests[1].P)
	}
	// The interval at the p-value's own level touches 1.
	ci := tests[0].CI(1 - tests[0].P)
	if !near(ci.Low, 1, 1e-6) {
		t.Errorf("interval at 1-p: %v, want a bound at 1", ci)
	}
	// Agrees with ComparePooled at the same confidence.
	decs, _ := ComparePooled(pairs[:2], CompareOptions{Confidence: 0.95, MinRounds: 2, MaxRounds: 2})
	if got := tests[1].CI(decs[1].CI.Confidence); !near(got.Low, decs[1].CI.Low, 1e-12) || !near(got.High, decs[1].CI.High, 1e-12) {
		t.Errorf("PooledTests %v vs ComparePooled %v", got, decs[1].CI)
	}
	if one, _ := PooledTests([]Pair{{A: []float64{1}, B: []float64{2}}}); !math.IsInf(one[0].SE, 1) || one[0].P != 1 {
		t.Errorf("one round: %+v", one[0])
	}
	if _, err := PooledTests([]Pair{{A: []float64{1}, B: nil}}); err == nil {
		t.Error("unequal pair accepted")
	}
	if got := SequentialAlpha(0.05, 1); got != 0.05 {
		t.Errorf("one look: %v", got)
	}
}
