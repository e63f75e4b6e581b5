package servercompare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/decide/interleave"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// Options are a servers run's inputs.
type Options struct {
	ID       string
	Command  string
	App      string
	Workload string
	// Servers are tuned and compared, in this order.
	Servers []string
	// Added are configurations measured beside them without a tune.
	Added []Added
	// NotCompared are servers of the default list that cannot run here.
	NotCompared []results.NotCompared
	Conns       int
	TimeBudget  time.Duration
	// Rounds of the interleaved comparison, each run measured for
	// Duration after Warmup.
	Rounds           int
	Duration, Warmup time.Duration
	// TrialDuration and TrialWarmup of the tunes' trials.
	TrialDuration, TrialWarmup time.Duration
}

// Added is a configuration measured beside the servers without a tune
// (e.g. Unit with 20 processes against php-fpm static 10).
type Added struct {
	Label  string
	Config knob.Config
}

// Budget is o's time budget split.
func (o Options) Budget() Budget {
	return Budget{Total: o.TimeBudget, Servers: len(o.Servers), Configs: 2*len(o.Servers) + len(o.Added), Rounds: o.Rounds,
		Duration: o.Duration, Warmup: o.Warmup, TrialDuration: o.TrialDuration, TrialWarmup: o.TrialWarmup}
}

// Env is what a run needs from the world: a tuner, a runner of one
// configuration once, and somewhere to store runs as they finish.
type Env struct {
	// Tune tunes the stack from start (a server's default) within budget.
	// An error that is not the context's is that server's failure: the
	// run goes on and measures its default.
	Tune func(ctx context.Context, start knob.Config, budget time.Duration) (*results.Tune, error)
	// Runner runs one configuration once in fresh processes
	// (interleave.StackRunner on a lab).
	Runner interleave.Runner
	// Record, when set, stores every comparison run as it finishes; n
	// counts them from 1. Its error stops the run.
	Record func(ctx context.Context, n int, r interleave.Run, o interleave.Outcome, started time.Time) error
	// Say, when set, gets progress lines.
	Say func(format string, args ...any)
	// Now is the clock (tests pass a fake one); nil: time.Now.
	Now func() time.Time
}

// InterruptedError is a run stopped before its end (Ctrl-C): the result
// returned with it holds what was measured so far.
type InterruptedError struct {
	ID    string
	Phase string
	Cause error
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("servers run %s interrupted during %s (%v); what was measured so far is stored and reported", e.ID, e.Phase, e.Cause)
}

// Unwrap returns the cancellation's cause.
func (e *InterruptedError) Unwrap() error { return e.Cause }

// Run tunes every server under an equal share of the budget, then
// measures each tuned configuration and each server's default in
// interleaved rounds and summarises them. Interrupted, it returns what
// was measured so far with an *InterruptedError.
func Run(ctx context.Context, opt Options, env Env) (*results.Servers, error) {
	now := env.Now
	if now == nil {
		now = time.Now
	}
	per, err := opt.Budget().PerTune()
	if err != nil {
		return nil, err
	}
	started := now()
	sr := &serversRun{opt: opt, env: env, now: now, say: orQuiet(env.Say), started: started,
		res: &results.Servers{SchemaVersion: results.SchemaVersion, Kind: results.KindServers, ID: opt.ID, StartedAt: started,
			Command: opt.Command, App: opt.App, Workload: opt.Workload, Connections: opt.Conns, TimeBudgetS: opt.TimeBudget.Seconds(),
			TuneBudgetS: per.Seconds(), Rounds: opt.Rounds, DurationS: opt.Duration.Seconds(), WarmupS: opt.Warmup.Seconds(),
			NotCompared: opt.NotCompared}}
	tuned, err := sr.tuneServers(ctx, per)
	if err != nil {
		return sr.res, err
	}
	return sr.res, sr.compare(ctx, tuned)
}

// serversRun is a servers run under way: its inputs, its world and the
// result it fills.
type serversRun struct {
	opt     Options
	env     Env
	now     func() time.Time
	say     func(format string, args ...any)
	started time.Time
	res     *results.Servers
}

// orQuiet is say, or when say is nil one that drops the lines.
func orQuiet(say func(string, ...any)) func(string, ...any) {
	if say == nil {
		return func(string, ...any) {}
	}
	return say
}

// finish sets the run's wall time.
func (sr *serversRun) finish() { sr.res.WallS = sr.now().Sub(sr.started).Seconds() }

// interrupted ends the run as stopped during phase.
func (sr *serversRun) interrupted(ctx context.Context, phase string) error {
	sr.res.Interrupted = true
	sr.finish()
	return &InterruptedError{ID: sr.opt.ID, Phase: phase, Cause: context.Cause(ctx)}
}

// tuneServers tunes each server under the same share, per, and returns
// the recommendations of those whose tune did not fail; an interrupted
// tune ends the run with an *InterruptedError.
func (sr *serversRun) tuneServers(ctx context.Context, per time.Duration) (map[string]knob.Config, error) {
	tuned := map[string]knob.Config{}
	for i, s := range sr.opt.Servers {
		sr.say("tuning %s (%d of %d) for %s", s, i+1, len(sr.opt.Servers), per.Round(time.Second))
		t0 := sr.now()
		t, err := sr.env.Tune(ctx, DefaultConfig(s), per)
		st := results.ServerTune{Server: s, WallS: sr.now().Sub(t0).Seconds()}
		if ctx.Err() != nil {
			st.Failed = "interrupted"
			sr.res.Servers = append(sr.res.Servers, st)
			return nil, sr.interrupted(ctx, "the tune of "+s)
		}
		if err != nil {
			st.Failed = err.Error()
			sr.res.Servers = append(sr.res.Servers, st)
			sr.res.Warnings = append(sr.res.Warnings, fmt.Sprintf("%s: the tune failed (%v); its default is still measured", s, err))
			sr.say("%s: the tune failed: %v", s, err)
			continue
		}
		rec := knob.Config(t.Recommended).Clone()
		st.TuneID, st.Trials, st.Recommended, st.Holdout = t.ID, len(t.Trials), rec, t.Holdout
		st.Changes, st.Files, st.Warnings = Changes(rec), t.Files, t.Warnings
		sr.res.Servers = append(sr.res.Servers, st)
		tuned[s] = rec
		sr.say("%s tuned: %s", s, changesText(st.Changes))
	}
	return tuned, nil
}

// compare measures every tuned server and every default (Plan) in
// interleaved rounds and summarises them into the result.
func (sr *serversRun) compare(ctx context.Context, tuned map[string]knob.Config) error {
	ms := Plan(sr.opt, tuned)
	var ic []interleave.Config
	for _, m := range ms {
		ic = append(ic, interleave.Config{Label: m.Label, Config: m.Config})
	}
	sess := interleave.New(ic, sr.recording())
	sess.DropFailed = true
	sess.OnRun = func(r interleave.Run, o interleave.Outcome) {
		if !o.OK() {
			sr.say("round %d/%d %s: %s", r.Round+1, sr.opt.Rounds, r.Label, o.Failed)
			return
		}
		b := o.Bench
		sr.say("round %d/%d %s: %.1f rps, p99 %.1f ms", r.Round+1, sr.opt.Rounds, r.Label, b.ThroughputRPS, b.Latency.P99Ms)
	}
	sr.say("measuring %d configurations in %d interleaved rounds", len(ms), sr.opt.Rounds)
	var runErr error
	for range sr.opt.Rounds {
		if runErr = sess.Round(ctx, nil); runErr != nil {
			break
		}
	}
	sr.res.RoundsRun = sess.Rounds()
	for i := range ms {
		ms[i].Failed = sess.Failed(i)
		for r := range sess.Rounds() {
			var b *results.Bench
			if o := sess.Outcome(i, r); o != nil && o.OK() {
				b = o.Bench
			}
			ms[i].Runs = append(ms[i].Runs, b)
		}
	}
	summarize(sr.res, ms)
	if runErr != nil && ctx.Err() != nil {
		sr.res.RoundsRun = completeRounds(ms)
		return sr.interrupted(ctx, fmt.Sprintf("round %d of the comparison", sess.Rounds()))
	}
	sr.finish()
	return runErr
}

// recording is env's runner with every run that ran stored through
// env.Record, numbered from 1.
func (sr *serversRun) recording() interleave.Runner {
	n := 0
	return interleave.RunnerFunc(func(ctx context.Context, r interleave.Run) (interleave.Outcome, error) {
		t0 := sr.now()
		o, err := sr.env.Runner.Run(ctx, r)
		if err != nil {
			return o, err
		}
		n++
		if sr.env.Record != nil {
			if err := sr.env.Record(ctx, n, r, o, t0); err != nil {
				return o, err
			}
		}
		return o, nil
	})
}

// summarize fills res's table, ranking, ratios and diagnoses from ms.
func summarize(res *results.Servers, ms []Measured) {
	sum := Summarize(ms)
	res.Configs, res.Best = sum.Configs, sum.Best
	for i := range res.Servers {
		res.Servers[i].TunedVsDefault = sum.TunedVsDefault[res.Servers[i].Server]
	}
	res.Diagnoses = Diagnose(res.Configs, res.Best)
}

// completeRounds is how many rounds measured every configuration that
// had not failed (an interrupted round is partial).
func completeRounds(ms []Measured) int {
	n := -1
	for _, m := range ms {
		if m.Failed != "" {
			continue
		}
		k := 0
		for _, b := range m.Runs {
			if b != nil {
				k++
			}
		}
		if n < 0 || k < n {
			n = k
		}
	}
	return max(n, 0)
}

// Plan lists the configurations the comparison measures, in order: for
// each server its tuned configuration and its default (one "tuned =
// default" when the tune changed nothing it uses, the default alone when
// its tune failed), then the added ones.
func Plan(opt Options, tuned map[string]knob.Config) []Measured {
	var ms []Measured
	for _, s := range opt.Servers {
		def := DefaultConfig(s)
		rec, ok := tuned[s]
		switch {
		case ok && len(Changes(rec)) == 0:
			ms = append(ms, Measured{Label: s + " (tuned = default)", Server: s, Role: results.RoleBoth, Config: rec})
		case ok:
			ms = append(ms, Measured{Label: s + " tuned", Server: s, Role: results.RoleTuned, Config: rec},
				Measured{Label: s + " default", Server: s, Role: results.RoleDefault, Config: def})
		default:
			ms = append(ms, Measured{Label: s + " default", Server: s, Role: results.RoleDefault, Config: def})
		}
	}
	for _, a := range opt.Added {
		ms = append(ms, Measured{Label: a.Label, Server: a.Config.Server(), Role: results.RoleAdded, Config: a.Config})
	}
	return ms
}

func changesText(ch []string) string {
	if len(ch) == 0 {
		return "the default kept (no change measured better)"
	}
	s := ""
	for i, c := range ch {
		if i > 0 {
			s += ", "
		}
		s += c
	}
	return s
}

// IsInterrupted reports whether err is a run stopped before its end.
func IsInterrupted(err error) bool {
	var ie *InterruptedError
	return errors.As(err, &ie)
}
