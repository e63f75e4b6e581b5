package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/locust"
	"github.com/phptune/phptune/internal/results"
)

// engineFlags are --engine and Locust's flags, shared by the commands that
// load (bench).
type engineFlags struct {
	engine        string
	workers       int
	masterBind    string
	expectWorkers int
	workerWait    time.Duration
}

func (f *engineFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.engine, "engine", "phptune", `load generator: phptune (its own) or locust (Locust, installed by phptune setup --with-locust; docs/locust.md)`)
	fl.IntVar(&f.workers, "workers", 0, "with --engine locust: run Locust's master with this many worker processes on this machine")
	fl.StringVar(&f.masterBind, "master-bind", "", "with --engine locust: the master listens on ADDR:PORT for workers started elsewhere (with --expect-workers)")
	fl.IntVar(&f.expectWorkers, "expect-workers", 0, "with --master-bind: wait for this many workers started elsewhere before the load starts")
	fl.DurationVar(&f.workerWait, "worker-wait", time.Minute, "with --engine locust: how long the master waits for its workers")
}

// check refuses Locust's flags without --engine locust and inconsistent ones.
func (f *engineFlags) check() error {
	switch {
	case f.engine != "phptune" && f.engine != "locust":
		return usageErr("Try: --engine locust", "--engine %q: want phptune or locust", f.engine)
	case f.engine == "phptune" && (f.workers != 0 || f.masterBind != "" || f.expectWorkers != 0):
		return usageErr("Try: --engine locust --workers 2", "--workers, --master-bind and --expect-workers go with --engine locust")
	case f.workers < 0 || f.expectWorkers < 0:
		return usageErr("Try: --workers 2", "--workers and --expect-workers must be positive")
	case (f.masterBind == "") != (f.expectWorkers == 0):
		return usageErr("Try: --master-bind 0.0.0.0:5557 --expect-workers 2", "--master-bind and --expect-workers go together")
	case f.workerWait < time.Second:
		return usageErr("Try: --worker-wait 1m", "--worker-wait %v: give at least 1s", f.workerWait)
	}
	return nil
}

// locustRun returns the run function for opt on Locust: as the lab's
// account for a lab (l), as phptune's stack account for other targets when
// run as root. say prints the command that starts a worker elsewhere.
func (f *engineFlags) locustRun(ctx context.Context, opt load.Options, l *lab.Lab, redactNames []string, log io.Writer) (func(context.Context) (*results.Bench, error), error) {
	if err := locust.Check(opt); err != nil {
		return nil, usageErr("Try: phptune bench --help", "%v", err)
	}
	home := lab.Home()
	v, err := locust.Version(ctx, home)
	if err != nil {
		return nil, err
	}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		if l != nil {
			uid, gid = l.UID, l.GID
		} else {
			u, err := user.Lookup(lab.StackUser)
			if err != nil {
				return nil, fmt.Errorf("Locust runs as the %s account, which does not exist yet (%v); create it with: phptune lab up", lab.StackUser, err)
			}
			uid, _ = strconv.Atoi(u.Uid)
			gid, _ = strconv.Atoi(u.Gid)
		}
		if uid == 0 {
			return nil, fmt.Errorf("Locust would run as root: phptune runs it as the lab's account only")
		}
	}
	fmt.Fprintf(log, "bench: Locust %s, %d users, %d local workers", v, opt.Connections, f.workers)
	if f.expectWorkers > 0 {
		fmt.Fprintf(log, ", waiting up to %v for %d more on %s", f.workerWait, f.expectWorkers, f.masterBind)
	}
	fmt.Fprintln(log)
	eng := locust.Engine{Home: home, Workers: f.workers, MasterBind: f.masterBind, ExpectWorkers: f.expectWorkers, WorkerWait: f.workerWait,
		UID: uid, GID: gid, Redact: redactNames,
		OnMaster: func(cmd string) {
			fmt.Fprintf(log, "bench: start each worker on its machine (Locust %s; the locustfile comes from the master):\n  %s\n", v, cmd)
		}}
	return func(ctx context.Context) (*results.Bench, error) { return eng.Run(ctx, opt) }, nil
}
