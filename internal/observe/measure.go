package observe

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/results"
)

// Measure observes the running lab l while run loads it, and returns run's
// result with the observation attached as b.Observation.
//
// It is what one bench or one tuning trial needs:
//
//	b, err := observe.Measure(ctx, l, time.Second, func(ctx context.Context) (*results.Bench, error) {
//		return load.Run(ctx, opts) // any generator run in this process
//	})
//	d := b.Observation.Derived // WorkerPSSP95B, OtherPSSB, MaxStealPct, CPUSecondsPerRequest ...
//
// The observer (ForLab's configuration) samples every interval (1 s when
// zero) the lab's nginx, php-fpm (status page over FastCGI, workers'
// PSS) and MariaDB, the accept queues of their sockets, the machine, this
// process as the "generator" group (run must load from this process) and
// every other process as "other". Sampling starts before run is called and
// stops when it returns.
//
// Derived is computed over the measured part only: from the moment run was
// called plus b.WarmupS (the warm-up is left out) until run returned, with
// b.Requests as the request count (CPU per request uses the mean CPU rate
// in that window times b.DurationS). Groups[].PSSB of every sample is the
// group's summed PSS.
//
// When run returns a result together with an error (an interrupted run)
// the result is returned with its observation and the error. When run
// returns no result, Measure returns run's error. A lab whose observer
// cannot be configured (its database credentials unreadable) is an error
// before run is called.
func Measure(ctx context.Context, l *lab.Lab, interval time.Duration, run func(ctx context.Context) (*results.Bench, error)) (*results.Bench, error) {
	cfg, closeDB, err := ForLab(l)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	cfg.Roots = append(cfg.Roots, Root{Component: ComponentGenerator, PID: os.Getpid()})
	cfg.Others = true
	cfg.Interval = interval
	return MeasureConfig(ctx, cfg, run)
}

// MeasureConfig is Measure with an explicit observer configuration (for a
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
