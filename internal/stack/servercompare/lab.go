package servercompare

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/decide/interleave"
	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/live/recommend"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

// PhaseServers is the phase of a comparison run stored as a trial.
const PhaseServers = "servers"

// LabOptions are a servers run on a lab of its own: the lab is brought up
// once, every tune and every comparison run restarts its web server and
// PHP with their configuration (fresh processes; a server change is a
// knob like any other), and it is taken down at the end, interrupted or
// not.
type LabOptions struct {
	Options
	Limits results.Limits
	// Expect is the regular expression every 2xx body must match.
	Expect string
	// Store receives the run (kind servers), its comparison runs as they
	// finish and its summary; each tune is a tune run of its own (ID
	// RUN-SERVER).
	Store       *store.DB
	Environment *results.Environment
	// PHPVersion is the distro's PHP branch, for the recommendation's
	// paths ("8.2").
	PHPVersion string
	// MemAvailableB is the machine's MemAvailable at the start (the
	// tunes' calculator baseline reads it).
	MemAvailableB int64
	// OnTuned, when set, gets every finished tune (to write its files)
	// and returns where they went.
	OnTuned func(server string, t *results.Tune) (string, error)
	// TuneProgress, when set, gets the tunes' progress.
	TuneProgress func(server string, p tune.Progress)
	// Say, when set, gets progress lines.
	Say func(format string, args ...any)
}

// RunLab runs a servers comparison on a lab of its own (see Run). Every
// comparison run is stored as it finishes and the summary at the end,
// also when interrupted; the lab is down when it returns.
func RunLab(ctx context.Context, o LabOptions) (res *results.Servers, err error) {
	say := orQuiet(o.Say)
	raw, err := json.Marshal(o.Options)
	if err != nil {
		return nil, err
	}
	if err := o.Store.CreateRun(ctx, store.Run{ID: o.ID, Kind: store.KindServers, Command: o.Command, App: o.App, Workload: o.Workload, Options: raw}); err != nil {
		return nil, err
	}
	defer func() {
		if serr := o.finishStored(ctx, res, err); serr != nil && err == nil {
			err = serr
		}
	}()

	// The lab of its own, through the stack session every measuring
	// command opens: brought up, its workload parsed, and taken down
	// however the comparison ends.
	say("bringing up lab %s (%s)", stacksession.LabName("servers"), o.App)
	sess, err := stacksession.Open(ctx, stacksession.Options{Command: "servers", Own: lab.Options{App: o.App, Set: []string{knob.ServerKnob + "=" + o.Servers[0]}},
		Workload: o.Workload, Expect: o.Expect, Say: say})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	stack := sess.Stack()
	checkFirstPage(ctx, stack, say)
	lr := &labRun{o: o, stack: stack, writes: sess.Workload.Writes, outDirs: map[string]string{},
		target: recommend.Target{PHPVersion: o.PHPVersion, UsesDB: sess.Lab.MariaDBSocket != ""}}
	env := Env{Say: say, Tune: lr.tune, Record: lr.record,
		Runner: interleave.StackRunner{Stack: stack, Conns: o.Conns, Duration: o.Duration, Warmup: o.Warmup, Reset: lr.writes}}
	res, err = Run(ctx, o.Options, env)
	if res != nil {
		for i := range res.Servers {
			res.Servers[i].OutDir = lr.outDirs[res.Servers[i].Server]
		}
	}
	return res, err
}

// finishStored stores the run's end: its status, read from err and ctx,
// and its result with the environment.
func (o LabOptions) finishStored(ctx context.Context, res *results.Servers, err error) error {
	status := store.StatusDone
	switch {
	case IsInterrupted(err) || ctx.Err() != nil:
		// Ctrl-C while the lab came up, too.
		status = store.StatusInterrupted
	case err != nil:
		status = store.StatusFailed
	}
	if res != nil {
		res.Environment = o.Environment
	}
	// Best effort with a context that is not the cancelled one.
	return o.Store.FinishServers(context.WithoutCancel(ctx), o.ID, status, res)
}

// checkFirstPage reads the page the workload is about and keeps it for
// the trials to compare with, saying what it is and where it reads like
// an error page; a page that cannot be read is said and not kept.
func checkFirstPage(ctx context.Context, stack *labstack.Stack, say func(string, ...any)) {
	p, err := stack.CheckPage(ctx)
	if err != nil {
		say("checking the page: %v", err)
		return
	}
	say("page: %s", p)
	stack.FirstPage = &p
	for _, warn := range labstack.PageWarnings(pagecheck.Page{}, p) {
		say("warning: %s", warn)
	}
}

// labRun is what a servers run on a lab tunes and stores with: the lab's
// stack, whether its workload writes (the app's data reset between
// measurements), the recommendation's target, and where each server's
// tune wrote its files.
type labRun struct {
	o       LabOptions
	stack   *labstack.Stack
	writes  bool
	target  recommend.Target
	outDirs map[string]string
}

// tune is Env.Tune on the lab: a tune run of its own (ID RUN-SERVER),
// stored, its files written by OnTuned.
func (lr *labRun) tune(ctx context.Context, start knob.Config, budget time.Duration) (*results.Tune, error) {
	o := lr.o
	server := start.Server()
	opt := tune.Options{ID: o.ID + "-" + server, Command: o.Command, App: o.App, Workload: o.Workload, Expect: o.Expect,
		Start: start, Conns: o.Conns, Limits: o.Limits, TimeBudget: budget, Duration: o.TrialDuration, Warmup: o.TrialWarmup,
		// The comparison that follows measures tuned against
		// default again, interleaved with every other server:
		// the tune's own holdout is kept short, its curve and
		// rules of thumb left out.
		HoldoutRounds: 2, HoldoutMaxRounds: 2, NoCurve: true,
		ResetBetween: lr.writes, MemAvailableB: o.MemAvailableB}
	if o.TrialWarmup == 0 {
		opt.Warmup = -1 // tune's "none"
	}
	t := &tune.Tuner{Stack: lr.stack, Store: o.Store, Environment: o.Environment,
		RenderFiles: func(start, rec knob.Config) map[string]string { return recommend.Files(start, rec, lr.target) }}
	if o.TuneProgress != nil {
		t.Progress = func(p tune.Progress) { o.TuneProgress(server, p) }
	}
	res, err := t.Run(ctx, opt)
	if err != nil {
		return nil, err
	}
	res.Environment = o.Environment
	if o.OnTuned != nil {
		dir, err := o.OnTuned(server, res)
		if err != nil {
			return nil, fmt.Errorf("writing %s's files: %w", server, err)
		}
		lr.outDirs[server] = dir
	}
	return res, nil
}

// record is Env.Record on the lab: the comparison run n stored as a
// trial of phase servers.
func (lr *labRun) record(ctx context.Context, n int, r interleave.Run, out interleave.Outcome, started time.Time) error {
	tr := store.Trial{Trial: results.Trial{N: n, Phase: PhaseServers, Config: r.Config.Config, Connections: lr.o.Conns,
		Status: tune.StatusOK, FailReason: out.Failed, Bench: out.Bench}, Key: r.Label, Label: r.Label,
		StartedAt: started, FinishedAt: time.Now()}
	if !out.OK() {
		tr.Status = tune.StatusFailed // Failed carries the logs' end
	}
	return lr.o.Store.SaveTrial(ctx, lr.o.ID, tr)
}
