package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/servercompare"
	"github.com/phptune/phptune/internal/stack/workload"
)

func init() { register(newServersCmd) }

// serversFlags are phptune servers' command line.
type serversFlags struct {
	// stack is the app the servers run and its traffic (--lab,
	// --docroot, --site and the lab's own settings are refused: every
	// server gets a lab of the built-in app, from its default).
	stack                      stackFlags
	list                       string
	memoryBudget, maxErrors    string
	outDir                     string
	add                        []string
	conns, rounds              int
	timeBudget                 time.Duration
	duration, warmup           time.Duration
	trialDuration, trialWarmup time.Duration
	asJSON                     bool
}

func newServersCmd(env *Env) *cobra.Command {
	f := &serversFlags{stack: stackFlags{defaultApp: "wordpress", refused: serversRefused}}
	cmd := &cobra.Command{
		Use:   "servers [--app APP] [--servers a,b,...] [-c N] [--time-budget T]",
		Short: "Tune each web server, then measure them all side by side and say why one wins",
		Long: `phptune servers answers "is it the server or the setup?" the fair way: it tunes
each web server (the values of the server knob: ` + strings.Join(knob.Servers, ", ") + `)
under an equal share of the time budget, then measures every tuned server and
each server's default configuration in interleaved rounds (order rotated every
round), each run in fresh processes, on one lab of its own.

It prints, and writes as an offline HTML report, each configuration's
throughput and p99 with 95% confidence intervals and its ratio to the best
(paired by round), CPU per request split into web server, PHP and database,
PSS per PHP worker and in total, errors, and worker imbalance (the busiest
PHP worker's share of its pool's CPU; 1/n is even). When a configuration
loses against the best, it says why in plain words if the figures show it:
uneven workers, requests queueing for a worker while CPU stood idle, or a
higher CPU cost per request.

Every server named with --servers must be able to run here: a missing one
is refused before anything starts, with the line that installs it. Without
--servers every server that can run is compared and the others are named
with their install lines. --add LABEL=FILE measures a knob file beside them
without a tune (e.g. a configuration of your own, such as Unit with 20
PHP processes).

The budget: the comparison takes about rounds × configurations × (duration
+ warm-up + ~2 s), the lab ~15 s, and each server's tune an equal share of
the rest (at least 10 trials); a budget too short is refused naming the
least that would do. Each tune is stored as a tune run of its own (phptune
report RUN-SERVER) and writes its recommendation in the server's own
syntax into -o DIR/SERVER; the comparison's runs are stored as they finish.
Ctrl-C stops cleanly: the lab goes down and what was measured so far is
stored, printed and written.`,
		Example: `  phptune servers --app wordpress -c 10 --time-budget 60m
  phptune servers --app wordpress --servers nginx-fpm,apache-prefork-modphp --time-budget 20m
  phptune servers --app strings --servers unit,nginx-fpm -c 10 --add unit-20=unit20.knobs --add fpm-static-10=fpm10.knobs`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runServers(env, f, tuneCommandLine(c), c.Flags().Changed("servers"))
		},
	}
	fl := cmd.Flags()
	f.stack.add(fl, "servers", workload.Front)
	fl.StringVar(&f.list, "servers", "", "servers to tune and compare, comma-separated (default: every one of "+strings.Join(knob.Servers, ",")+" that can run here, the others named with how to install them)")
	fl.IntVarP(&f.conns, "connections", "c", 10, "concurrency of the workload, for the tunes and the comparison")
	fl.DurationVar(&f.timeBudget, "time-budget", 60*time.Minute, "time for everything: the tunes (an equal share each) and the interleaved comparison")
	fl.IntVar(&f.rounds, "rounds", 4, "rounds of the interleaved comparison; each measures every configuration once")
	fl.DurationVarP(&f.duration, "duration", "d", 10*time.Second, "measured time of each comparison run")
	fl.DurationVar(&f.warmup, "warmup", 3*time.Second, "warm-up of each comparison run, not measured")
	fl.DurationVar(&f.trialDuration, "trial-duration", 10*time.Second, "measured time of each tune trial")
	fl.DurationVar(&f.trialWarmup, "trial-warmup", 3*time.Second, "warm-up of each tune trial, not measured")
	fl.StringVar(&f.memoryBudget, "memory-budget", "", "memory each tuned stack may use, e.g. 2G; default 80% of MemAvailable at the start; 'none' for no limit")
	fl.StringVar(&f.maxErrors, "max-errors", "0.1%", "highest error rate a tuned configuration may have, e.g. 0.1% or 0")
	fl.StringArrayVar(&f.add, "add", nil, "also measure this knob file in the comparison, untuned, as LABEL=FILE (repeatable; its server knob says which server)")
	fl.StringVarP(&f.outDir, "output", "o", "", "a new or empty directory of yours for the report and each server's files (default ./phptune-servers-RUN)")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON instead of the table")
	return cmd
}

// serversRefused are the stack flags servers cannot take: it tunes every
// server on a lab of its own of a built-in app, each from its default.
var serversRefused = merge(
	refuseAll("every server is tuned on a lab of its own of a built-in app (--app)", "Try: phptune servers --app wordpress; tune your running lab or site with phptune tune --server SERVER --lab NAME or --site NAME",
		flagLab, flagDocroot, flagSite, flagDBFrom, flagDBDump, flagDB, flagDBUser, flagDBHost, flagDBPasswordFile, flagHost),
	refuseAll("the servers' labs run with the lab account and no caps", "Leave it out, or tune one server's lab with it: phptune tune --server SERVER --app APP",
		flagUser, flagCPUs, flagMemoryMax),
	refuseAll("every server is tuned from its own default", "Try: --add LABEL=FILE to measure a knob file beside the tuned servers",
		flagKnobs, flagSet))

// serversPlan is everything checked before anything starts.
type serversPlan struct {
	opt    servercompare.Options
	limits results.Limits
	outDir string
}

// planServers checks the whole command line before any process starts:
// the app and workload, every server (known, and able to run here), the
// added knob files, the numbers, the budget split and the output
// directory.
func planServers(f *serversFlags, command string, explicit bool) (*serversPlan, error) {
	p := &serversPlan{}
	if err := f.stack.check(false); err != nil {
		return nil, err
	}
	if err := checkWorkload(f.stack.workloadSpec(), f.stack.app); err != nil {
		return nil, err
	}
	limits, err := f.checkNumbers()
	if err != nil {
		return nil, err
	}
	p.limits = limits
	run, notCompared, err := f.runnable(explicit)
	if err != nil {
		return nil, err
	}
	added, err := f.added(run)
	if err != nil {
		return nil, err
	}
	p.opt = servercompare.Options{Command: command, App: f.stack.app, Workload: f.stack.workloadSpec(), Servers: run, Added: added, NotCompared: notCompared,
		Conns: f.conns, TimeBudget: f.timeBudget, Rounds: f.rounds, Duration: f.duration, Warmup: f.warmup,
		TrialDuration: f.trialDuration, TrialWarmup: f.trialWarmup}
	if _, err := p.opt.Budget().PerTune(); err != nil {
		var be *servercompare.BudgetError
		if errors.As(err, &be) {
			return nil, usageErr(fmt.Sprintf("Try: --time-budget %s", be.Suggest()), "%v", err)
		}
		return nil, err
	}
	p.outDir = f.outDir
	if err := checkOutDirFor(f.outDir, "phptune-servers-RUN", "servers"); err != nil {
		return nil, err
	}
	return p, nil
}

// checkNumbers refuses counts and durations out of range and returns
// the tuned configurations' limits (--max-errors, --memory-budget).
func (f *serversFlags) checkNumbers() (results.Limits, error) {
	switch {
	case f.conns < 1 || f.conns > 10000:
		return results.Limits{}, usageErr("Try: -c 10", "--connections %d: give 1 to 10000", f.conns)
	case f.rounds < 2 || f.rounds > 50:
		return results.Limits{}, usageErr("Try: --rounds 4", "--rounds %d: give 2 to 50 (an interval needs two rounds at least)", f.rounds)
	case f.duration < time.Second || f.warmup < 0 || f.trialDuration < time.Second || f.trialWarmup < 0:
		return results.Limits{}, usageErr("Try: -d 10s --warmup 3s --trial-duration 10s --trial-warmup 3s", "-d and --trial-duration must be at least 1s, --warmup and --trial-warmup not negative")
	case f.timeBudget <= 0:
		return results.Limits{}, usageErr("Try: --time-budget 60m", "--time-budget must be positive: it is split between the tunes and the comparison")
	}
	rate, err := parseErrorRate(f.maxErrors)
	if err != nil {
		return results.Limits{}, err
	}
	budget, _, err := parseMemoryBudget(f.memoryBudget)
	if err != nil {
		return results.Limits{}, err
	}
	return results.Limits{MemoryBudgetB: budget, MaxErrorRate: rate}, nil
}

// runnable are the servers of --servers (explicit) or every server that
// can run here, and the others with why not; a server named with
// --servers that cannot run is refused.
func (f *serversFlags) runnable(explicit bool) ([]string, []results.NotCompared, error) {
	spec := f.list
	if !explicit {
		spec = strings.Join(knob.Servers, ",")
	}
	list, err := servercompare.ParseServers(spec)
	if err != nil {
		return nil, nil, usageErr("Try: --servers "+strings.Join(knob.Servers, ","), "--servers: %v", err)
	}
	var run, missing []string
	var notCompared []results.NotCompared
	for _, s := range list {
		if err := lab.CheckServer(s); err != nil {
			if explicit {
				missing = append(missing, fmt.Sprintf("%s: %v", s, err))
				continue
			}
			notCompared = append(notCompared, results.NotCompared{Server: s, Reason: err.Error()})
			continue
		}
		run = append(run, s)
	}
	if len(missing) > 0 {
		return nil, nil, usageErr("Install what is missing (phptune setup as root installs the Debian packages), or leave those servers out of --servers", "--servers names servers that cannot run here:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(run) == 0 {
		var why []string
		for _, n := range notCompared {
			why = append(why, n.Server+": "+n.Reason)
		}
		return nil, nil, usageErr("Run phptune setup as root", "no server can run here:\n  %s", strings.Join(why, "\n  "))
	}
	return run, notCompared, nil
}

// added are --add's knob files, each with a label no tuned or default
// configuration of the servers run takes, and a server that can run.
func (f *serversFlags) added(run []string) ([]servercompare.Added, error) {
	var added []servercompare.Added
	labels := map[string]bool{}
	for _, s := range run {
		for _, l := range []string{s + " tuned", s + " default", s + " (tuned = default)"} {
			labels[l] = true
		}
	}
	for _, a := range f.add {
		label, file, ok := strings.Cut(a, "=")
		label = strings.TrimSpace(label)
		if !ok || label == "" || file == "" {
			return nil, usageErr("Try: --add unit-20=unit20.knobs", "--add %q: write LABEL=FILE, FILE a knob file (KNOB=VALUE lines)", a)
		}
		if labels[label] {
			return nil, usageErr("Try: --add another-name="+file, "--add %s: the label %q is already taken", a, label)
		}
		labels[label] = true
		cfg, err := knob.Defaults().ApplyFileAt(file)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, usageErr("Give a knob file of KNOB=VALUE lines, as phptune tune writes (recommended.knobs)", "--add %s: %v", label, err)
		}
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			return nil, usageErr("See every knob, its default and its range: phptune knobs", "--add %s: %s: %v", label, file, err)
		}
		if err := lab.CheckServer(cfg.Server()); err != nil {
			return nil, usageErr("Install what is missing (phptune setup as root), or leave out this --add", "--add %s runs server=%s, which cannot run here: %v", label, cfg.Server(), err)
		}
		added = append(added, servercompare.Added{Label: label, Config: cfg})
	}
	return added, nil
}

// runServers is phptune servers once planned: the run's ID and output
// directory, the labs of every server tuned and compared
// (servercompare.RunLab), and the result printed and written as a report.
func runServers(env *Env, f *serversFlags, command string, explicit bool) error {
	ctx := env.Ctx
	plan, err := planServers(f, command, explicit)
	if err != nil {
		return err
	}
	opt := plan.opt
	for _, n := range opt.NotCompared {
		fmt.Fprintf(env.Stderr, "servers: not compared: %s: %s\n", n.Server, n.Reason)
	}
	db, err := openResults(ctx, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	opt.ID = time.Now().UTC().Format("20060102-150405")
	if _, err := db.Run(ctx, opt.ID); err == nil {
		time.Sleep(time.Second)
		opt.ID = time.Now().UTC().Format("20060102-150405")
	}
	outDir := plan.outDir
	if outDir == "" {
		outDir = "phptune-servers-" + opt.ID
	}
	// Made now, before any lab: a directory planted under the name is
	// refused before anything runs; files go in through its descriptor.
	out, err := createOutDir(outDir)
	if err != nil {
		return err
	}
	defer out.CloseRemovingIfEmpty()
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "servers: "+format+"\n", a...) }
	per, _ := opt.Budget().PerTune()
	say("run %s: %s tuned for up to %s each, then compared in %d interleaved rounds; files go to %s", opt.ID, strings.Join(opt.Servers, ", "), per.Round(time.Second), opt.Rounds, outDir)
	warnNeighbours(env)
	lo := serversLabOptions(env, f, plan, opt, db, out, say)
	res, runErr := servercompare.RunLab(ctx, lo)
	if res == nil {
		return runErr
	}
	if runErr != nil && !servercompare.IsInterrupted(runErr) {
		// A failure of the run itself (not of one server): what was
		// measured is still written below.
		say("the run failed: %v", runErr)
	}
	werr, err := printServers(env, f, out, res)
	if err != nil {
		return err
	}
	if werr != nil && runErr == nil {
		return werr
	}
	return runErr
}

// serversLabOptions are servercompare.RunLab's options for the planned run
// opt: results stored in db, each tuned server's files written into its
// own directory of out, progress said on stderr.
func serversLabOptions(env *Env, f *serversFlags, plan *serversPlan, opt servercompare.Options, db *store.DB, out *outdir.Dir, say func(string, ...any)) servercompare.LabOptions {
	phpVersion := "8.2"
	if b, err := phpfpm.Find(); err == nil {
		phpVersion = b.Version
	}
	return servercompare.LabOptions{Options: opt, Limits: plan.limits, Expect: f.stack.expect, Store: db, Environment: environment(env.Ctx),
		PHPVersion: phpVersion, MemAvailableB: memAvailable(), Say: say,
		TuneProgress: func(server string, p tune.Progress) {
			left := ""
			if p.Left > 0 {
				left = fmt.Sprintf(" · %s left", p.Left.Round(time.Second))
			}
			fmt.Fprintf(env.Stderr, "servers: tune %s [%s] trial %d/~%d %s: %.1f rps %s%s\n", server, p.Phase, p.Trial, p.Total, p.Label, p.RPS, p.Status, left)
		},
		OnTuned: func(server string, t *results.Tune) (string, error) {
			dir, err := out.Sub(server)
			if err != nil {
				return "", err
			}
			defer dir.Close()
			_, err = writeTuneFiles(dir, t, nil)
			return dir.Path(), err
		},
	}
}

// printServers writes the comparison's report files into out (werr: the
// error writing them) and prints it as text or JSON (err: the error
// printing).
func printServers(env *Env, f *serversFlags, out *outdir.Dir, res *results.Servers) (werr, err error) {
	rr := report.Run{Servers: res, Secrets: lab.Passwords()}
	paths, werr := report.WriteAll(out, rr)
	if f.asJSON {
		return werr, report.Render(env.Stdout, "json", rr)
	}
	if err := report.Render(env.Stdout, "text", rr); err != nil {
		return werr, err
	}
	if werr == nil {
		fmt.Fprintf(env.Stdout, "\nreport: %s\n", paths["html"])
	}
	fmt.Fprintf(env.Stdout, "stored as run %s: phptune report %s\n", res.ID, res.ID)
	return werr, nil
}
