package stats

import (
	"fmt"
	"math"
	"slices"
)

// PairTest is one paired comparison tested with a spread pooled over
// several comparisons measured on the same machine (see ComparePooled for
// why pooling is fair): the mean of the per-round log ratios log(B/A), its
// standard error, the pooled degrees of freedom and the two-sided p-value
// of "no difference".
type PairTest struct {
	N       int     `json:"n"` // rounds
	MeanLog float64 `json:"mean_log"`
	SE      float64 `json:"se"` // standard error of MeanLog; +Inf when unknown
	DF      int     `json:"df"`
	P       float64 `json:"p"` // 1 when nothing can be said
}

// CI is the test's interval for B/A at confidence, as a ratio.
func (t PairTest) CI(confidence float64) RatioCI {
	ci := RatioCI{Confidence: confidence, N: t.N, Low: 0, High: math.Inf(1)}
	if t.N == 0 {
		return ci
	}
	ci.Ratio = math.Exp(t.MeanLog)
	if t.DF >= 1 && !math.IsInf(t.SE, 1) {
		half := TQuantile(0.5+confidence/2, float64(t.DF)) * t.SE
		ci.Low, ci.High = math.Exp(t.MeanLog-half), math.Exp(t.MeanLog+half)
	}
	return ci
}

// PooledTests tests each pair with the spread of the log ratios pooled over
// all of them (sum(n_i - 1) degrees of freedom). A pair with no rounds gets
// N 0 and P 1; with no pooled degrees of freedom every SE is +Inf.
func PooledTests(pairs []Pair) ([]PairTest, error) {
	logs, ss, df, err := pooledLogs(pairs)
	if err != nil {
		return nil, err
	}
	out := make([]PairTest, len(pairs))
	for i, l := range logs {
		t := PairTest{N: len(l), DF: df, SE: math.Inf(1), P: 1}
		if t.N > 0 {
			t.MeanLog = Mean(l)
		}
		if t.N > 0 && df >= 1 {
			t.SE = math.Sqrt(ss / float64(df) / float64(t.N))
			switch {
			case t.SE > 0:
				t.P = 2 * (1 - TCDF(math.Abs(t.MeanLog)/t.SE, float64(df)))
			case t.MeanLog != 0:
				t.P = 0 // no spread at all and a difference: certain
			}
		}
		out[i] = t
	}
	return out, nil
}

// SequentialAlpha is the per-look error rate for a comparison looked at up
// to looks times and stopped at the first separation: alpha/looks^0.7,
// which tracks Pocock's constant boundary (see Compare).
func SequentialAlpha(alpha float64, looks int) float64 {
	if looks < 1 {
		looks = 1
	}
	return alpha / math.Pow(float64(looks), 0.7)
}

// Holm is Holm's step-down procedure over m hypotheses with p-values p at
// family-wise error rate alpha: sorted by p, the i-th smallest (from 0) is
// rejected at alpha/(m-i) while every smaller one was rejected too. m may
// exceed len(p): hypotheses of the family that are not tested now (dropped
// without a rejection) still count. It returns which are rejected and the
// level each was held to (the level of the first unrejected one for all
// after it, as Holm's procedure stops there).
func Holm(p []float64, m int, alpha float64) (reject []bool, level []float64) {
	m = max(m, len(p))
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	reject, level = make([]bool, len(p)), make([]float64, len(p))
	stopped := false
	for rank, i := range order {
		level[i] = alpha / float64(m-rank)
		if !stopped && p[i] <= level[i] {
			reject[i] = true
			continue
		}
		stopped = true
	}
	return reject, level
}

// pooledLogs are each pair's per-round log ratios log(B/A), with the sum of
// squared deviations and the degrees of freedom pooled over every pair of
// at least two rounds (PooledTests and the sequential comparisons share
// them).
func pooledLogs(pairs []Pair) (logs [][]float64, ss float64, df int, err error) {
	logs = make([][]float64, len(pairs))
	for i, p := range pairs {
		if len(p.A) != len(p.B) {
			return nil, 0, 0, fmt.Errorf("stats: pair %d has %d A and %d B values", i, len(p.A), len(p.B))
		}
		for j := range p.A {
			if p.A[j] <= 0 || p.B[j] <= 0 {
				return nil, 0, 0, fmt.Errorf("%w: pair %d round %d", ErrNotPositive, i, j+1)
			}
			logs[i] = append(logs[i], math.Log(p.B[j]/p.A[j]))
		}
		if n := len(logs[i]); n >= 2 {
			s := StdDev(logs[i])
			ss += s * s * float64(n-1)
			df += n - 1
		}
	}
	return logs, ss, df, nil
}
