package locust

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/traffic/load"
)

// Engine is how bench, compare and capacity run a load on Locust: the
// same load.Options phptune's generator takes, plus Locust's own.
type Engine struct {
	// Home is phptune's state directory (Locust's environment).
	Home string
	// Workers, MasterBind, ExpectWorkers and WorkerWait are RunOptions'.
	Workers       int
	MasterBind    string
	ExpectWorkers int
	WorkerWait    time.Duration
	// UID and GID are the account Locust runs as (-1: phptune's own).
	UID, GID int
	// Redact are --redact's extra secret names.
	Redact []string
	Log    io.Writer
	// OnMaster is RunOptions.OnMaster.
	OnMaster func(workerCommand string)
}

// Check refuses the options Locust cannot honour, naming the flag and
// what to do instead.
func Check(o load.Options) error {
	switch {
	case o.Target.Protocol != "http":
		return fmt.Errorf("--engine locust loads HTTP only: bench the web server (leave --fcgi out, or give an http:// target)")
	case o.Target.Network == "unix":
		return fmt.Errorf("--engine locust loads over TCP, and this target is a unix socket (a sealed site lab): leave --engine locust out, or load an unsealed lab")
	case o.N > 0:
		return fmt.Errorf("--engine locust runs for a duration: give -d instead of -n")
	case !o.KeepAlive:
		return fmt.Errorf("--engine locust keeps connections alive: leave --no-keepalive out")
	case o.CheckLength:
		return fmt.Errorf("--engine locust does not compare body lengths: leave --check-length out")
	case o.Duration < time.Second:
		return fmt.Errorf("--engine locust needs -d of at least 1s")
	}
	if o.Pacer != nil {
		if _, ok := o.Pacer.(load.ConstantPacer); !ok {
			return fmt.Errorf("--engine locust keeps a constant rate: give --rate N, not a ramp or steps")
		}
	}
	return nil
}

// WorkloadOf is the locustfile's workload for o: its requests, --expect,
// and in the open model each of the -c users' share of --rate.
func WorkloadOf(o load.Options, redact []string) Workload {
	w := Workload{Requests: o.Requests, Expect: o.Expect, TimeoutS: o.Timeout.Seconds(), Redact: redact}
	if w.TimeoutS <= 0 {
		w.TimeoutS = 10
	}
	if p, ok := o.Pacer.(load.ConstantPacer); ok && o.Connections > 0 {
		w.RatePerUser = p.Rate / float64(o.Connections)
	}
	// A Host header other than the address's (--host: the site's own
	// name) goes with every request, as phptune's generator sends it.
	if h := o.Target.Host; h != "" && h != o.Target.Address {
		w.Requests = make([]load.Request, len(o.Requests))
		for i, r := range o.Requests {
			r.Header = r.Header.Clone()
			if r.Header == nil {
				r.Header = http.Header{}
			}
			r.Header.Set("Host", h)
			w.Requests[i] = r
		}
	}
	return w
}

// BenchFlags are phptune bench's flags for e's engine, for a record's
// command line.
func (e Engine) BenchFlags() string {
	f := "--engine locust"
	if e.Workers > 0 {
		f += fmt.Sprintf(" --workers %d", e.Workers)
	}
	return f
}

// warmupNote says how a run's warm-up was made on Locust, which has none
// of its own.
const warmupNote = "warm-up: a throwaway Locust run of the same load before the measured one (Locust has no warm-up of its own; the server's caches and workers stay warm, Locust's connections are new)"

// Run runs o on Locust and returns phptune's record of it, generator cost
// included: the CPU time of Locust's master and of each worker it started.
func (e Engine) Run(ctx context.Context, o load.Options) (*results.Bench, error) {
	if err := Check(o); err != nil {
		return nil, err
	}
	lf, err := Generate(WorkloadOf(o, e.Redact))
	if err != nil {
		return nil, err
	}
	host := "http://" + o.Target.Address
	started := time.Now()
	ro := RunOptions{Home: e.Home, Locustfile: lf, Host: host, Users: o.Connections, Duration: o.Duration,
		Workers: e.Workers, MasterBind: e.MasterBind, ExpectWorkers: e.ExpectWorkers, WorkerWait: e.WorkerWait,
		UID: e.UID, GID: e.GID, Log: e.Log, OnMaster: e.OnMaster}
	if o.Warmup > 0 {
		// Locust has no warm-up: a run of its own, same load, whose
		// result is dropped. Workers started elsewhere would quit with
		// its master, so it needs them all on this machine.
		if e.ExpectWorkers > 0 {
			return nil, fmt.Errorf("a warm-up on Locust is a run of its own, and workers started elsewhere quit with its master: leave --warmup out with --expect-workers")
		}
		warm := ro
		warm.Duration = max(o.Warmup, time.Second)
		if _, err := Start(ctx, warm); err != nil {
			return nil, fmt.Errorf("Locust's warm-up run: %w", err)
		}
	}
	if o.OnMeasure != nil {
		o.OnMeasure()
	}
	run, err := Start(ctx, ro)
	if err != nil {
		return nil, err
	}
	m := Meta{Target: o.Target.Display, Command: o.Command, Users: o.Connections, KeepAlive: true}
	if p, ok := o.Pacer.(load.ConstantPacer); ok {
		m.RateAskedRPS, m.RateSchedule = p.Rate, p.String()
	}
	b := Bench(run.Result, m)
	if b.Target == "" {
		b.Target = host
	}
	if b.StartedAt.IsZero() {
		b.StartedAt = started.UTC()
	}
	b.ID = fmt.Sprintf("bench-%s-%d", started.UTC().Format("20060102T150405"), os.Getpid())
	if o.Warmup > 0 {
		// The observer leaves out the first WarmupS seconds of the run:
		// the throwaway run and Locust's start-up, up to its first
		// measured request.
		b.WarmupS = max(0, b.StartedAt.Sub(started).Seconds())
		b.Warnings = append(b.Warnings, warmupNote)
	}
	b.MasterCPUSeconds, b.WorkerCPUSeconds = run.MasterCPUSeconds, run.WorkerCPUSeconds
	cpu := run.MasterCPUSeconds
	for _, c := range run.WorkerCPUSeconds {
		cpu += c
	}
	b.Generator.CPUSeconds = cpu
	if cpu > 0 {
		b.Generator.RequestsPerCPUSecond = float64(b.Requests) / cpu
	}
	if e.ExpectWorkers > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d of the %d Locust workers ran elsewhere: the generator's CPU counts only this machine's", e.ExpectWorkers, e.Workers+e.ExpectWorkers))
	}
	if b.Requests == 0 {
		return b, fmt.Errorf("Locust sent no request in %v: see its log above; check the target with: curl -i %s", o.Duration, host+o.Requests[0].Path)
	}
	return b, nil
}
