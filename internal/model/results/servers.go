package results

import "time"

// KindServers is the kind of a servers comparison (phptune servers).
const KindServers = "servers"

// Servers is one run of phptune servers: each web server tuned under an
// equal share of the time budget, then every tuned server and each
// server's default configuration measured in interleaved rounds, each run
// in fresh processes. Configs hold the measured figures; the paired
// ratios against the best and the diagnoses are computed from them.
type Servers struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // always "servers"
	ID            string    `json:"id"`
	StartedAt     time.Time `json:"started_at"`
	Command       string    `json:"command,omitempty"`
	App           string    `json:"app"`
	Workload      string    `json:"workload"`
	Connections   int       `json:"connections"`
	// TimeBudgetS is the whole run's budget; each server's tune got
	// TuneBudgetS of it, the interleaved comparison the rest.
	TimeBudgetS float64 `json:"time_budget_s"`
	TuneBudgetS float64 `json:"tune_budget_s"`
	// Rounds planned and run of the interleaved comparison, each run
	// measured for DurationS after WarmupS.
	Rounds    int            `json:"rounds"`
	RoundsRun int            `json:"rounds_run"`
	DurationS float64        `json:"duration_s"`
	WarmupS   float64        `json:"warmup_s"`
	Servers   []ServerTune   `json:"servers"`
	Configs   []ServerConfig `json:"configs"`
	// Best is the label of the configuration with the highest median
	// throughput; every VsBest ratio is against it.
	Best      string      `json:"best,omitempty"`
	Diagnoses []Diagnosis `json:"diagnoses,omitempty"`
	// NotCompared are servers of the default list (no --servers) that
	// could not run here, each with why and how to install it.
	NotCompared []NotCompared `json:"not_compared,omitempty"`
	// Interrupted is set when the run was stopped (Ctrl-C) before its
	// end: the figures are what was measured so far.
	Interrupted bool         `json:"interrupted,omitempty"`
	Environment *Environment `json:"environment,omitempty"`
	Warnings    []string     `json:"warnings,omitempty"`
	WallS       float64      `json:"wall_s"`
}

// ServerTune is one server's tune within a servers run.
type ServerTune struct {
	Server string `json:"server"`
	// TuneID is the tune's run in the results database (phptune report
	// TUNE_ID renders it on its own).
	TuneID string  `json:"tune_id,omitempty"`
	WallS  float64 `json:"wall_s"`
	Trials int     `json:"trials"`
	// Recommended is the tuned configuration; Changes what differs from
	// the server's default, KNOB=VALUE.
	Recommended map[string]string `json:"recommended_config,omitempty"`
	Changes     []string          `json:"changes,omitempty"`
	// Holdout is the tune's own validation (start against recommended).
	Holdout *Holdout `json:"holdout,omitempty"`
	// Files are the recommendation in the server's own syntax (file name
	// -> contents), as phptune tune writes them; OutDir where they went.
	Files  map[string]string `json:"files,omitempty"`
	OutDir string            `json:"out_dir,omitempty"`
	// TunedVsDefault is tuned ÷ default throughput from the interleaved
	// comparison, paired by round, with its 95% interval; nil when not
	// both were measured (or tuned is the default).
	TunedVsDefault *Ratio `json:"tuned_vs_default,omitempty"`
	// Failed says why the server has no tuned configuration.
	Failed   string   `json:"failed,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Ratio is B ÷ A of paired rounds with its confidence interval.
type Ratio struct {
	Ratio      float64 `json:"ratio"`
	Low        float64 `json:"ci_low"`
	High       float64 `json:"ci_high"`
	Confidence float64 `json:"confidence"`
	Rounds     int     `json:"rounds"`
}

// Interval is a figure's estimate over rounds with its confidence
// interval (geometric mean and a t interval on the logs).
type Interval struct {
	Value float64 `json:"value"`
	Low   float64 `json:"ci_low"`
	High  float64 `json:"ci_high"`
}

// Roles of a configuration in a servers run.
const (
	RoleTuned   = "tuned"
	RoleDefault = "default"
	// RoleBoth: the tune recommended the server's default unchanged, so
	// one configuration stands for both.
	RoleBoth = "tuned = default"
	// RoleAdded: a configuration given on the command line (--add).
	RoleAdded = "added"
)

// ServerConfig is one configuration measured in the interleaved rounds.
type ServerConfig struct {
	Label  string            `json:"label"`
	Server string            `json:"server"`
	Role   string            `json:"role"`
	Config map[string]string `json:"config"`
	// Failed says why it was not measured (it did not start); it is kept
	// in the table, never dropped.
	Failed string `json:"failed,omitempty"`
	Rounds int    `json:"rounds"`
	// Rank is 1 for the best median throughput; 0 when not measured.
	Rank int `json:"rank,omitempty"`
	// Per round, in round order (successful runs only).
	RPSByRound []float64 `json:"throughput_rps_by_round,omitempty"`
	P99ByRound []float64 `json:"latency_p99_ms_by_round,omitempty"`
	// Throughput and P99Ms over the rounds with 95% intervals.
	Throughput Interval `json:"throughput_rps"`
	P99Ms      Interval `json:"latency_p99_ms"`
	ErrorRate  float64  `json:"error_rate"`
	// VsBest is this configuration's throughput ÷ the best's, paired by
	// round; P99VsBest the same for p99 (> 1: slower responses).
	VsBest    *Ratio `json:"vs_best,omitempty"`
	P99VsBest *Ratio `json:"p99_vs_best,omitempty"`
	// CPU per request (milliseconds, medians over rounds) by role: the
	// web server's processes, PHP's (with mod_php the Apache children
	// that run it), the database; Stack is every process of the stack.
	CPUWebMs   float64 `json:"cpu_web_ms_per_request"`
	CPUPHPMs   float64 `json:"cpu_php_ms_per_request"`
	CPUDBMs    float64 `json:"cpu_db_ms_per_request"`
	CPUStackMs float64 `json:"cpu_stack_ms_per_request"`
	// StackCores and PHPCores are the CPU the stack and PHP used, in
	// cores (CPU per request × throughput), medians over rounds.
	StackCores float64 `json:"stack_cores"`
	PHPCores   float64 `json:"php_cores"`
	// Workers is the most PHP worker processes seen; WorkerPSS the median
	// worker's peak PSS (p50 across workers), TotalPSS the stack's peak
	// PSS; medians over rounds.
	Workers      int   `json:"php_workers"`
	WorkerPSSB   int64 `json:"worker_pss_bytes"`
	WorkerPSSP95 int64 `json:"worker_pss_p95_bytes"`
	TotalPSSB    int64 `json:"total_pss_bytes"`
	// Imbalance is the observer's WorkerImbalance, the busiest PHP
	// worker's share of its pool's CPU (1/Workers is even), median over
	// rounds. WorkerCPUPct is each worker's mean CPU in percent of one
	// core, busiest first, in the round of median throughput.
	Imbalance    float64   `json:"worker_imbalance"`
	WorkerCPUPct []float64 `json:"worker_cpu_pct,omitempty"`
	// Queueing: rounds in which requests waited (a kernel accept queue,
	// php-fpm's listen queue or Unit's router held them), the most that
	// waited at once, and the share of samples with every PHP worker busy.
	QueuedRounds int     `json:"queued_rounds"`
	MaxQueued    int64   `json:"max_queued"`
	AllBusyShare float64 `json:"all_busy_share"`
	// MachineIdlePct is the machine's idle CPU during the runs (median).
	MachineIdlePct float64 `json:"machine_idle_pct"`
	// Warnings are the observer's and the runs' own, deduplicated.
	Warnings []string `json:"warnings,omitempty"`
}

// Diagnosis explains in plain words why a configuration lost against the
// best, when the figures show it.
type Diagnosis struct {
	Label string `json:"label"`
	// Cause is "imbalance", "queueing", "cpu per request" or
	// "undetermined".
	Cause string `json:"cause"`
	Text  string `json:"text"`
}

// NotCompared is a server left out of a default list.
type NotCompared struct {
	Server string `json:"server"`
	Reason string `json:"reason"`
}
