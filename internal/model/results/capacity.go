package results

import "time"

// Capacity is one capacity search (phptune capacity, or one configuration
// of a capacity tune): the highest request rate the stack sustained within
// a latency SLO and an error limit in the open model, found by rate steps
// and bisection, with every step kept.
type Capacity struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // always "capacity"
	ID            string    `json:"id"`
	StartedAt     time.Time `json:"started_at"`
	Command       string    `json:"command,omitempty"`
	// Label names the configuration in a capacity tune ("start",
	// "recommended"); empty for phptune capacity.
	Label    string `json:"label,omitempty"`
	Target   string `json:"target"`
	App      string `json:"app,omitempty"`
	Workload string `json:"workload,omitempty"`
	// Config is the stack's knob settings during the search.
	Config map[string]string `json:"config,omitempty"`
	// SLO is the objective as given, in its canonical form
	// ("p99<500ms,errors<=0%"); its terms are in SLOTerms.
	SLO      string    `json:"slo"`
	SLOTerms []SLOTerm `json:"slo_terms"`
	// MaxErrorRate is the highest error rate a step may have (0.001 =
	// 0.1%), late requests (never sent or unanswered) included.
	MaxErrorRate float64 `json:"max_error_rate"`

	// CapacityRPS is the highest asked rate that passed, every
	// re-measurement included; FirstFailRPS the lowest rate above it that
	// failed (0: none failed, the search stopped at MaxRateRPS). The
	// capacity lies between them.
	CapacityRPS  float64 `json:"capacity_rps"`
	FirstFailRPS float64 `json:"first_fail_rps,omitempty"`
	// Outcome says how the search ended: "bracketed" (the two rates are
	// within the tolerance), "not converged" (steps or time ran out
	// first), "below minimum" (MinRateRPS already failed), "above
	// maximum" (MaxRateRPS passed).
	Outcome string `json:"outcome"`
	// Confirmed is set when the final re-measurement of both bracket rates
	// agreed with their first verdicts (the drift check).
	Confirmed bool `json:"confirmed"`

	// The plan: the first rate and how it was chosen, the bounds, the
	// growth factor of the ramp, the bracket's relative tolerance, and
	// each step's warm-up and measured duration (seconds).
	StartRateRPS float64 `json:"start_rate_rps"`
	StartFrom    string  `json:"start_from,omitempty"`
	MinRateRPS   float64 `json:"min_rate_rps"`
	MaxRateRPS   float64 `json:"max_rate_rps,omitempty"`
	Growth       float64 `json:"growth"`
	Tolerance    float64 `json:"tolerance"`
	StepWarmupS  float64 `json:"step_warmup_s"`
	StepS        float64 `json:"step_s"`
	// StepRule says why the steps are that long.
	StepRule string `json:"step_rule,omitempty"`
	// Engine is the load generator when not phptune's own ("locust"),
	// with its version and local workers; its latencies are then not
	// corrected for coordinated omission (Warnings says so).
	Engine        string `json:"engine,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	Workers       int    `json:"workers,omitempty"`

	Steps       []CapacityStep `json:"steps"`
	Environment *Environment   `json:"environment,omitempty"`
	Warnings    []string       `json:"warnings,omitempty"`
	// Blocked are the connections a sealed site lab's code tried to open
	// outside the lab during the search (see Bench.Blocked).
	Blocked []Blocked `json:"blocked,omitempty"`
	WallS   float64   `json:"wall_s"`
}

// SLOTerm is one latency bound of an SLO: the Percentile of latencies
// (from each request's intended send time) must be below MaxMs (or at most
// MaxMs when Inclusive).
type SLOTerm struct {
	Percentile float64 `json:"percentile"`
	MaxMs      float64 `json:"max_ms"`
	Inclusive  bool    `json:"inclusive,omitempty"`
}

// CapacityStep is one open-model run at one rate.
type CapacityStep struct {
	N int `json:"n"`
	// Phase is "ramp" (geometric steps up, or down from a failing first
	// rate), "bisect", "repeat" (the same rate again: a failure under CPU
	// steal, or a tie between earlier verdicts) or "confirm" (the final
	// re-measurement of the bracket).
	Phase       string  `json:"phase"`
	RateRPS     float64 `json:"rate_rps"` // asked
	AchievedRPS float64 `json:"achieved_rps"`
	Pass        bool    `json:"pass"`
	// FailReasons say which term failed and by how much.
	FailReasons []string `json:"fail_reasons,omitempty"`
	// StealPct is the highest CPU steal the observer saw in the step.
	StealPct float64 `json:"steal_pct,omitempty"`
	Bench    *Bench  `json:"bench,omitempty"`
}

// TuneCapacity is a capacity tune's verdict: the start's and the
// recommendation's capacity searches and the ratio of their capacities,
// with the range the two brackets allow.
type TuneCapacity struct {
	SLO         string    `json:"slo"`
	Start       *Capacity `json:"start,omitempty"`
	Recommended *Capacity `json:"recommended,omitempty"`
	// Ratio is recommended ÷ start capacity; RatioLow and RatioHigh the
	// lowest and highest ratio the brackets allow (recommended's lower
	// end over start's upper end, and the other way; 0 when an end is
	// unknown).
	Ratio     float64 `json:"capacity_ratio,omitempty"`
	RatioLow  float64 `json:"capacity_ratio_low,omitempty"`
	RatioHigh float64 `json:"capacity_ratio_high,omitempty"`
	// BudgetS is the time the tune reserved for the capacity searches.
	BudgetS float64 `json:"budget_s,omitempty"`
}
