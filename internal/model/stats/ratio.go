package stats

import (
	"fmt"
	"math"
)

// RatioCI is an estimate of B/A with a confidence interval.
type RatioCI struct {
	Ratio      float64 `json:"ratio"` // geometric mean of the per-round ratios B/A
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
	Confidence float64 `json:"confidence"`
	N          int     `json:"n"` // rounds
}

// Excludes1 reports whether the interval lies wholly above or below 1.
func (r RatioCI) Excludes1() bool { return r.Low > 1 || r.High < 1 }

// String formats the interval like 1.050× [1.010, 1.090] (95%, 4 rounds).
func (r RatioCI) String() string {
	return fmt.Sprintf("%.3f× [%.3f, %.3f] (%.0f%%, %d rounds)", r.Ratio, r.Low, r.High, 100*r.Confidence, r.N)
}

// PairedRatio estimates B/A from interleaved rounds: a[i] and b[i] were
// measured one after the other in round i. It is a Student-t interval on
// log(b[i]/a[i]); see the package comment for why. With one round the
// interval is unbounded (0, +Inf): one round says nothing about the noise.
func PairedRatio(a, b []float64, confidence float64) (RatioCI, error) {
	if len(a) != len(b) {
		return RatioCI{}, fmt.Errorf("stats: paired rounds need as many A as B values (%d vs %d)", len(a), len(b))
	}
	if len(a) == 0 {
		return RatioCI{}, ErrTooFew
	}
	logs := make([]float64, len(a))
	for i := range a {
		if a[i] <= 0 || b[i] <= 0 {
			return RatioCI{}, fmt.Errorf("%w: round %d has A=%g B=%g", ErrNotPositive, i+1, a[i], b[i])
		}
		logs[i] = math.Log(b[i] / a[i])
	}
	return logInterval(logs, confidence), nil
}

func logInterval(logs []float64, confidence float64) RatioCI {
	n := len(logs)
	m := Mean(logs)
	out := RatioCI{Ratio: math.Exp(m), Confidence: confidence, N: n}
	if n < 2 {
		out.Low, out.High = 0, math.Inf(1)
		return out
	}
	half := TQuantile(0.5+confidence/2, float64(n-1)) * StdDev(logs) / math.Sqrt(float64(n))
	out.Low, out.High = math.Exp(m-half), math.Exp(m+half)
	return out
}

// Verdict is the outcome of a comparison.
type Verdict int

const (
	// NeedMore means the rounds so far cannot decide and the budget allows more.
	NeedMore Verdict = iota
	// ABetter means A is significantly better than B.
	ABetter
	// BBetter means B is significantly better than A.
	BBetter
	// NoDifference means the difference is within the equivalence margin,
	// or the budget of rounds ran out before the interval excluded "equal".
	// Callers then keep the default or the cheaper setting.
	NoDifference
)

// String is the verdict in words, as reports print it.
func (v Verdict) String() string {
	switch v {
	case NeedMore:
		return "need more rounds"
	case ABetter:
		return "A better"
	case BBetter:
		return "B better"
	case NoDifference:
		return "no significant difference"
	}
	return "?"
}

// CompareOptions tune Compare.
type CompareOptions struct {
	// Confidence of the overall decision, e.g. 0.95.
	Confidence float64
	// MinRounds before any verdict (at least 2; 3 is a sensible minimum).
	MinRounds int
	// MaxRounds is the budget: at MaxRounds an undecided comparison is
	// "no significant difference".
	MaxRounds int
	// Equivalence is the relative difference considered irrelevant, e.g.
	// 0.03: when the whole interval lies within [1/1.03, 1.03] the answer
	// is "no significant difference" before the budget runs out.
	Equivalence float64
	// LowerIsBetter is set for latencies (B/A < 1 means B is better).
	LowerIsBetter bool
}

// DefaultCompare is what the tuner uses unless told otherwise.
var DefaultCompare = CompareOptions{Confidence: 0.95, MinRounds: 3, MaxRounds: 5, Equivalence: 0.03}

// Decision is a verdict with the interval it rests on.
type Decision struct {
	Verdict Verdict `json:"verdict"`
	CI      RatioCI `json:"ci"` // B/A at the per-look confidence
}

// Compare looks at the paired rounds so far and decides, sequentially.
//
// Looking after every round and stopping at the first separation inflates
// false positives, so each look uses a stricter per-look confidence:
// alpha/K^0.7 for K possible looks, which tracks Pocock's constant boundary
// (at alpha 0.05: K=2 0.029 vs 0.031 here, K=5 0.016 vs 0.016).
// The reported CI is at that per-look confidence.
func Compare(a, b []float64, o CompareOptions) (Decision, error) {
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	if o.MinRounds < 2 {
		o.MinRounds = 2
	}
	if o.MaxRounds < o.MinRounds {
		o.MaxRounds = o.MinRounds
	}
	looks := float64(o.MaxRounds - o.MinRounds + 1)
	perLook := 1 - (1-o.Confidence)/math.Pow(looks, 0.7)
	ci, err := PairedRatio(a, b, perLook)
	if err != nil {
		return Decision{}, err
	}
	return Decision{CI: ci, Verdict: verdict(ci, len(a), o)}, nil
}

// DriftResult says whether a configuration measured at the end of a tune
// performs like it did at the beginning.
type DriftResult struct {
	CI        RatioCI `json:"ci"` // after/before
	Drifted   bool    `json:"drifted"`
	Tolerance float64 `json:"tolerance"`
}

// Drift compares the start configuration's measurements at the beginning
// (before) with its re-measurements at the end (after). The samples are not
// paired, so it is a Welch interval on the logs. It reports drift when the
// interval excludes 1 and the estimate moved by more than tolerance (e.g.
// 0.05): then the machine changed under the tune and comparisons made far
// apart in time deserve less trust. With a single value on one side, that
// side borrows the other side's spread (a single run has no spread of its own).
func Drift(before, after []float64, confidence, tolerance float64) (DriftResult, error) {
	if len(before) == 0 || len(after) == 0 || len(before)+len(after) < 3 {
		return DriftResult{}, ErrTooFew
	}
	lb, la := make([]float64, len(before)), make([]float64, len(after))
	for i, x := range before {
		if x <= 0 {
			return DriftResult{}, ErrNotPositive
		}
		lb[i] = math.Log(x)
	}
	for i, x := range after {
		if x <= 0 {
			return DriftResult{}, ErrNotPositive
		}
		la[i] = math.Log(x)
	}
	vb, va := variance(lb), variance(la)
	if len(lb) < 2 {
		vb = va
	}
	if len(la) < 2 {
		va = vb
	}
	nb, na := float64(len(lb)), float64(len(la))
	se2 := vb/nb + va/na
	diff := Mean(la) - Mean(lb)
	// Welch–Satterthwaite degrees of freedom, at least 1.
	df := 1.0
	if se2 > 0 {
		den := 0.0
		if nb > 1 {
			den += (vb / nb) * (vb / nb) / (nb - 1)
		}
		if na > 1 {
			den += (va / na) * (va / na) / (na - 1)
		}
		if den > 0 {
			df = math.Max(1, se2*se2/den)
		}
	}
	half := TQuantile(0.5+confidence/2, df) * math.Sqrt(se2)
	ci := RatioCI{Ratio: math.Exp(diff), Low: math.Exp(diff - half), High: math.Exp(diff + half), Confidence: confidence, N: len(before) + len(after)}
	drifted := ci.Excludes1() && math.Abs(ci.Ratio-1) > tolerance
	return DriftResult{CI: ci, Drifted: drifted, Tolerance: tolerance}, nil
}

func variance(xs []float64) float64 {
	s := StdDev(xs)
	return s * s
}

// TQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom (df may be fractional, as Welch's is).
func TQuantile(p, df float64) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	if p >= 1 {
		return math.Inf(1)
	}
	// Bisection on the CDF: monotone, and plenty fast for the few calls a
	// tune makes.
	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TCDF is the cumulative distribution function of Student's t.
func TCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * regIncBeta(df/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated with the continued fraction (modified Lentz), using the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step advances the continued fraction by one term of numerator num
	// (Lentz's method) and returns the factor it multiplies h by.
	step := func(num float64) float64 {
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		h *= step(fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)))
		del := step(-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)))
		h *= del
		if math.Abs(del-1) < 1e-14 {
			break
		}
	}
	return h
}

// Pair is the paired rounds of one comparison: A[i] and B[i] were measured
// in the same round.
type Pair struct{ A, B []float64 }

func verdict(ci RatioCI, n int, o CompareOptions) Verdict {
	v := NeedMore
	switch {
	case n < o.MinRounds:
	case o.Equivalence > 0 && ci.Low >= 1/(1+o.Equivalence) && ci.High <= 1+o.Equivalence:
		// Checked before "better": a difference that is certain but
		// smaller than the margin is not worth leaving the default for.
		v = NoDifference
	case ci.Low > 1:
		v = BBetter
	case ci.High < 1:
		v = ABetter
	case n >= o.MaxRounds:
		v = NoDifference
	}
	if o.LowerIsBetter {
		switch v {
		case ABetter:
			v = BBetter
		case BBetter:
			v = ABetter
		}
	}
	return v
}
