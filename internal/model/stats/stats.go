// Package stats holds the statistics phptune's tuner relies on to tell a real
// difference from the noise of a shared VM: summaries, outlier-resistant
// means, a confidence interval for the ratio of two configurations measured
// in interleaved rounds, a sequential comparison that may answer "no
// significant difference", and a drift check. It does no I/O.
//
// The ratio interval is a Student-t interval on the per-round log ratios
// (see PairedRatio). We chose it over a bootstrap because the tuner works
// with 3–8 rounds: a bootstrap over so few rounds under-covers (it cannot
// see more spread than the handful of rounds show), while the t interval
// widens honestly with few rounds and needs no random numbers. Logs make
// the interval multiplicative (noise here is proportional to throughput) and
// pairing by round cancels slow drift such as a neighbour's load or steal
// that affects both configurations of a round alike.
package stats

import (
	"errors"
	"math"
	"sort"
)

// ErrTooFew is returned when there are not enough values for the statistic.
var ErrTooFew = errors.New("stats: too few values")

// ErrNotPositive is returned when a ratio or log is asked of a value <= 0.
var ErrNotPositive = errors.New("stats: values must be positive")

// Mean is the arithmetic mean; NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// StdDev is the sample standard deviation (n-1); 0 for fewer than two values.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func sorted(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	sort.Float64s(out)
	return out
}

// Quantile returns the q-quantile (0..1) by linear interpolation between
// order statistics; NaN for no values.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := sorted(xs)
	if q <= 0 {
		return s[0]
	}
	if q >= 1 {
		return s[len(s)-1]
	}
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(s) {
		return s[lo]
	}
	f := pos - float64(lo)
	return s[lo]*(1-f) + s[lo+1]*f
}

// Median is the 0.5 quantile.
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }

// Summary describes a sample.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	StdDev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CV is StdDev/Mean: the relative noise, the figure to compare with
	// the size of the effect one hopes to see.
	CV float64 `json:"cv"`
}
