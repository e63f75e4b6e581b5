package tune

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// Options are a tune's inputs. They are stored with the run, so --resume
// needs only the run's ID; keep them JSON-serialisable.
type Options struct {
	ID       string `json:"id"` // empty: made from the start time
	Command  string `json:"command,omitempty"`
	App      string `json:"app,omitempty"`
	Workload string `json:"workload,omitempty"`
	// Lab and DocRoot record how the caller built the stack (a lab the
	// user runs, or a lab of its own for App or DocRoot), so --resume can
	// build it again. The tuner does not read them.
	Lab     string `json:"lab,omitempty"`
	DocRoot string `json:"docroot,omitempty"`
	// Site is --site: the site of the host whose sealed lab of its own
	// the tune ran on, as it was found (nil for any other stack).
	Site *SiteRecord `json:"site,omitempty"`
	// User is the account the lab of its own runs php-fpm as (--user);
	// CPUs and MemoryMaxB its caps (--cpus, --memory-max).
	User       string `json:"user,omitempty"`
	CPUs       string `json:"cpus,omitempty"`
	MemoryMaxB int64  `json:"memory_max_bytes,omitempty"`
	// OutDir is where the caller writes the run's files (absolute), kept so
	// that --resume writes them where the first session would have.
	OutDir string `json:"out_dir,omitempty"`
	// Expect is the --expect regular expression every 2xx body must match.
	Expect string `json:"expect,omitempty"`
	// Host is the Host header every request carries (--host: the site's
	// own name); "" the lab's address.
	Host      string `json:"host,omitempty"`
	Objective string `json:"objective,omitempty"` // "throughput" (default), "latency" or "capacity"
	// SLO is the capacity objective's SLO in package capacity's grammar
	// ("p99<500ms"); the error limit is Limits.MaxErrorRate unless it has
	// an errors term. Unused by the other objectives.
	SLO   string      `json:"slo,omitempty"`
	Start knob.Config `json:"start,omitempty"` // nil: the distro defaults
	// StartFrom is StartLive when Start is a live site's configuration
	// (production's pool and php.ini, see UseLiveStart): tables call it
	// "live" and the distro's defaults are measured beside it as a
	// baseline. "" for the distro defaults or a knob file.
	StartFrom string `json:"start_from,omitempty"`
	// Conns is the workload's concurrency (default 50).
	Conns int `json:"conns,omitempty"`
	// Cores of the machine under test (default runtime.NumCPU()).
	Cores  int            `json:"cores,omitempty"`
	Limits results.Limits `json:"limits"`
	// TimeBudget bounds the whole tune (0: none). The search stops early
	// to leave time for the holdout.
	TimeBudget time.Duration `json:"time_budget_ns,omitempty"`
	// Duration and Warmup of each trial (default 10 s and 3 s).
	Duration time.Duration `json:"duration_ns,omitempty"`
	Warmup   time.Duration `json:"warmup_ns,omitempty"`
	// ResetBetween resets the stack's state before every measurement
	// (writing workloads: a comments table that grows slows every later
	// measurement).
	ResetBetween bool `json:"reset_between,omitempty"`
	// DriftRuns is how often the start configuration is measured before
	// the search (default 2); the holdout re-measures it at the end.
	DriftRuns int `json:"drift_runs,omitempty"`
	// HoldoutRounds of start vs recommended (default 4).
	HoldoutRounds int `json:"holdout_rounds,omitempty"`
	// HoldoutMaxRounds caps the rounds a holdout whose interval is
	// undecided (it includes 1 and is wider than the equivalence margin)
	// may grow to while the time budget allows (default 4 × HoldoutRounds;
	// equal to HoldoutRounds: never more). How many of them it may use is
	// decided as it starts (HoldoutRoundsGranted); every look is then at
	// the stricter per-look confidence of stats.Compare for that many.
	HoldoutMaxRounds int `json:"holdout_max_rounds,omitempty"`
	// HoldoutRoundsGranted is the most rounds the holdout was granted
	// when it started (see session.holdoutRounds), stored with the run so
	// that a resumed holdout looks as often; nil until then.
	HoldoutRoundsGranted *int `json:"holdout_rounds_granted,omitempty"`
	// Baselines are the rules of thumb (KnownBaselines) measured in the
	// holdout beside start and recommended when they fit the memory
	// budget and the time budget allows; nil: none (runs stored before
	// they existed). What the calculator formula would set is reported
	// either way.
	Baselines []string `json:"baselines,omitempty"`
	// MemAvailableB is the machine's MemAvailable at the start, for the
	// calculator formula; 0: the largest the observer saw in the drift
	// trials.
	MemAvailableB int64 `json:"mem_available_bytes,omitempty"`
	// Strategy is "domain" (default) or "grid".
	Strategy string `json:"strategy,omitempty"`
	// Challenges are the categorical challenges to try, each a name from
	// search.KnownChallenges or knob assignments separated by ";" (see
	// ParseChallenge); nil: the defaults (with the write challenges when
	// ResetBetween says the workload writes).
	Challenges []string `json:"challenges,omitempty"`
	// CategoricalTrials is the domain strategy's budget for the
	// categorical rounds (0: its default).
	CategoricalTrials int `json:"categorical_trials,omitempty"`
	// SearchTrials, when > 0, caps the search's trials (the drift,
	// holdout and curve trials are not counted) and the race gets no
	// spare trials; 0: the race may also spend what the time budget
	// spares once every planned phase is counted (search.Options.ExtraTrials).
	SearchTrials int `json:"search_trials,omitempty"`
	// RaceExtraTrials is what the time budget granted the race when it
	// started, stored with the run so that a resumed run races the same
	// rounds; nil until then.
	RaceExtraTrials *int `json:"race_extra_trials,omitempty"`
	// CurveConns are the concurrencies, besides Conns, at which the start
	// and the recommended configuration are measured once each at the end
	// (nil: Conns/4, Conns/2 and 2×Conns). NoCurve skips that phase.
	CurveConns []int `json:"curve_conns,omitempty"`
	NoCurve    bool  `json:"no_curve,omitempty"`
}

// UseLiveStart makes live, a site's configuration as production runs it
// (site.LiveStart), the tune's start: "before" in every table is
// production's, and the distro's defaults (BaselineDistro) are measured
// beside it in the holdout. The CLI calls it for --site.
func (o *Options) UseLiveStart(live knob.Config) {
	o.Start, o.StartFrom = live.Clone(), StartLive
	if !slices.Contains(o.Baselines, BaselineDistro) {
		o.Baselines = append([]string{BaselineDistro}, o.Baselines...)
	}
}

// DefaultCurveConns are the concurrencies of the curve phase for a
// workload at conns: a quarter, a half and twice, without conns itself
// (the holdout measured it) and without duplicates.
func DefaultCurveConns(conns int) []int {
	var out []int
	for _, n := range []int{max(1, conns/4), max(1, conns/2), 2 * conns} {
		if n != conns && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func (o *Options) defaults(now time.Time) error {
	if o.Start == nil {
		o.Start = knob.Defaults()
	}
	if err := o.Start.Validate(); err != nil {
		return fmt.Errorf("start configuration: %w", err)
	}
	if o.ID == "" {
		o.ID = now.UTC().Format("20060102-150405")
	}
	if o.Objective == "" {
		o.Objective = "throughput"
	}
	switch o.Objective {
	case "throughput", "latency":
	case ObjectiveCapacity:
		if _, _, err := o.capacitySLO(); err != nil {
			return err
		}
		// The capacity searches' latency-against-rate curves take the
		// closed-model curve's place and time.
		o.NoCurve = true
	default:
		return fmt.Errorf("objective %q: want throughput, latency or capacity", o.Objective)
	}
	if o.Conns <= 0 {
		o.Conns = 50
	}
	if o.Cores <= 0 {
		o.Cores = runtime.NumCPU()
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = 3 * time.Second
	}
	if o.DriftRuns <= 0 {
		o.DriftRuns = 2
	}
	if o.HoldoutRounds <= 0 {
		o.HoldoutRounds = 4
	}
	if o.HoldoutRounds < 2 {
		o.HoldoutRounds = 2
	}
	if o.HoldoutMaxRounds == 0 {
		o.HoldoutMaxRounds = 4 * o.HoldoutRounds
	}
	o.HoldoutMaxRounds = max(o.HoldoutMaxRounds, o.HoldoutRounds)
	if err := CheckBaselines(o.Baselines); err != nil {
		return err
	}
	if o.NoCurve {
		o.CurveConns = nil
	} else if o.CurveConns == nil {
		o.CurveConns = DefaultCurveConns(o.Conns)
	}
	for _, n := range o.CurveConns {
		if n <= 0 {
			return fmt.Errorf("curve concurrency %d: want connections > 0", n)
		}
	}
	if o.Strategy == "" {
		o.Strategy = "domain"
	}
	if o.Strategy != "domain" && o.Strategy != "grid" {
		return fmt.Errorf("strategy %q: want domain or grid", o.Strategy)
	}
	if _, err := Challenges(o.Challenges); err != nil {
		return err
	}
	return nil
}

// Progress is one update for a progress display.
type Progress struct {
	RunID     string
	Phase     string
	Trial     int // trials done so far, this one included
	Total     int // estimate
	Label     string
	Reused    bool // taken from the database on resume, not measured
	Status    string
	RPS       float64
	BestRPS   float64 // best usable throughput measured so far
	BestLabel string
	Elapsed   time.Duration
	Left      time.Duration // of the time budget; 0 without one
	// LogErrors names the failed requests the servers' error logs
	// explain, by class ("nginx_fpm_backlog_full 312×502"); "" for none.
	LogErrors string
}

// InterruptedError is returned when the context is cancelled mid-tune.
// Every finished trial is stored; Resume continues the run.
type InterruptedError struct {
	RunID  string
	Trials int
	Cause  error
}

// Error says how to resume.
func (e *InterruptedError) Error() string {
	return fmt.Sprintf("tune %s interrupted after %d trials (%v); every finished trial is saved, continue with: phptune tune --resume %s",
		e.RunID, e.Trials, e.Cause, e.RunID)
}

// Unwrap returns the cancellation's cause.
func (e *InterruptedError) Unwrap() error { return e.Cause }

// ErrResumeMismatch means the stored trials do not match what the tune
// asks for now (a different phptune version or edited database).
var ErrResumeMismatch = errors.New("stored trials do not match this tune")
