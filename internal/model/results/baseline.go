package results

// Baseline is a rule of thumb's configuration (the php-fpm calculators'
// formula, 2 × cores workers) set beside the tune's recommendation: what
// the rule would have set and, when it was measured in the holdout, the
// recommendation's throughput against it.
type Baseline struct {
	Name string `json:"name"` // "calculator", "2xcores"
	// Rule is the rule with the figures it used, e.g. "pm.max_children =
	// 0.9 × MemAvailable 23.1 GiB / average worker RSS 12.9 MiB".
	Rule string `json:"rule"`
	// Settings are the knobs the rule sets, as KNOB=VALUE.
	Settings      []string          `json:"settings,omitempty"`
	Config        map[string]string `json:"config,omitempty"`
	PredictedMemB int64             `json:"predicted_memory_bytes,omitempty"`
	// NotMeasured says why the holdout did not measure it (it does not fit
	// the memory budget, the time budget, not asked); empty when measured.
	NotMeasured string `json:"not_measured,omitempty"`
	// Rounds paired with the recommendation, and recommended/baseline
	// throughput and p99 with the throughput's interval.
	Rounds      int     `json:"rounds,omitempty"`
	Ratio       float64 `json:"throughput_ratio,omitempty"`
	CILow       float64 `json:"throughput_ci_low,omitempty"`
	CIHigh      float64 `json:"throughput_ci_high,omitempty"`
	Confidence  float64 `json:"confidence,omitempty"`
	P99Ratio    float64 `json:"p99_ratio,omitempty"`
	BaselineRPS float64 `json:"baseline_rps,omitempty"`
}
