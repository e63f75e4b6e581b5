package labstack

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/phptune/phptune/internal/decide/capacity"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/traffic/load"
)

// MeasureRate loads the running lab in the open model as p says: at
// p.Rate requests per second (load.ConstantPacer) for p.Warmup and then
// p.Duration, latency counted from each request's intended send time, with
// up to p.Connections connections opened as needed, observing the stack
// as Measure does. It first waits p.Settle (the previous step failed and
// the stack's queues drain) and, for a workload that writes, resets the
// database, so that every step starts alike.
func (s *Stack) MeasureRate(ctx context.Context, p capacity.Plan) (*results.Bench, error) {
	target, err := s.target()
	if err != nil {
		return nil, err
	}
	if p.Settle > 0 {
		t := time.NewTimer(p.Settle)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if s.Workload.Writes {
		if err := s.Reset(ctx); err != nil {
			return nil, fmt.Errorf("resetting the database before the step: %w", err)
		}
	}
	interval := s.ObserveInterval
	if interval <= 0 {
		interval = time.Second
	}
	return Observe(ctx, s.Lab, interval, func(ctx context.Context) (*results.Bench, error) {
		return s.generator().Run(ctx, load.Options{
			Target:      target,
			Requests:    s.Workload.Requests,
			Connections: p.Connections,
			Duration:    p.Duration,
			Warmup:      p.Warmup,
			Pacer:       load.ConstantPacer{Rate: p.Rate},
			KeepAlive:   s.KeepAlive,
			Expect:      s.Workload.Expect,
			Timeout:     p.Timeout,
			Drain:       p.Drain,
			Command:     s.rateCommand(p),
		})
	})
}

// rateCommand is the bench command line that loads the lab as step p did.
func (s *Stack) rateCommand(p capacity.Plan) string {
	cmd := s.command(p.Connections, p.Duration, p.Warmup)
	return cmd + fmt.Sprintf(" --rate %s --timeout %s", strconv.FormatFloat(p.Rate, 'f', -1, 64), p.Timeout)
}

// Runner is s as a capacity.Runner.
func (s *Stack) Runner() capacity.Runner {
	return capacity.RunnerFunc(s.MeasureRate)
}

// ProbeDuration and ProbeWarmup are the closed-model run that picks a
// capacity search's first rate.
const (
	ProbeDuration = 5 * time.Second
	ProbeWarmup   = 2 * time.Second
)

// ProbeStartRate measures the running lab once in the closed model, conns
// connections for ProbeWarmup then ProbeDuration, and returns half its
// throughput as a capacity search's first rate (at least 1), with a line
// saying so: a closed model at enough connections is near the stack's
// saturation, so half of it most likely passes, and the ramp's ×1.5 steps
// reach the knee in two or three steps.
func (s *Stack) ProbeStartRate(ctx context.Context, conns int) (float64, string, error) {
	b, err := s.Measure(ctx, conns, ProbeDuration, ProbeWarmup)
	if err != nil {
		return 0, "", fmt.Errorf("the closed-model probe for the first rate: %w", err)
	}
	if b.ThroughputRPS <= 0 {
		return 0, "", fmt.Errorf("the closed-model probe for the first rate (%d connections, %s) got no successful response (%d errors); check the page with phptune bench --lab %s", conns, ProbeDuration, b.Errors, s.Lab.Name)
	}
	r := math.Max(1, math.Round(b.ThroughputRPS/2))
	return r, fmt.Sprintf("half the %.1f rps of a closed-model probe (%d connections, %s after %s warm-up)", b.ThroughputRPS, conns, ProbeDuration, ProbeWarmup), nil
}

// CapacityOptions are a capacity search on a lab: the search's options,
// and when StartRate is 0 the closed-model probe that picks it.
type CapacityOptions struct {
	capacity.Options
	// ProbeConnections for the probe when StartRate is 0 (default 50).
	ProbeConnections int
	// Now is the clock (tests may fake it); nil: time.Now.
	Now func() time.Time
}

// Capacity runs a capacity search on the running lab: the probe for the
// first rate when none is given (its time taken from the time budget),
// then capacity.Search with s as the runner. The result names the lab's
// target, app, workload and configuration; ID, Command and Environment
// are the caller's. An interrupted search returns what it measured with
// the error.
func (s *Stack) Capacity(ctx context.Context, o CapacityOptions) (*results.Capacity, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	began := now()
	if o.StartRate == 0 {
		conns := o.ProbeConnections
		if conns <= 0 {
			conns = 50
		}
		r, why, err := s.ProbeStartRate(ctx, conns)
		if err != nil {
			return nil, err
		}
		o.StartRate, o.StartFrom = r, why
		if o.MinRate > 0 {
			o.StartRate = math.Max(o.StartRate, o.MinRate)
		}
		if o.MaxRate > 0 {
			o.StartRate = math.Min(o.StartRate, o.MaxRate)
		}
		if o.TimeBudget > 0 {
			o.TimeBudget -= now().Sub(began)
			if o.TimeBudget <= 0 {
				return nil, fmt.Errorf("the probe for the first rate used the whole time budget")
			}
		}
	}
	target, err := s.target()
	if err != nil {
		return nil, err
	}
	res, err := capacity.Search(ctx, s.Runner(), o.Options)
	if res != nil {
		res.StartedAt = began.UTC()
		res.Target = target.Display + s.Workload.PagePath()
		res.App, res.Workload = s.Lab.App, s.Workload.Name
		res.Config = s.Lab.Config.Clone()
		res.WallS = now().Sub(began).Seconds()
	}
	return res, err
}
