package stats

import "math"

// Functions only this package's tests use.

// ComparePooled decides several comparisons measured on the same machine in
// the same rounds (challengers against one incumbent), with the spread of
// the log ratios pooled over all of them. Each comparison alone has only
// n-1 degrees of freedom, which with 3–4 rounds makes the t interval very
// wide; the noise is the machine's, not the configuration's, so pooling is
// a fair assumption and gives the interval sum(n_i - 1) degrees of freedom.
// Rounds, budget and margins follow o as in Compare, per pair.
func ComparePooled(pairs []Pair, o CompareOptions) ([]Decision, error) {
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	if o.MinRounds < 2 {
		o.MinRounds = 2
	}
	if o.MaxRounds < o.MinRounds {
		o.MaxRounds = o.MinRounds
	}
	logs, ss, df, err := pooledLogs(pairs)
	if err != nil {
		return nil, err
	}
	looks := float64(o.MaxRounds - o.MinRounds + 1)
	perLook := 1 - (1-o.Confidence)/math.Pow(looks, 0.7)
	out := make([]Decision, len(pairs))
	for i, l := range logs {
		n := len(l)
		ci := RatioCI{Confidence: perLook, N: n, Low: 0, High: math.Inf(1)}
		if n > 0 {
			ci.Ratio = math.Exp(Mean(l))
		}
		if n >= 1 && df >= 1 {
			half := TQuantile(0.5+perLook/2, float64(df)) * math.Sqrt(ss/float64(df)/float64(n))
			m := Mean(l)
			ci.Low, ci.High = math.Exp(m-half), math.Exp(m+half)
		}
		out[i] = Decision{CI: ci, Verdict: verdict(ci, n, o)}
	}
	return out, nil
}

// TrimmedMean drops the lowest and highest frac (0..0.5) of the values and
// averages the rest, so one run hit by a steal spike does not move it much.
// At least one value is always kept.
func TrimmedMean(xs []float64, frac float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	if frac < 0 {
		frac = 0
	}
	s := sorted(xs)
	k := int(math.Floor(frac * float64(len(s))))
	if 2*k >= len(s) {
		k = (len(s) - 1) / 2
	}
	return Mean(s[k : len(s)-k])
}

// MedianOfMeans splits xs, in order, into groups of consecutive values,
// averages each group and returns the median of the averages. Consecutive
// values (e.g. the seconds of one run) share their disturbance, so grouping
// them first and taking a median across groups resists a disturbed stretch.
func MedianOfMeans(xs []float64, groups int) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	if groups < 1 {
		groups = 1
	}
	if groups > len(xs) {
		groups = len(xs)
	}
	means := make([]float64, 0, groups)
	for g := 0; g < groups; g++ {
		lo, hi := g*len(xs)/groups, (g+1)*len(xs)/groups
		means = append(means, Mean(xs[lo:hi]))
	}
	return Median(means)
}

// Summarize computes a Summary; the zero Summary for no values.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := sorted(xs)
	out := Summary{N: len(xs), Mean: Mean(xs), Median: Median(xs), StdDev: StdDev(xs), Min: s[0], Max: s[len(s)-1]}
	if out.Mean != 0 {
		out.CV = out.StdDev / math.Abs(out.Mean)
	}
	return out
}
