package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/traffic/locust"
)

// engine is the load generator a command runs on, chosen once from
// --engine by parseEngine; after that it is this value, never its name.
type engine int

const (
	// engineOwn is phptune's own generator (package load).
	engineOwn engine = iota
	// engineLocust is Locust (package locust).
	engineLocust
)

// engineNames are the engines' names on the command line, in the order
// the error of parseEngine lists them.
var engineNames = [...]string{engineOwn: "phptune", engineLocust: "locust"}

// String is the engine's name, as --engine takes it and results record
// it.
func (e engine) String() string { return engineNames[e] }

// parseEngine is the engine --engine names, or an error listing the
// engines there are.
func parseEngine(name string) (engine, error) {
	for e, n := range engineNames {
		if n == name {
			return engine(e), nil
		}
	}
	valid := engineNames[:]
	list := strings.Join(valid[:len(valid)-1], ", ") + " or " + valid[len(valid)-1]
	return engineOwn, fmt.Errorf("--engine %q: want %s", name, list)
}

// engineFlags are --engine and Locust's flags, shared by the commands that
// load (bench).
type engineFlags struct {
	// name is --engine as given; check turns it into engine.
	name          string
	engine        engine
	workers       int
	masterBind    string
	expectWorkers int
	workerWait    time.Duration
}

func (f *engineFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.name, "engine", engineOwn.String(), `load generator: phptune (its own) or locust (Locust, installed by phptune setup --with-locust; docs/locust.md)`)
	fl.IntVar(&f.workers, "workers", 0, "with --engine locust: run Locust's master with this many worker processes on this machine")
	fl.StringVar(&f.masterBind, "master-bind", "", "with --engine locust: the master listens on ADDR:PORT for workers started elsewhere (with --expect-workers)")
	fl.IntVar(&f.expectWorkers, "expect-workers", 0, "with --master-bind: wait for this many workers started elsewhere before the load starts")
	fl.DurationVar(&f.workerWait, "worker-wait", time.Minute, "with --engine locust: how long the master waits for its workers")
}

// check refuses Locust's flags without --engine locust and inconsistent ones.
func (f *engineFlags) check() error {
	e, err := parseEngine(f.name)
	if err != nil {
		return usageErr("Try: --engine locust", "%v", err)
	}
	f.engine = e
	switch {
	case f.engine == engineOwn && (f.workers != 0 || f.masterBind != "" || f.expectWorkers != 0):
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

// checkLocust refuses Locust for a sealed site lab (site: --site) and
// checks it is installed, before a lab is started for it (compare,
// capacity).
func (f *engineFlags) checkLocust(ctx context.Context, site bool) error {
	if f.engine != engineLocust {
		return nil
	}
	if site {
		return usageErr("Leave --engine locust out with --site", "--engine locust loads over TCP, and a sealed site lab is reached through a unix socket")
	}
	// Installed before a lab is started for it.
	_, err := locust.Version(ctx, lab.Home())
	return err
}

// addLocal adds --engine and --workers only, for the commands that
// measure many times (compare, capacity): a worker started elsewhere quits
// with its master, so every run's workers are this machine's.
func (f *engineFlags) addLocal(fl *pflag.FlagSet) {
	fl.StringVar(&f.name, "engine", engineOwn.String(), `load generator: phptune (its own) or locust (Locust, installed by phptune setup --with-locust; docs/locust.md)`)
	fl.IntVar(&f.workers, "workers", 0, "with --engine locust: run Locust's master with this many worker processes on this machine")
	f.workerWait = time.Minute
}

// benchGenerator is the generator bench runs opt on: phptune's own, or
// Locust as the lab's account for a lab (l), as phptune's stack account
// for other targets when run as root.
func (f *engineFlags) benchGenerator(ctx context.Context, opt load.Options, l *lab.Lab, redactNames []string, log io.Writer) (labstack.Generator, error) {
	if f.engine == engineOwn {
		return labstack.OwnGenerator{}, nil
	}
	return f.locustRun(ctx, opt, l, redactNames, log)
}

// locustRun is Locust for opt, after checking it can run it; it says
// which Locust runs it and the command that starts a worker elsewhere.
func (f *engineFlags) locustRun(ctx context.Context, opt load.Options, l *lab.Lab, redactNames []string, log io.Writer) (labstack.Generator, error) {
	if err := locust.Check(opt); err != nil {
		return nil, usageErr("Try: phptune bench --help", "%v", err)
	}
	eng, v, err := f.locustEngine(ctx, l, redactNames, log, "bench")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "bench: Locust %s, %d users, %d local workers", v, opt.Connections, f.workers)
	if f.expectWorkers > 0 {
		fmt.Fprintf(log, ", waiting up to %v for %d more on %s", f.workerWait, f.expectWorkers, f.masterBind)
	}
	fmt.Fprintln(log)
	return eng, nil
}

// locustEngine is the Locust engine of f, run as the lab's account for a
// lab (l), as phptune's stack account for other targets when run as root,
// with Locust's version. who names the command in what it prints.
func (f *engineFlags) locustEngine(ctx context.Context, l *lab.Lab, redactNames []string, log io.Writer, who string) (locust.Engine, string, error) {
	home := lab.Home()
	v, err := locust.Version(ctx, home)
	if err != nil {
		return locust.Engine{}, "", err
	}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		if l != nil {
			uid, gid = l.UID, l.GID
		} else {
			u, err := user.Lookup(lab.StackUser)
			if err != nil {
				return locust.Engine{}, "", fmt.Errorf("Locust runs as the %s account, which does not exist yet (%v); create it with: phptune lab up", lab.StackUser, err)
			}
			uid, _ = strconv.Atoi(u.Uid)
			gid, _ = strconv.Atoi(u.Gid)
		}
		if uid == 0 {
			return locust.Engine{}, "", fmt.Errorf("Locust would run as root: phptune runs it as the lab's account only")
		}
	}
	eng := locust.Engine{Home: home, Workers: f.workers, MasterBind: f.masterBind, ExpectWorkers: f.expectWorkers, WorkerWait: f.workerWait,
		UID: uid, GID: gid, Redact: redactNames,
		OnMaster: func(cmd string) {
			fmt.Fprintf(log, "%s: start each worker on its machine (Locust %s; the locustfile comes from the master):\n  %s\n", who, v, cmd)
		}}
	return eng, v, nil
}

// stackGenerator is a session's generator for the engine (its
// sessionSpec.generator): nil, phptune's own, or Locust for the stack
// after checking that it can load the stack's lab with the options of the
// command's runs (runs; its target is the stack's). Locust's version goes
// to *version, and note, when given, is said after Locust's line. who
// names the command.
func (f *engineFlags) stackGenerator(ctx context.Context, runs load.Options, redactNames []string, log io.Writer, who, note string, version *string) func(*labstack.Stack) (labstack.Generator, error) {
	if f.engine == engineOwn {
		return nil
	}
	return func(st *labstack.Stack) (labstack.Generator, error) {
		gen, v, err := f.useLocust(ctx, st, runs, redactNames, log, who)
		if err != nil {
			return nil, err
		}
		*version = v
		if note != "" {
			fmt.Fprintf(log, "%s: %s\n", who, note)
		}
		return gen, nil
	}
}

// useLocust is Locust for st, after checking that it can load st's lab
// with the options of the command's runs (opt; its target is the
// stack's), and Locust's version. who names the command.
func (f *engineFlags) useLocust(ctx context.Context, st *labstack.Stack, opt load.Options, redactNames []string, log io.Writer, who string) (labstack.Generator, string, error) {
	t, err := labstack.TargetFor(st.Lab, st.Workload, "")
	if err != nil {
		return nil, "", err
	}
	opt.Target, opt.Requests, opt.Expect, opt.KeepAlive = t, st.Workload.Requests, st.Workload.Expect, st.KeepAlive
	if err := locust.Check(opt); err != nil {
		return nil, "", usageErr("Try: phptune "+who+" --help, or leave --engine locust out", "%v", err)
	}
	eng, v, err := f.locustEngine(ctx, st.Lab, redactNames, log, who)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(log, "%s: every run on Locust %s, %d users, %d local workers; its warm-up is a throwaway run of its own\n", who, v, opt.Connections, f.workers)
	return eng, v, nil
}
