// Package servercompare compares web servers the only fair way, to answer
// "is it the server or the setup?": each server is
// tuned first under an equal share of the time budget (package tune), then
// every tuned server and each server's default configuration are measured
// side by side in interleaved rounds, each run in fresh processes (package
// interleave), and the results say which is fastest with confidence
// intervals and, in plain words, why a server lost when the observer's
// figures show it: one PHP worker doing most of the work (imbalance) or
// requests waiting for a worker while CPU stood idle (queueing).
//
// The pure parts — the budget split (Budget), the figures of a run
// (Figures), the summary with its ranking and paired ratios (Summarize)
// and the diagnosis (Diagnose) — do no I/O. Run drives a comparison
// through the functions of Env; RunLab is Env for a real lab.
package servercompare

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
)

// Estimates the budget split rests on. They are deliberately generous: a
// tune that gets less than it needs stops its search early and says so,
// and the interleaved comparison runs all its rounds whatever they cost.
const (
	// RunOverhead is the time a run costs beyond its warm-up and measured
	// part: restarting the web server and PHP with the configuration
	// (fresh processes), checking the page, reading the caches after it.
	RunOverhead = 2 * time.Second
	// SetupTime is bringing the lab up once (a WordPress lab: ~5 s here)
	// and taking it down.
	SetupTime = 15 * time.Second
	// MinTuneTrials is the fewest trials a tune can do something with:
	// the start measured twice (drift), four search trials (knee and pool
	// size) and a holdout of two rounds of two.
	MinTuneTrials = 10
)

// Budget is how a servers run spends its time: every server's tune gets an
// equal share of what the lab's set-up and the interleaved comparison
// leave.
type Budget struct {
	Total   time.Duration
	Servers int
	// Configs is how many configurations the comparison measures per
	// round at most: each server's tuned and default, plus added ones
	// (a tune that keeps the default makes one fewer).
	Configs int
	Rounds  int
	// Duration and Warmup of each comparison run.
	Duration, Warmup time.Duration
	// TrialDuration and TrialWarmup of each tune trial.
	TrialDuration, TrialWarmup time.Duration
}

// CompareTime estimates the interleaved comparison's wall time.
func (b Budget) CompareTime() time.Duration {
	return time.Duration(b.Rounds*b.Configs) * (b.Duration + b.Warmup + RunOverhead)
}

// MinTune is the least time one tune is given.
func (b Budget) MinTune() time.Duration {
	return MinTuneTrials * (b.TrialDuration + b.TrialWarmup + RunOverhead)
}

// Need is the smallest total budget for these servers and settings.
func (b Budget) Need() time.Duration {
	return SetupTime + b.CompareTime() + time.Duration(b.Servers)*b.MinTune()
}

// BudgetError is a time budget too small for the servers and settings
// asked: Need is the least that would do.
type BudgetError struct {
	Budget Budget
	Need   time.Duration
}

func (e *BudgetError) Error() string {
	b := e.Budget
	servers := fmt.Sprintf("%d servers", b.Servers)
	if b.Servers == 1 {
		servers = "1 server"
	}
	return fmt.Sprintf("--time-budget %s is too short for %s: the interleaved comparison takes about %s (%d rounds × up to %d configurations × %s each) and each tune needs at least %s (%d trials of %s); give --time-budget %s or more, fewer --servers, fewer --rounds or shorter runs",
		b.Total, servers, b.CompareTime(), b.Rounds, b.Configs, b.Duration+b.Warmup+RunOverhead, b.MinTune(), MinTuneTrials, b.TrialDuration+b.TrialWarmup+RunOverhead, e.Suggest())
}

// Suggest is the least budget that would do, rounded up to 30 seconds.
func (e *BudgetError) Suggest() time.Duration { return roundUp(e.Need) }

// roundUp rounds d up to a whole 30 seconds, for a budget to type.
func roundUp(d time.Duration) time.Duration {
	const step = 30 * time.Second
	return (d + step - 1) / step * step
}

// PerTune is each server's tune budget: an equal share of what the lab's
// set-up and the comparison leave. A budget that leaves less than MinTune
// per server is a *BudgetError naming the least that would do.
func (b Budget) PerTune() (time.Duration, error) {
	if b.Servers < 1 || b.Rounds < 1 || b.Configs < 1 || b.Duration <= 0 || b.Warmup < 0 || b.TrialDuration <= 0 || b.TrialWarmup < 0 {
		return 0, fmt.Errorf("servers: budget needs at least one server, round, configuration and positive durations: %+v", b)
	}
	left := b.Total - SetupTime - b.CompareTime()
	per := left / time.Duration(b.Servers)
	if left <= 0 || per < b.MinTune() {
		return 0, &BudgetError{Budget: b, Need: b.Need()}
	}
	return per, nil
}

// ErrUnknownServer is a --servers value that is no server knob value.
var ErrUnknownServer = errors.New("unknown server")

// ParseServers reads --servers (comma-separated): every name must be a
// value of the server knob (knob.Servers) and appear once. Nothing is
// dropped: an unknown name is an error naming the valid ones.
func ParseServers(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(knob.Servers, s) {
			return nil, fmt.Errorf("%w %q: choose from %s", ErrUnknownServer, s, strings.Join(knob.Servers, ", "))
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("server %s is named twice", s)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no server named: choose from %s", strings.Join(knob.Servers, ", "))
	}
	return out, nil
}

// DefaultConfig is server's default configuration: the distro's defaults
// with the server knob set, what a lab up --server runs.
func DefaultConfig(server string) knob.Config {
	c := knob.Defaults()
	c[knob.ServerKnob] = server
	return c
}

// Changes lists what rec changes from server's default as KNOB=VALUE,
// leaving out knobs the configuration does not use (another server's, the
// spares of a static pool).
func Changes(rec knob.Config) []string {
	var out []string
	for _, ch := range knob.Diff(DefaultConfig(rec.Server()), rec) {
		if ch.Knob == knob.ServerKnob || !rec.Relevant(ch.Knob) {
			continue
		}
		out = append(out, ch.Knob+"="+ch.To)
	}
	return out
}
