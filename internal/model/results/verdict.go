package results

import (
	"encoding/json"
	"fmt"
)

// Statistics a tune's holdout is decided on (Holdout.Statistic).
const (
	StatThroughput = "throughput"
	StatCPU        = "stack CPU per request"
	StatCPUSpeed   = "stack CPU per request at the machine's speed"
)

// Outcomes of a Verdict.
const (
	VerdictFaster        = "faster"
	VerdictSlower        = "slower"
	VerdictNoDifference  = "no significant difference"
	VerdictNotValidated  = "not validated"
	verdictStartCPUBound = "the page is CPU-bound"
)

// Verdict is a tune's answer to "is the recommendation better than the
// start?": the holdout's deciding statistic, its ratio (> 1: the
// recommendation is better) with its interval, and one sentence. It is made
// once, from the holdout (HoldoutVerdict), stored in result.json and quoted
// word for word by the terminal, summary.txt, the HTML report, phptune
// report, compare and advise, so a run never says two things.
type Verdict struct {
	Outcome string `json:"outcome"` // VerdictFaster, VerdictSlower, VerdictNoDifference or VerdictNotValidated
	// Statistic is what it was decided on: StatThroughput, StatCPU or
	// StatCPUSpeed; Why says why that one (empty for throughput).
	Statistic string  `json:"statistic,omitempty"`
	Why       string  `json:"why,omitempty"`
	Ratio     float64 `json:"ratio,omitempty"`
	CILow     float64 `json:"ci_low,omitempty"`
	CIHigh    float64 `json:"ci_high,omitempty"`
	// Confidence of the interval (0.95, or stricter per look when the
	// holdout could add rounds).
	Confidence float64 `json:"confidence,omitempty"`
	// Sentence is the verdict as every place prints it.
	Sentence string `json:"sentence"`
}

// HoldoutVerdict decides the verdict of a holdout: on stack CPU per request
// (at the machine's speed when probed) when the holdout was decided on it,
// otherwise on throughput; faster when the interval lies above 1, slower
// when below, no significant difference otherwise. A nil holdout is "not
// validated".
func HoldoutVerdict(h *Holdout) Verdict {
	if h == nil || h.Rounds == 0 {
		return Verdict{Outcome: VerdictNotValidated, Sentence: "no holdout: the recommendation is not validated"}
	}
	v := Verdict{Statistic: StatThroughput, Ratio: h.ThroughputRatio, CILow: h.ThroughputCILow, CIHigh: h.ThroughputCIHi, Confidence: h.Confidence}
	switch {
	case h.Statistic == StatCPU && h.CPURatio > 0:
		v.Statistic, v.Ratio, v.CILow, v.CIHigh = StatCPU, h.CPURatio, h.CPUCILow, h.CPUCIHigh
		v.Why = verdictStartCPUBound + ": steal moves throughput, not the CPU each request costs"
	case h.Statistic == StatCPUSpeed && h.CPURatio > 0:
		v.Statistic, v.Ratio, v.CILow, v.CIHigh = StatCPUSpeed, h.CPURatio, h.CPUCILow, h.CPUCIHigh
		v.Why = verdictStartCPUBound + "; each run's CPU per request ÷ its speed probe"
	}
	if v.Confidence == 0 {
		v.Confidence = 0.95
	}
	figure := fmt.Sprintf("%.2f× [%.2f, %.2f] on %s", v.Ratio, v.CILow, v.CIHigh, v.Statistic)
	switch {
	case v.CILow > 1:
		v.Outcome = VerdictFaster
		v.Sentence = "the recommendation is faster than the start: " + figure + ", the interval lies above 1"
	case v.CIHigh < 1:
		v.Outcome = VerdictSlower
		v.Sentence = "the recommendation was slower than the start in the holdout: " + figure + ", the interval lies below 1; keep the start"
	default:
		v.Outcome = VerdictNoDifference
		v.Sentence = "no significant difference from the start in the holdout: " + figure + ", the interval includes 1"
	}
	return v
}

// TheVerdict is the tune's stored verdict, or for a result stored before
// verdicts were, the one its holdout gives.
func (t *Tune) TheVerdict() Verdict {
	if t.Verdict != nil {
		return *t.Verdict
	}
	return HoldoutVerdict(t.Holdout)
}

// QuoteTune reads a tune's result.json and quotes its verdict.
func QuoteTune(resultJSON []byte) (*TuneQuote, error) {
	var t Tune
	if err := json.Unmarshal(resultJSON, &t); err != nil {
		return nil, err
	}
	if t.Kind != KindTune {
		return nil, fmt.Errorf("not a tune's result (kind %q)", t.Kind)
	}
	return &TuneQuote{ID: t.ID, Verdict: t.TheVerdict()}, nil
}
