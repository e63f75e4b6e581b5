package observe

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// MeasureHere observes the stack cfg describes while run loads it from
// this process, and returns run's result with the observation attached as
// b.Observation. It is what one bench or one tuning trial needs (see
// labstack.Observe for a lab's configuration): this process is the
// "generator" group, every other process the "other" group, samples every
// interval (1 s when zero) from before run is called until it returns.
//
// Derived is computed over the measured part only: from the moment run was
// called plus b.WarmupS (the warm-up is left out) until run returned, with
// b.Requests as the request count (CPU per request uses the mean CPU rate
// in that window times b.DurationS). Groups[].PSSB of every sample is the
// group's summed PSS.
//
// When run returns a result together with an error (an interrupted run)
// the result is returned with its observation and the error. When run
// returns no result, MeasureHere returns run's error.
func MeasureHere(ctx context.Context, cfg Config, interval time.Duration, run func(ctx context.Context) (*results.Bench, error)) (*results.Bench, error) {
	cfg.Roots = append(cfg.Roots, Root{Component: ComponentGenerator, PID: os.Getpid()})
	cfg.Others = true
	cfg.Interval = interval
	return MeasureConfig(ctx, cfg, run)
}

// MeasureConfig is MeasureHere with an explicit observer configuration (for a
// stack that is not a lab, or a test). Add the generator's root to cfg.Roots
// yourself.
func MeasureConfig(ctx context.Context, cfg Config, run func(ctx context.Context) (*results.Bench, error)) (*results.Bench, error) {
	o, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := o.Start(ctx); err != nil {
		return nil, err
	}
	from := o.Elapsed()
	b, runErr := run(ctx)
	to := o.Elapsed()
	obs := o.Stop()
	if b == nil {
		if runErr == nil {
			runErr = errors.New("the load run returned no result")
		}
		return nil, runErr
	}
	Derive(obs, Window{FromS: from + b.WarmupS, ToS: to, Requests: b.Requests, DurationS: b.DurationS})
	b.Observation = obs
	return b, runErr
}
