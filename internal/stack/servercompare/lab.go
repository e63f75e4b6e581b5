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
	say := o.Say
	if say == nil {
		say = func(string, ...any) {}
	}
	raw, err := json.Marshal(o.Options)
	if err != nil {
		return nil, err
	}
	if err := o.Store.CreateRun(ctx, store.Run{ID: o.ID, Kind: store.KindServers, Command: o.Command, App: o.App, Workload: o.Workload, Options: raw}); err != nil {
		return nil, err
	}
	defer func() {
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
		if serr := o.Store.FinishServers(context.WithoutCancel(ctx), o.ID, status, res); serr != nil && err == nil {
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
	l, w, stack := sess.Lab, sess.Workload, sess.Stack()
	if p, perr := stack.CheckPage(ctx); perr != nil {
		say("checking the page: %v", perr)
	} else {
		say("page: %s", p)
		stack.FirstPage = &p
		for _, warn := range labstack.PageWarnings(pagecheck.Page{}, p) {
			say("warning: %s", warn)
		}
	}
	target := recommend.Target{PHPVersion: o.PHPVersion, UsesDB: l.MariaDBSocket != ""}
	outDirs := map[string]string{}
	env := Env{
		Say: say,
		Tune: func(ctx context.Context, start knob.Config, budget time.Duration) (*results.Tune, error) {
			server := start.Server()
			opt := tune.Options{ID: o.ID + "-" + server, Command: o.Command, App: o.App, Workload: o.Workload, Expect: o.Expect,
				Start: start, Conns: o.Conns, Limits: o.Limits, TimeBudget: budget, Duration: o.TrialDuration, Warmup: o.TrialWarmup,
				// The comparison that follows measures tuned against
				// default again, interleaved with every other server:
				// the tune's own holdout is kept short, its curve and
				// rules of thumb left out.
				HoldoutRounds: 2, HoldoutMaxRounds: 2, NoCurve: true,
				ResetBetween: w.Writes, MemAvailableB: o.MemAvailableB}
			if o.TrialWarmup == 0 {
				opt.Warmup = -1 // tune's "none"
			}
			t := &tune.Tuner{Stack: stack, Store: o.Store, Environment: o.Environment,
				RenderFiles: func(start, rec knob.Config) map[string]string { return recommend.Files(start, rec, target) }}
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
				outDirs[server] = dir
			}
			return res, nil
		},
		Runner: interleave.StackRunner{Stack: stack, Conns: o.Conns, Duration: o.Duration, Warmup: o.Warmup, Reset: w.Writes},
		Record: func(ctx context.Context, n int, r interleave.Run, out interleave.Outcome, started time.Time) error {
			tr := store.Trial{Trial: results.Trial{N: n, Phase: PhaseServers, Config: r.Config.Config, Connections: o.Conns,
				Status: tune.StatusOK, FailReason: out.Failed, Bench: out.Bench}, Key: r.Label, Label: r.Label,
				StartedAt: started, FinishedAt: time.Now()}
			if !out.OK() {
				tr.Status = tune.StatusFailed // Failed carries the logs' end
			}
			return o.Store.SaveTrial(ctx, o.ID, tr)
		},
	}
	res, err = Run(ctx, o.Options, env)
	if res != nil {
		for i := range res.Servers {
			res.Servers[i].OutDir = outDirs[res.Servers[i].Server]
		}
	}
	return res, err
}
