package results

import "github.com/phptune/phptune/internal/model/knob"

// CompareConfig is one configuration of a comparison, round by round.
type CompareConfig struct {
	Label  string      `json:"label"`
	Config knob.Config `json:"config"`
	RPS    []float64   `json:"throughput_rps_by_round"`
	P99    []float64   `json:"latency_p99_ms_by_round"`
	Errors []float64   `json:"error_rate_by_round"`
	// PHPCPUPerRequest is PHP's CPU seconds per request by round
	// (observe.PHPCPUPerRequest: the PHP workers — php-fpm's, Apache's
	// children with mod_php, Unit's application processes — and php-fpm's
	// master).
	PHPCPUPerRequest []float64 `json:"php_cpu_s_per_request_by_round"`
	// SpeedProbeMs is the machine-speed probe's reading of each round
	// (Derived.SpeedProbeMs; 0 none).
	SpeedProbeMs []float64 `json:"speed_probe_ms_by_round"`
	// Requests are the requests each round completed (absent in results
	// stored before they were kept).
	Requests []int64 `json:"requests_by_round,omitempty"`
	// Engines are the load generator of each round: phptune or locust.
	Engines []string `json:"engine_by_round,omitempty"`
	Failed  string   `json:"failed,omitempty"`
	// Backlogs are the configuration's listen backlogs as asked and as
	// the kernel gave them.
	Backlogs []Backlog `json:"backlogs,omitempty"`
	// PHPErrors are PHP's own messages the configuration's runs logged,
	// summed over its rounds.
	PHPErrors *PHPErrors `json:"php_errors,omitempty"`
	// FromTune is the tune whose recommendation this configuration is
	// (its recommended.knobs, with the result.json beside it), with that
	// tune's verdict as the tune stated it.
	FromTune *TuneQuote `json:"from_tune,omitempty"`
}

// TuneQuote is a stored tune's verdict quoted by another command.
type TuneQuote struct {
	ID      string  `json:"id"`
	Verdict Verdict `json:"verdict"`
}

// Compare is what phptune compare prints with --json: configurations
// measured side by side in interleaved rounds.
type Compare struct {
	App         string `json:"app"`
	Workload    string `json:"workload"`
	Connections int    `json:"connections"`
	Rounds      int    `json:"rounds"`
	// Engine is the load generator (--engine: phptune or locust), with
	// Locust's version and local workers.
	Engine        string          `json:"engine,omitempty"`
	EngineVersion string          `json:"engine_version,omitempty"`
	Workers       int             `json:"workers,omitempty"`
	DurationS     float64         `json:"duration_s"`
	Configs       []CompareConfig `json:"configs"`
	Summary       []CompareRow    `json:"summary"`
	// Builds name the PHP builds (php.build) the configurations ran.
	Builds []PHPBuild `json:"php_builds,omitempty"`
	// KernelLimits are the host's (package sysctl); each configuration's
	// backlogs, asked and given, are in its Backlogs.
	KernelLimits *KernelLimits `json:"kernel_limits,omitempty"`
	// Blocked are the connections a sealed site lab's code tried to open
	// outside the lab over the whole comparison, refused by the seal.
	Blocked []Blocked `json:"blocked,omitempty"`
}

// CompareRow is one configuration's line of a comparison: medians, and
// ratios against the first configuration.
type CompareRow struct {
	Label          string  `json:"label"`
	MedianRPS      float64 `json:"throughput_rps_median"`
	MedianP99Ms    float64 `json:"latency_p99_ms_median"`
	MeanErrorRate  float64 `json:"error_rate_mean"`
	RatioRPS       float64 `json:"throughput_ratio"` // against the first config, paired by round
	RatioRPSLow    float64 `json:"throughput_ratio_ci_low"`
	RatioRPSHigh   float64 `json:"throughput_ratio_ci_high"`
	RatioP99       float64 `json:"p99_ratio"`
	PHPCPUPerReqMs float64 `json:"php_cpu_ms_per_request_median"`
	// PHPSpeedRatio is the first config's PHP CPU per request ÷ this one's,
	// each divided by its run's speed-probe reading (> 1: this one is
	// faster at the same machine speed), paired by round, with its 95% CI
	// (0: none).
	PHPSpeedRatio     float64 `json:"php_cpu_speed_ratio,omitempty"`
	PHPSpeedRatioLow  float64 `json:"php_cpu_speed_ratio_ci_low,omitempty"`
	PHPSpeedRatioHigh float64 `json:"php_cpu_speed_ratio_ci_high,omitempty"`
}
