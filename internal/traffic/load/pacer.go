package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Pacer is the open model's schedule: Intended returns when the k-th
// request (from 0) should be sent, counted from the start of the measured
// part. Pacers are pure and do no I/O.
type Pacer interface {
	Intended(k int64) time.Duration
	// RateAt is the asked rate (requests/second) at t.
	RateAt(t time.Duration) float64
	String() string
}

// ConstantPacer sends Rate requests per second.
type ConstantPacer struct{ Rate float64 }

// RampPacer goes linearly from From to To requests per second over Over,
// and stays at To afterwards.
type RampPacer struct {
	From, To float64
	Over     time.Duration
}

// StepPacer holds each rate of Rates for Step, and the last one afterwards.
type StepPacer struct {
	Rates []float64
	Step  time.Duration
}

var (
	_ Pacer = ConstantPacer{}
	_ Pacer = RampPacer{}
	_ Pacer = StepPacer{}
)

// Intended implements Pacer.
func (p ConstantPacer) Intended(k int64) time.Duration {
	return time.Duration(float64(k) / p.Rate * 1e9)
}

// RateAt implements Pacer.
func (p ConstantPacer) RateAt(time.Duration) float64 { return p.Rate }

func (p ConstantPacer) String() string { return fmtRate(p.Rate) }

// Intended implements Pacer by inverting the ramp's cumulative count
// N(t) = From·t + (To-From)·t²/(2·Over).
func (p RampPacer) Intended(k int64) time.Duration {
	T := p.Over.Seconds()
	n := float64(k)
	total := (p.From + p.To) / 2 * T
	if n >= total || T <= 0 {
		return p.Over + time.Duration((n-total)/p.To*1e9)
	}
	a := (p.To - p.From) / (2 * T)
	var t float64
	if math.Abs(a) < 1e-12 {
		t = n / p.From
	} else {
		t = (-p.From + math.Sqrt(p.From*p.From+4*a*n)) / (2 * a)
	}
	return time.Duration(t * 1e9)
}

// RateAt implements Pacer.
func (p RampPacer) RateAt(t time.Duration) float64 {
	if t >= p.Over || p.Over <= 0 {
		return p.To
	}
	if t < 0 {
		return p.From
	}
	return p.From + (p.To-p.From)*t.Seconds()/p.Over.Seconds()
}

func (p RampPacer) String() string { return fmtRate(p.From) + ".." + fmtRate(p.To) }

// Intended implements Pacer.
func (p StepPacer) Intended(k int64) time.Duration {
	n := float64(k)
	var t time.Duration
	for i, r := range p.Rates {
		inStep := r * p.Step.Seconds()
		if i == len(p.Rates)-1 || n < inStep {
			return t + time.Duration(n/r*1e9)
		}
		n -= inStep
		t += p.Step
	}
	return t
}

// RateAt implements Pacer.
func (p StepPacer) RateAt(t time.Duration) float64 {
	if t < 0 {
		return p.Rates[0]
	}
	i := int(t / p.Step)
	if i >= len(p.Rates) {
		i = len(p.Rates) - 1
	}
	return p.Rates[i]
}

func (p StepPacer) String() string {
	s := make([]string, len(p.Rates))
	for i, r := range p.Rates {
		s[i] = fmtRate(r)
	}
	return strings.Join(s, ",")
}

// MeanRate is the asked rate averaged over d.
func MeanRate(p Pacer, d time.Duration) float64 {
	if d <= 0 {
		return p.RateAt(0)
	}
	// The count at d is the k whose intended time is d; bisect it.
	lo, hi := int64(0), int64(1)
	for p.Intended(hi) < d && hi < 1<<50 {
		hi *= 2
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if p.Intended(mid) < d {
			lo = mid
		} else {
			hi = mid
		}
	}
	return float64(hi) / d.Seconds()
}

// ParseRate reads --rate: "1000" (constant), "500..2000" (a linear ramp over
// duration) or "500,1000,2000" (equal steps over duration).
func ParseRate(s string, duration time.Duration) (Pacer, error) {
	num := func(v string) (float64, error) {
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return 0, fmt.Errorf("rate %q: want a positive number of requests per second", v)
		}
		return r, nil
	}
	switch {
	case strings.Contains(s, ".."):
		a, b, _ := strings.Cut(s, "..")
		from, err := num(a)
		if err != nil {
			return nil, err
		}
		to, err := num(b)
		if err != nil {
			return nil, err
		}
		if duration <= 0 {
			return nil, fmt.Errorf("a ramp (%s) needs a duration", s)
		}
		return RampPacer{From: from, To: to, Over: duration}, nil
	case strings.Contains(s, ","):
		var rates []float64
		for _, f := range strings.Split(s, ",") {
			r, err := num(f)
			if err != nil {
				return nil, err
			}
			rates = append(rates, r)
		}
		if duration <= 0 {
			return nil, fmt.Errorf("steps (%s) need a duration", s)
		}
		return StepPacer{Rates: rates, Step: duration / time.Duration(len(rates))}, nil
	default:
		r, err := num(s)
		if err != nil {
			return nil, err
		}
		return ConstantPacer{Rate: r}, nil
	}
}

func fmtRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// scaledPacer gives one event loop its share of the schedule.
type scaledPacer struct {
	p      Pacer
	share  int64 // loops
	offset int64 // this loop's index
}

func (s scaledPacer) at(k int64) time.Duration { return s.p.Intended(k*s.share + s.offset) }
