package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/base/shellquote"
	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

func init() { register(newTuneCmd) }

// tuneFlags are phptune tune's command line.
type tuneFlags struct {
	// stack is the stack tuned and its traffic (--lab, --app, --site,
	// --workload...).
	stack          stackFlags
	objective      string
	slo, maxErrors string
	memoryBudget   string
	timeBudget     time.Duration
	trialDuration  time.Duration
	trialWarmup    time.Duration
	conns          int
	holdoutRounds  int
	searchTrials   int
	strategy       string
	resume         string
	outDir         string
	server         string
	challenges     []string
	profile        bool
	baselines      string
	curve          string
	redact         []string
	applySysctl    bool
	// eng is --engine and --workers; tune refuses Locust (checkEngine).
	eng engineFlags
	// workloadSet: --workload was given (for --resume, whose workload
	// may have been stored redacted).
	workloadSet bool
	// maxErrorsSet: --max-errors was given.
	maxErrorsSet bool
}

func newTuneCmd(env *Env) *cobra.Command {
	f := &tuneFlags{}
	cmd := &cobra.Command{
		Use:     "tune",
		Short:   "Find the best configuration of a stack under your limits, with evidence",
		Long:    tuneLong,
		Example: tuneExample,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runTuneCommand(env, f, c)
		},
	}
	f.add(cmd.Flags(), "tune")
	return cmd
}

// runTuneCommand runs tune, or a command that is tune with other defaults
// (demo), from its parsed command line.
func runTuneCommand(env *Env, f *tuneFlags, c *cobra.Command) error {
	f.workloadSet = c.Flags().Changed("workload") || f.stack.fromLog != ""
	f.maxErrorsSet = c.Flags().Changed("max-errors")
	if f.server != "" {
		if f.resume != "" || f.stack.lab != "" {
			return usageErr("Try: phptune "+c.Name()+" --app APP --server "+f.server, "--server picks the web server of a lab of its own (--app, --docroot); a resumed run keeps its own, a running lab (--lab) the one it was started with")
		}
		// --server X is --set server=X, after the other settings.
		f.stack.set = append(f.stack.set, knob.ServerKnob+"="+f.server)
	}
	return runTune(env, f, tuneCommandLine(c))
}

// setFlagDefaults gives flags of fl other defaults (a command that is
// another with other defaults: demo is tune). The default is set as the
// value and shown by --help; it panics on an unknown flag or a value the
// flag refuses, which the command's tests reach at once.
func setFlagDefaults(fl *pflag.FlagSet, defaults map[string]string) {
	for name, v := range defaults {
		f := fl.Lookup(name)
		if f == nil {
			panic("setFlagDefaults: no flag --" + name)
		}
		if err := f.Value.Set(v); err != nil {
			panic("setFlagDefaults: --" + name + " " + v + ": " + err.Error())
		}
		f.DefValue = f.Value.String()
	}
}

// add registers tune's flags on fl.
func (f *tuneFlags) add(fl *pflag.FlagSet, command string) {
	addRedactFlag(fl, &f.redact)
	f.stack.add(fl, command, workload.Front)
	fl.StringVar(&f.objective, "objective", "throughput", "throughput, latency, or capacity (the highest request rate sustained within --slo in the open model; see phptune capacity)")
	fl.StringVar(&f.slo, "slo", "", "latency limit, e.g. 'p99<300ms'; with --objective capacity the SLO the capacity is measured at, in phptune capacity's grammar (default p99<500ms)")
	fl.StringVar(&f.maxErrors, "max-errors", "0.1%", "highest error rate a configuration may have, e.g. 0.1% or 0")
	fl.StringVar(&f.memoryBudget, "memory-budget", "", "memory the stack may use, e.g. 2G; default 80% of MemAvailable at the start; 'none' for no limit")
	fl.DurationVar(&f.timeBudget, "time-budget", 15*time.Minute, "time for the whole tune, holdout and curve included")
	fl.IntVarP(&f.conns, "connections", "c", 50, "concurrency of the workload (the traffic you tune for)")
	fl.DurationVar(&f.trialDuration, "trial-duration", 10*time.Second, "measured time of each trial")
	fl.DurationVar(&f.trialWarmup, "trial-warmup", 3*time.Second, "warm-up of each trial, not measured")
	fl.IntVar(&f.holdoutRounds, "holdout-rounds", 4, "rounds of start against recommended at the end; an undecided holdout may add up to 3 times as many while the time budget allows")
	fl.IntVar(&f.searchTrials, "search-trials", 0, "at most this many search trials (the drift, holdout and curve trials not counted); 0: the race of the challenges also spends what the time budget spares on more rounds for the undecided ones")
	fl.StringVar(&f.strategy, "strategy", "domain", "search strategy: domain (knee, pool size, paired comparisons) or grid (exhaustive pm × max_children, for comparison)")
	fl.BoolVar(&f.profile, "profile", false, "profile the starting configuration first (phptune profile, one round) and add the challenges its findings point to (huge pages, file lookups, opcache sizes, the FastCGI socket...)")
	fl.StringArrayVar(&f.challenges, "challenges", nil, "a categorical change to decide (repeatable): a known name, comma-separated known names, 'grid' for the exhaustive grid's ("+challengeNames(search.GridChallenges)+"), or knob assignments separated by ';', e.g. 'opcache.jit=tracing;opcache.jit_buffer_size=64M' (default: "+challengeNames(search.DefaultChallenges)+", and for the comment workload "+challengeNames(search.WriteChallenges)+"; decided only when named: "+challengeNames(search.TopologyChallenges)+", several php-fpm pools behind nginx and kept FastCGI connections at the most the pool allows)")
	fl.StringVar(&f.baselines, "baselines", "calculator,2xcores", "rules of thumb measured in the holdout beside the recommendation when they fit the memory and time budgets: calculator (0.9 × MemAvailable / worker RSS, dynamic), 2xcores (a static pool of 2 × cores), comma-separated, or none")
	fl.StringVar(&f.curve, "curve", "", "connections at which start and recommended are also measured at the end, comma-separated, or 'none' (default: a quarter, half and twice -c); kept in the time budget when the work after the search fits a third of it")
	fl.StringVar(&f.resume, "resume", "", "continue an interrupted tune by its run ID")
	fl.StringVarP(&f.outDir, "output", "o", "", "a new or empty directory of yours for the files (default ./phptune-tune-RUN)")
	fl.StringVar(&f.server, "server", "", "tune a lab of its own behind this web server: "+strings.Join(knob.Servers, "|")+" (shorthand for --set server=X; default nginx-fpm; see docs/servers.md)")
	addApplySysctlFlag(fl, &f.applySysctl)
	f.eng.addLocal(fl)
	fl.Lookup("engine").Usage = "load generator: phptune (its own); locust is refused here (Locust's start-up in every trial would break the time budget's plan): check the recommendation on Locust with phptune compare --engine locust"
}

// checkEngine refuses --engine locust: tune runs dozens of trials and plans
// its time budget as warm-up plus duration each, and Locust adds its own
// start-up (a master and its workers) and a throwaway warm-up run to every
// one. compare --engine locust measures the recommendation on Locust.
func (f *tuneFlags) checkEngine() error {
	if err := f.eng.check(); err != nil {
		return err
	}
	if f.eng.engine != engineLocust {
		return nil
	}
	return usageErr("Tune with phptune's generator (leave --engine out), then measure the result on Locust: phptune compare --app APP --engine locust --workers 2 default tuned=DIR/recommended.knobs",
		"--engine locust: tune cannot run its trials on Locust, whose start-up (a master and its workers) and throwaway warm-up run come with every trial and break the time budget's plan")
}

// tuneCommandLine is the command as typed, for the record, with its
// secrets redacted (see redact.Args; with the command's --redact names).
func tuneCommandLine(c *cobra.Command) string {
	var names []string
	if fl := c.Flags().Lookup("redact"); fl != nil {
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			names = sv.GetSlice()
		}
	}
	args := strings.Fields(c.CommandPath())
	c.Flags().Visit(func(fl *pflag.Flag) {
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+fl.Name, v)
			}
			return
		}
		args = append(args, "--"+fl.Name, fl.Value.String())
	})
	parts := redact.Args(args, names)
	for i, p := range parts {
		if i >= len(strings.Fields(c.CommandPath())) {
			parts[i] = shellquote.Quote(p)
		}
	}
	return strings.Join(parts, " ")
}

// resumeWorkload is the workload a resumed run loads: the stored one, or,
// when it was stored with a secret redacted, the same workload given
// again with --workload.
func resumeWorkload(f *tuneFlags, stored string, names []string) (string, error) {
	if !strings.Contains(stored, redact.Placeholder) {
		if f.workloadSet && f.stack.workload != stored {
			return "", usageErr("Try: phptune tune --resume "+f.resume, "--resume continues run %s with its workload %s; leave out --workload", f.resume, stored)
		}
		return stored, nil
	}
	if !f.workloadSet {
		return "", usageErr("Try: phptune tune --resume "+f.resume+" --workload '"+stored+"' with the secret filled in",
			"run %s's workload was stored with its secret redacted (%s): give the workload again with --workload", f.resume, stored)
	}
	if redact.Text(f.stack.workload, names) != stored && redact.URL(f.stack.workload, names) != stored {
		return "", usageErr("Try: phptune tune --resume "+f.resume+" --workload '"+stored+"' with the secret filled in",
			"--workload: run %s's workload was %s, which this one is not", f.resume, stored)
	}
	return f.stack.workload, nil
}

func challengeNames(cs []search.Challenge) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return strings.Join(n, ",")
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// tuneProgress prints one line per trial.
func tuneProgress(w io.Writer) func(tune.Progress) {
	return func(p tune.Progress) {
		left := ""
		if p.Left > 0 {
			left = fmt.Sprintf(" · %s left", p.Left.Round(time.Second))
		}
		reused := ""
		if p.Reused {
			reused = " (stored)"
		}
		best := ""
		if p.BestRPS > 0 {
			best = fmt.Sprintf(" · best %.1f rps (%s)", p.BestRPS, p.BestLabel)
		}
		logged := ""
		if p.LogErrors != "" {
			logged = " · server logs: " + p.LogErrors
		}
		fmt.Fprintf(w, "tune: [%s] trial %d/~%d %s: %.1f rps %s%s%s%s · %s elapsed%s\n",
			p.Phase, p.Trial, p.Total, p.Label, p.RPS, p.Status, reused, logged, best, p.Elapsed.Round(time.Second), left)
	}
}

// memAvailable is stacksession.MemAvailable.
func memAvailable() int64 { return stacksession.MemAvailable() }

// tuneNeed is what a tune asks of the kernel: the start's backlogs and
// those the search gives every candidate for the most connections it
// measures (search.FitConnections), and those connections.
func tuneNeed(opt tune.Options, start knob.Config) sysctl.Need {
	conns := opt.Conns
	curve := opt.CurveConns
	if curve == nil && !opt.NoCurve {
		curve = tune.DefaultCurveConns(opt.Conns)
	}
	for _, c := range curve {
		conns = max(conns, c)
	}
	if start == nil {
		start = knob.Defaults()
	}
	return sysctl.NeedOf([]knob.Config{start, search.FitConnections(start, conns)}, conns)
}
