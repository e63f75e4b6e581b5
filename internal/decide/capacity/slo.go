package capacity

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// SLO is what a rate must meet to count as sustained: latency bounds on
// percentiles measured from each request's intended send time, and an
// error limit.
//
// Grammar (ParseSLO), terms separated by commas, spaces allowed between
// tokens, case ignored:
//
//	slo     = term { "," term }
//	term    = latency | errors
//	latency = "p" PERCENTILE ( "<" | "<=" ) DURATION
//	errors  = "errors" ( "<" | "<=" ) NUMBER "%"
//
// PERCENTILE is one the generator records exactly: 50, 90, 95, 99 or
// 99.9. DURATION is a Go duration with its unit, 1ms to 60s ("500ms",
// "1s", "1.5s"). NUMBER is a percentage from 0 to 100 ("0.1%"; "errors<0%"
// can never hold: write "errors<=0%"). Each percentile and the errors term
// appear at most once. Examples: "p99<500ms", "p95<1s",
// "p99<500ms,errors<0.1%", "p50<=100ms, p99.9<2s".
type SLO struct {
	// Latency bounds, by percentile ascending.
	Latency []results.SLOTerm
	// Errors is the error limit when the SLO has an errors term (the
	// command's --max-errors otherwise).
	Errors *ErrorLimit
}

// ErrorLimit bounds a step's error rate (a fraction: 0.001 = 0.1%): at
// most Rate, or below it when Strict. The zero value allows no error.
type ErrorLimit struct {
	Rate   float64
	Strict bool // "<" rather than "<="
}

// Holds reports whether rate meets the limit.
func (e ErrorLimit) Holds(rate float64) bool {
	if e.Strict {
		return rate < e.Rate
	}
	return rate <= e.Rate+1e-12
}

func (e ErrorLimit) String() string {
	op := "<="
	if e.Strict {
		op = "<"
	}
	return "errors" + op + strconv.FormatFloat(100*e.Rate, 'g', -1, 64) + "%"
}

// Percentiles are the percentiles an SLO may bound: those every bench
// result records exactly (results.Latency).
var Percentiles = []float64{50, 90, 95, 99, 99.9}

// Bounds on an SLO's latencies: below a millisecond loopback noise
// decides, above a minute a step would need ten minutes to fill queues.
const (
	MinLatency = time.Millisecond
	MaxLatency = time.Minute
)

// ErrSLO marks an SLO that cannot be parsed; the message says which term
// and what is allowed.
var ErrSLO = errors.New("invalid SLO")

// ParseSLO reads an SLO in the grammar of SLO.
func ParseSLO(s string) (SLO, error) {
	var slo SLO
	if len(s) > 256 {
		return slo, fmt.Errorf("%w: longer than 256 characters", ErrSLO)
	}
	if strings.TrimSpace(s) == "" {
		return slo, fmt.Errorf("%w: empty; write terms like p99<500ms or errors<0.1%%", ErrSLO)
	}
	for _, raw := range strings.Split(s, ",") {
		term := strings.ToLower(strings.Join(strings.Fields(raw), ""))
		if term == "" {
			return slo, fmt.Errorf("%w: an empty term (two commas, or one at an end)", ErrSLO)
		}
		switch {
		case strings.HasPrefix(term, "errors"):
			if slo.Errors != nil {
				return slo, fmt.Errorf("%w: %q: the errors term is given twice", ErrSLO, strings.TrimSpace(raw))
			}
			e, err := parseErrors(term)
			if err != nil {
				return slo, fmt.Errorf("%w: %q: %v", ErrSLO, strings.TrimSpace(raw), err)
			}
			slo.Errors = &e
		case strings.HasPrefix(term, "p"):
			t, err := parseLatency(term)
			if err != nil {
				return slo, fmt.Errorf("%w: %q: %v", ErrSLO, strings.TrimSpace(raw), err)
			}
			if slices.ContainsFunc(slo.Latency, func(o results.SLOTerm) bool { return o.Percentile == t.Percentile }) {
				return slo, fmt.Errorf("%w: %q: p%s is bounded twice", ErrSLO, strings.TrimSpace(raw), fmtPct(t.Percentile))
			}
			slo.Latency = append(slo.Latency, t)
		default:
			return slo, fmt.Errorf("%w: %q: a term is pNN<DURATION (p99<500ms) or errors<PERCENT%% (errors<0.1%%)", ErrSLO, strings.TrimSpace(raw))
		}
	}
	slices.SortFunc(slo.Latency, func(a, b results.SLOTerm) int {
		switch {
		case a.Percentile < b.Percentile:
			return -1
		case a.Percentile > b.Percentile:
			return 1
		}
		return 0
	})
	return slo, nil
}

// cutOp splits "<=rest" or "<rest".
func cutOp(s string) (rest string, inclusive, ok bool) {
	if r, ok := strings.CutPrefix(s, "<="); ok {
		return r, true, true
	}
	if r, ok := strings.CutPrefix(s, "<"); ok {
		return r, false, true
	}
	return s, false, false
}

func parseErrors(term string) (ErrorLimit, error) {
	rest, incl, ok := cutOp(strings.TrimPrefix(term, "errors"))
	if !ok {
		return ErrorLimit{}, errors.New("write errors<0.1% or errors<=0%")
	}
	num, pct := strings.CutSuffix(rest, "%")
	if !pct {
		return ErrorLimit{}, errors.New("give the limit as a percentage, like errors<0.1%")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return ErrorLimit{}, fmt.Errorf("%q is not a percentage from 0 to 100", num+"%")
	}
	if v == 0 && !incl {
		return ErrorLimit{}, errors.New("no error rate is below 0%: write errors<=0% for no errors at all")
	}
	return ErrorLimit{Rate: v / 100, Strict: !incl}, nil
}

func parseLatency(term string) (results.SLOTerm, error) {
	body := strings.TrimPrefix(term, "p")
	i := strings.IndexByte(body, '<')
	if i < 0 {
		return results.SLOTerm{}, errors.New("write a percentile, < or <=, and a duration, like p99<500ms")
	}
	pctS := body[:i]
	p, err := strconv.ParseFloat(pctS, 64)
	if err != nil || !slices.Contains(Percentiles, p) {
		return results.SLOTerm{}, fmt.Errorf("percentile %q: choose p50, p90, p95, p99 or p99.9", "p"+pctS)
	}
	rest, incl, _ := cutOp(body[i:])
	if rest == "" {
		return results.SLOTerm{}, errors.New("no duration after the comparison; write one with its unit, like 500ms or 1s")
	}
	if _, err := strconv.ParseFloat(rest, 64); err == nil {
		return results.SLOTerm{}, fmt.Errorf("duration %q has no unit: write %sms or %ss", rest, rest, rest)
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		return results.SLOTerm{}, fmt.Errorf("duration %q: write it with its unit, like 500ms or 1.5s", rest)
	}
	if d < MinLatency || d > MaxLatency {
		return results.SLOTerm{}, fmt.Errorf("duration %s: give 1ms to 60s", d)
	}
	return results.SLOTerm{Percentile: p, MaxMs: float64(d) / float64(time.Millisecond), Inclusive: incl}, nil
}

func fmtPct(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// String is the SLO in the grammar of ParseSLO, canonical: latency terms
// by percentile, then errors. ParseSLO(s.String()) gives s again.
func (s SLO) String() string {
	var parts []string
	for _, t := range s.Latency {
		op := "<"
		if t.Inclusive {
			op = "<="
		}
		parts = append(parts, "p"+fmtPct(t.Percentile)+op+time.Duration(math.Round(t.MaxMs*float64(time.Millisecond))).String())
	}
	if s.Errors != nil {
		parts = append(parts, s.Errors.String())
	}
	return strings.Join(parts, ",")
}

// MaxLatencyBound is the largest latency bound of the SLO (0: none).
func (s SLO) MaxLatencyBound() time.Duration {
	var m float64
	for _, t := range s.Latency {
		m = math.Max(m, t.MaxMs)
	}
	return time.Duration(m * float64(time.Millisecond))
}

// topPercentile is the highest bounded percentile (99 when none).
func (s SLO) topPercentile() float64 {
	p := 0.0
	for _, t := range s.Latency {
		p = math.Max(p, t.Percentile)
	}
	if p == 0 {
		return 99
	}
	return p
}

// percentileOf is the bench's latency at percentile p, in ms.
func percentileOf(l results.Latency, p float64) float64 {
	switch p {
	case 50:
		return l.P50Ms
	case 90:
		return l.P90Ms
	case 95:
		return l.P95Ms
	case 99:
		return l.P99Ms
	case 99.9:
		return l.P999Ms
	}
	return math.Inf(1)
}

// Check says why an open-model step at the asked rate fails the SLO with
// errors limit errs (used when the SLO has no errors term); no reasons
// means it passed. Late requests (due but never sent because every
// connection was waiting, or sent and still unanswered when the step
// ended) count as errors and as slower than every latency bound: a
// client would have given up on them.
func (s SLO) Check(b *results.Bench, errs ErrorLimit) []string {
	if b == nil {
		return []string{"no result"}
	}
	if s.Errors != nil {
		errs = *s.Errors
	}
	late := b.RequestsUnsent + b.RequestsUnanswered
	total := b.Requests + late
	if total <= 0 {
		return []string{"no request completed in the step"}
	}
	var why []string
	if b.RequestsUnsent > 0 {
		why = append(why, fmt.Sprintf("%d requests were never sent: all %d connections were waiting for answers", b.RequestsUnsent, b.Connections))
	}
	if b.RequestsUnanswered > 0 {
		why = append(why, fmt.Sprintf("%d requests were still unanswered when the step ended", b.RequestsUnanswered))
	}
	rate := float64(b.Errors+late) / float64(total)
	if !errs.Holds(rate) {
		why = append(why, fmt.Sprintf("errors %s of %d requests (%s), limit %s", fmtRate(rate), total, errorSummary(b, late), errs))
	}
	for _, t := range s.Latency {
		tail := (100 - t.Percentile) / 100
		if float64(late)/float64(total) > tail {
			why = append(why, fmt.Sprintf("p%s: %d late requests alone are more than the %s the percentile leaves", fmtPct(t.Percentile), late, fmtRate(tail)))
			continue
		}
		v := percentileOf(b.Latency, t.Percentile)
		ok := v < t.MaxMs
		if t.Inclusive {
			ok = v <= t.MaxMs
		}
		if b.Requests == 0 {
			ok = false
		}
		if !ok {
			why = append(why, fmt.Sprintf("p%s %s above the bound %s", fmtPct(t.Percentile), fmtMs(v), fmtMs(t.MaxMs)))
		}
	}
	if b.RateAskedRPS > 0 && b.RateAchievedRPS < 0.9*b.RateAskedRPS {
		why = append(why, fmt.Sprintf("answered %.1f of the %.1f requests per second asked", b.RateAchievedRPS, b.RateAskedRPS))
	}
	return why
}

func errorSummary(b *results.Bench, late int64) string {
	var parts []string
	keys := make([]string, 0, len(b.ErrorsByClass))
	for k := range b.ErrorsByClass {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if n := b.ErrorsByClass[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if late > 0 {
		parts = append(parts, fmt.Sprintf("late %d", late))
	}
	if len(parts) == 0 {
		return "none by class"
	}
	return strings.Join(parts, ", ")
}

func fmtRate(r float64) string { return strconv.FormatFloat(100*r, 'g', 3, 64) + "%" }

func fmtMs(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
}
