package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/apps"
	"github.com/phptune/phptune/internal/capacity"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/outdir"
	"github.com/phptune/phptune/internal/phpfpm"
	"github.com/phptune/phptune/internal/recommend"
	"github.com/phptune/phptune/internal/redact"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/search"
	"github.com/phptune/phptune/internal/shellquote"
	"github.com/phptune/phptune/internal/sysctl"
	"github.com/phptune/phptune/internal/tune"
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
	// workloadSet: --workload was given (for --resume, whose workload
	// may have been stored redacted).
	workloadSet bool
	// maxErrorsSet: --max-errors was given.
	maxErrorsSet bool
}

func newTuneCmd(env *Env) *cobra.Command {
	f := &tuneFlags{}
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Find the best configuration of a stack under your limits, with evidence",
		Long: `phptune tune loads a lab with a workload, changes one thing at a time and
measures again, as the field reports did by hand: it finds the concurrency
knee, sizes the php-fpm pool to the CPU (or beyond it for pages that wait),
stops at the memory budget computed from the workers' measured PSS, decides
categorical knobs (pm mode, socket, opcache, JIT...) by interleaved paired
comparisons, and validates the result against the starting configuration in
fresh processes (the holdout).

The stack is a lab of its own for --app or --docroot (taken down at the end),
or a lab you run (--lab; its configuration is restored at the end).
--site NAME|DIR tunes a site of this host: a sealed lab of its own (as lab up
--site makes it) that starts from the site's live pool and php.ini, so the
start ("live") is production's configuration and Debian's default is measured
beside it (the distro baseline); requests carry the site's own Host. A running
site lab (--lab) starts from the live configuration it recorded too. What the
lab's code tried to reach outside the lab (refused by the seal) is counted
and shown.
Every trial is stored in the results database as it finishes; Ctrl-C stops
cleanly and --resume RUN continues without redoing finished trials.

Files go to -o DIR (default ./phptune-tune-RUN), made before the lab starts:
a new directory, or an empty one of yours only you can write (another
account's, a link or one holding files is refused). They are the
recommendation in each component's own syntax (php-fpm-pool.conf, php.ini,
nginx.conf, my.cnf), a knob file for 'phptune lab up --knobs', the diff, the
evidence and the report.
sysctl-phptune.conf holds the kernel settings the recommendation needs (for
/etc/sysctl.d/60-phptune.conf) or says none is needed: listen(2) silently
caps every backlog at net.core.somaxconn, and the summary says when a
recommended backlog was capped during the trials. The kernel's settings are
only read, unless --apply-sysctl (root) raises them for the run.

--server tunes a lab behind another web server than nginx: apache-event-fpm,
lighttpd-fpm, caddy-fpm or h2o-fpm (the php-fpm pool is sized),
apache-prefork-modphp (Apache's children run PHP: MaxRequestWorkers is sized)
or unit (NGINX Unit's application processes run PHP: unit.processes is sized;
build Unit first with phptune build unit). The web server's file is then
apache-phptune.conf (a drop-in for /etc/apache2/conf-available/),
lighttpd-phptune.conf (for /etc/lighttpd/conf-available/), a Caddyfile,
h2o.conf's keys, or unit-phptune.json for Unit's control API (see
docs/servers.md).

--objective capacity judges the recommendation by the highest request rate it
sustains within --slo in the open model (phptune capacity's search and SLO
grammar, default p99<500ms; --max-errors is the error limit unless the SLO has
an errors term). The search itself still ranks candidates on closed-model
throughput at -c; after the holdout the start and the recommendation each get
a capacity search, and the result gives both capacities and their ratio. Up to
40% of --time-budget (2 searches × 10 steps at the start's rate) is kept for
those searches; the closed-model curve is left out (docs/capacity.md).`,
		Example: `  phptune tune --app hello --time-budget 5m
  phptune tune --app wordpress --workload front --memory-budget 1G
  phptune tune --app wordpress --server apache-prefork-modphp -c 10
  phptune tune --app wordpress --workload comment --max-errors 0.1% --slo 'p99<2s'
  phptune tune --lab mylab --workload /shop/ --objective latency
  phptune tune --app io --objective capacity --slo 'p99<1s'
  phptune tune --resume 20261123-071502`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f.workloadSet = c.Flags().Changed("workload") || f.stack.fromLog != ""
			f.maxErrorsSet = c.Flags().Changed("max-errors")
			if f.server != "" {
				if f.resume != "" || f.stack.lab != "" {
					return usageErr("Try: phptune tune --app APP --server "+f.server, "--server picks the web server of a lab of its own (--app, --docroot); a resumed run keeps its own, a running lab (--lab) the one it was started with")
				}
				// --server X is --set server=X, after the other settings.
				f.stack.set = append(f.stack.set, knob.ServerKnob+"="+f.server)
			}
			return runTune(env, f, tuneCommandLine(c))
		},
	}
	fl := cmd.Flags()
	addRedactFlag(fl, &f.redact)
	f.stack.add(fl, "tune", labstack.WorkloadFront)
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
	return cmd
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

var sloRE = regexp.MustCompile(`^\s*p99\s*<=?\s*([0-9.]+)\s*(ms|s)?\s*$`)

// parseSLO reads 'p99<300ms' (a bare number is milliseconds).
func parseSLO(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	m := sloRE.FindStringSubmatch(s)
	if m == nil {
		return 0, usageErr("Try: --slo 'p99<300ms'", "--slo %q: write the p99 latency limit like p99<300ms or p99<2s", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v <= 0 {
		return 0, usageErr("Try: --slo 'p99<300ms'", "--slo %q: the limit must be a positive number", s)
	}
	if m[2] == "s" {
		v *= 1000
	}
	return v, nil
}

// checkCapacitySLO reads --slo for --objective capacity (default
// p99<500ms, as phptune capacity's), refusing it with the grammar, and an
// errors term given beside an explicit --max-errors.
func checkCapacitySLO(f *tuneFlags) (string, error) {
	s := f.slo
	if s == "" {
		s = "p99<500ms"
	}
	slo, err := capacity.ParseSLO(s)
	if err != nil {
		return "", usageErr("Try: --objective capacity --slo 'p99<500ms'; the grammar: "+sloHelp, "--slo %q: %s", s, strings.TrimPrefix(err.Error(), capacity.ErrSLO.Error()+": "))
	}
	if slo.Errors != nil && f.maxErrorsSet {
		return "", usageErr("Try: --slo '"+s+"' without --max-errors, or drop the errors term", "--max-errors and the --slo term %s both limit the errors; give one", slo.Errors)
	}
	return slo.String(), nil
}

// parseErrorRate reads "0.1%" or "0.001".
func parseErrorRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if pct {
		v /= 100
	}
	if err != nil || v < 0 || v >= 1 {
		return 0, usageErr("Try: --max-errors 0.1%", "--max-errors %q: give a rate between 0 and 100%%, like 0.1%% or 0", s)
	}
	return v, nil
}

// parseMemoryBudget reads a size, "none", or "" (80% of MemAvailable).
func parseMemoryBudget(s string) (int64, string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "0":
		return 0, "no memory budget", nil
	case "":
		avail := memAvailable()
		if avail <= 0 {
			return 0, "no memory budget (MemAvailable unreadable)", nil
		}
		b := avail / 10 * 8
		return b, fmt.Sprintf("memory budget %.1f GiB (80%% of MemAvailable; set --memory-budget)", float64(b)/(1<<30)), nil
	}
	b, err := knob.ParseSize(s)
	if err != nil || b < 16<<20 {
		return 0, "", usageErr("Try: --memory-budget 2G", "--memory-budget %q: give a size of at least 16M, like 512M or 2G, or none", s)
	}
	return b, "memory budget " + knob.FormatSize(b), nil
}

// tunePlan is everything checked before anything starts.
type tunePlan struct {
	opt       tune.Options
	start     knob.Config // for a lab of our own
	site      *siteLab    // --site: the site found, before its lab exists
	budgetMsg string
	outDir    string
	// lab and workload, for --lab: opened and parsed while checking.
	lab      *lab.Lab
	workload *labstack.Workload
}

// planTune checks the whole command line (and, for --lab, that the lab
// exists and the workload suits it) before anything is created: no output
// directory, database row or lab, and no restart of a running lab, comes
// before it.
func planTune(ctx context.Context, f *tuneFlags, command string) (*tunePlan, error) {
	p := &tunePlan{}
	if err := checkApplySysctl(f.applySysctl); err != nil {
		return nil, err
	}
	if err := checkRedactNames(f.redact); err != nil {
		return nil, err
	}
	if f.resume != "" {
		if f.stack.lab != "" || f.stack.app != "" || f.stack.docroot != "" || f.stack.site != "" || len(f.stack.set) > 0 || f.stack.knobsFile != "" {
			return nil, usageErr("Try: phptune tune --resume "+f.resume, "--resume continues a run with its stored settings; give no --lab, --app, --docroot, --site, --set or --knobs")
		}
		if err := f.stack.checkTraffic(true); err != nil {
			return nil, err
		}
	} else {
		if err := f.stack.check(false); err != nil {
			return nil, err
		}
		set, start, err := knobConfig(f.stack.knobsFile, f.stack.set)
		if err != nil {
			return nil, err
		}
		p.start = start
		if f.stack.site != "" {
			// The live configuration, --set and --knobs on top.
			if p.site, err = planSiteLab(ctx, f.stack.site, f.stack.user, f.stack.siteData); err != nil {
				return nil, err
			}
			if p.start, err = p.site.start(set); err != nil {
				return nil, err
			}
		}
	}
	f.stack.workload = f.stack.workloadSpec()
	if f.objective != "throughput" && f.objective != "latency" && f.objective != tune.ObjectiveCapacity {
		return nil, usageErr("Try: --objective throughput", "--objective %q: choose throughput, latency or capacity", f.objective)
	}
	if f.strategy != "domain" && f.strategy != "grid" {
		return nil, usageErr("Try: --strategy domain", "--strategy %q: choose domain or grid", f.strategy)
	}
	if f.conns < 1 || f.conns > 10000 {
		return nil, usageErr("Try: -c 50", "--connections %d: give 1 to 10000", f.conns)
	}
	if f.trialDuration < time.Second || f.trialWarmup < 0 {
		return nil, usageErr("Try: --trial-duration 10s --trial-warmup 3s", "--trial-duration must be at least 1s and --trial-warmup not negative")
	}
	if f.timeBudget < 0 {
		return nil, usageErr("Try: --time-budget 15m", "--time-budget must not be negative")
	}
	if f.holdoutRounds < 2 || f.holdoutRounds > 20 {
		return nil, usageErr("Try: --holdout-rounds 4", "--holdout-rounds %d: give 2 to 20 (a ratio needs pairs)", f.holdoutRounds)
	}
	if f.searchTrials < 0 || (f.searchTrials > 0 && f.strategy == "grid") {
		return nil, usageErr("Try: --search-trials 14, with the domain strategy", "--search-trials %d: give a positive number of trials (0: as the time budget allows), and not with --strategy grid, which measures its whole grid", f.searchTrials)
	}
	var slo float64
	var capSLO string
	var err error
	if f.objective == tune.ObjectiveCapacity {
		// The capacity SLO bounds the open model's latencies; it is not a
		// closed-model p99 limit on the search's trials.
		if capSLO, err = checkCapacitySLO(f); err != nil {
			return nil, err
		}
	} else if slo, err = parseSLO(f.slo); err != nil {
		return nil, err
	}
	rate, err := parseErrorRate(f.maxErrors)
	if err != nil {
		return nil, err
	}
	budget, msg, err := parseMemoryBudget(f.memoryBudget)
	if err != nil {
		return nil, err
	}
	p.budgetMsg = msg
	p.opt = tune.Options{
		Command: command, App: f.stack.app, Workload: f.stack.workload, Objective: f.objective, SLO: capSLO,
		Lab: f.stack.lab, DocRoot: f.stack.docroot, Site: f.stack.site, User: f.stack.user, Conns: f.conns,
		CPUs: f.stack.caps.CPUs, MemoryMaxB: f.stack.caps.MemoryMax, Expect: f.stack.expect, Host: f.stack.host,
		Limits:     results.Limits{MemoryBudgetB: budget, MaxErrorRate: rate, SLOP99Ms: slo},
		TimeBudget: f.timeBudget, Duration: f.trialDuration, Warmup: f.trialWarmup,
		HoldoutRounds: f.holdoutRounds, Strategy: f.strategy, SearchTrials: f.searchTrials,
	}
	if f.trialWarmup == 0 {
		p.opt.Warmup = -1 // tune's "none"
	}
	var be *tune.BudgetError
	if _, err := p.opt.BudgetPlan(); errors.As(err, &be) {
		return nil, usageErr("Try: --time-budget "+be.Min.String(), "%v", err)
	}
	for _, v := range f.challenges {
		specs, err := tune.SplitChallengeFlag(v)
		if err != nil {
			return nil, usageErr("Give a known name ("+challengeNames(search.KnownChallenges())+"), grid, or KNOB=VALUE;KNOB=VALUE (see phptune knobs)", "--challenges: %v", err)
		}
		for _, sp := range specs {
			if !slices.Contains(p.opt.Challenges, sp) {
				p.opt.Challenges = append(p.opt.Challenges, sp)
			}
		}
	}
	switch b := strings.TrimSpace(f.baselines); b {
	case "none", "":
	default:
		for _, n := range strings.Split(b, ",") {
			n = strings.TrimSpace(n)
			if err := tune.CheckBaselines([]string{n}); err != nil {
				return nil, usageErr("Try: --baselines calculator,2xcores, or --baselines none", "--baselines: %v", err)
			}
			if !slices.Contains(p.opt.Baselines, n) {
				p.opt.Baselines = append(p.opt.Baselines, n)
			}
		}
	}
	p.opt.MemAvailableB = memAvailable()
	switch f.curve {
	case "":
	case "none":
		p.opt.NoCurve = true
	default:
		for _, v := range strings.Split(f.curve, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 || n > 100000 {
				return nil, usageErr("Give connection counts such as --curve 5,10,100, or --curve none.", "--curve: %q is not a number of connections", v)
			}
			if n != f.conns && !slices.Contains(p.opt.CurveConns, n) {
				p.opt.CurveConns = append(p.opt.CurveConns, n)
			}
		}
		if len(p.opt.CurveConns) == 0 {
			p.opt.NoCurve = true
		}
	}
	p.outDir = f.outDir
	// A resumed tune writes on into its directory (reopenOutDir checks
	// it): only a new one must be empty.
	if f.resume == "" {
		if err := checkOutDir(f.outDir); err != nil {
			return nil, err
		}
	}
	if f.resume == "" {
		// The stack last: --lab reads the lab's state (and, for the
		// comment workload, its database).
		app := f.stack.app
		if f.stack.site != "" {
			app = lab.SiteApp
		}
		if p.lab, p.workload, err = checkStack(ctx, f.stack.lab, app, f.stack.docroot, f.stack.workload); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkStack checks the stack a tune would run on: the lab exists (--lab)
// or the docroot can be served, and the workload can run on it. For a lab
// it returns the lab and the parsed workload; for a lab of its own, which
// does not exist yet, it checks what it can without it.
func checkStack(ctx context.Context, labName, app, docroot, workload string) (*lab.Lab, *labstack.Workload, error) {
	if labName != "" {
		l, err := lab.Open(labName)
		if err != nil {
			return nil, nil, usageErr("See the running labs with: phptune lab status; start one with: phptune lab up --name "+labName, "--lab %s: %v", labName, err)
		}
		w, err := labstack.ParseWorkload(ctx, l, workload)
		if err != nil {
			return nil, nil, usageErr("Try: --workload front, --workload /path, or a scenario file", "--workload: %v", err)
		}
		return l, &w, nil
	}
	if docroot != "" {
		if err := apps.CheckDocRoot(docroot); err != nil {
			return nil, nil, usageErr("Try: --docroot DIR, a directory holding your app's index.php", "%v", err)
		}
		app = "docroot"
	}
	return nil, nil, checkWorkload(workload, app)
}

// checkWorkload checks a workload for a lab running app before the lab
// exists: what labstack.ParseWorkload would refuse without asking the lab.
func checkWorkload(spec, app string) error {
	switch {
	case spec == "" || spec == labstack.WorkloadFront || strings.HasPrefix(spec, "/"):
		return nil
	case strings.HasPrefix(spec, labstack.LogPrefix) || strings.HasPrefix(spec, labstack.LogPostPrefix):
		if _, _, err := labstack.WorkloadFromSpec(spec); err != nil {
			return usageErr("Try: --workload-from-log /var/log/nginx/access.log", "--workload-from-log: %v", err)
		}
		return nil
	}
	if need, ok := labstack.Builtin(spec); ok {
		if need != "" && app != need {
			return usageErr("Try: --app "+need+" --workload "+spec, "--workload %s needs the %s app; the %s app has no such pages", spec, need, app)
		}
		return nil
	}
	fh, err := os.Open(spec)
	if err != nil {
		return usageErr("Try: --workload front, --workload /path, or a scenario file", "--workload %q is not front, comment, a path starting with / or a readable scenario file: %v", spec, err)
	}
	defer fh.Close()
	if _, err := load.ParseScenario(fh); err != nil {
		return usageErr("Each line of a scenario file: WEIGHT METHOD PATH [BODY], e.g. 1 GET /index.php", "--workload %s: %v", spec, err)
	}
	return nil
}

func runTune(env *Env, f *tuneFlags, command string) error {
	ctx := env.Ctx
	plan, err := planTune(ctx, f, command)
	if err != nil {
		return err
	}
	if f.resume != "" {
		if _, err := os.Stat(resultsDBPath()); err != nil {
			return usageErr("See the run IDs with: phptune report --list", "--resume %s: there is no results database at %s", f.resume, resultsDBPath())
		}
	}
	db, err := openResults(ctx, f.redact)
	if err != nil {
		return err
	}
	defer db.Close()

	opt := plan.opt
	l, w := plan.lab, plan.workload
	if f.resume != "" {
		run, err := db.Run(ctx, f.resume)
		if err != nil {
			return usageErr("See the run IDs with: phptune report --list", "--resume %s: %v", f.resume, err)
		}
		var stored tune.Options
		if err := json.Unmarshal(run.Options, &stored); err != nil {
			return fmt.Errorf("run %s: stored options unreadable: %w", f.resume, err)
		}
		db.Redact(run.Redact...)
		if stored.Workload, err = resumeWorkload(f, stored.Workload, db.RedactNames()); err != nil {
			return err
		}
		opt = stored
		// The stored stack is checked like a new one's, still before
		// anything is created.
		app := opt.App
		if opt.DocRoot != "" {
			app = "" // checkStack names it docroot
		}
		if opt.Site != "" {
			// Found on the host again: its lab is made anew.
			if plan.site, err = planSiteLab(ctx, opt.Site, opt.User, siteDataFlags{from: "auto"}); err != nil {
				return err
			}
		}
		if l, w, err = checkStack(ctx, opt.Lab, app, opt.DocRoot, opt.Workload); err != nil {
			return err
		}
	} else {
		opt.ID = time.Now().UTC().Format("20060102-150405")
		if _, err := db.Run(ctx, opt.ID); err == nil {
			time.Sleep(time.Second)
			opt.ID = time.Now().UTC().Format("20060102-150405")
		}
	}
	outDir := plan.outDir
	if outDir == "" && f.resume != "" && opt.OutDir != "" {
		outDir = opt.OutDir // where the interrupted session was writing
	}
	if outDir == "" {
		outDir = "phptune-tune-" + opt.ID
	}
	if abs, err := filepath.Abs(outDir); err == nil && f.resume == "" {
		opt.OutDir = abs
	}
	// Made now, before the lab: a directory planted under the name is
	// refused before anything runs; files go in through its descriptor.
	makeOut := createOutDir
	if f.resume != "" {
		makeOut = reopenOutDir
	}
	out, err := makeOut(outDir)
	if err != nil {
		return err
	}
	defer out.CloseRemovingIfEmpty()
	say := func(format string, args ...any) { fmt.Fprintf(env.Stderr, "tune: "+format+"\n", args...) }
	say("run %s; %s; files go to %s", opt.ID, plan.budgetMsg, outDir)

	// The stack.
	var restore knob.Config
	var kernelRun *sysctl.Run
	if opt.Lab != "" {
		restore = l.Config.Clone()
		if f.resume == "" {
			opt.Start = l.Config.Clone()
			if _, err := useLabLiveStart(l, &opt, say); err != nil {
				return err
			}
		}
		if opt.App == "" {
			opt.App = l.App
		}
	} else {
		name := fmt.Sprintf("tune-%d", os.Getpid())
		set := []string{}
		start := plan.start
		if f.resume != "" {
			start = opt.Start
		}
		for k, v := range start {
			set = append(set, k+"="+v)
		}
		sort.Strings(set)
		warnNeighbours(env)
		if f.applySysctl {
			// Before the lab: its sockets open under the raised
			// settings; restored after it is down (defers run last
			// first).
			kr, err := applySysctl(env, tuneNeed(opt, start), "tune")
			if err != nil {
				return err
			}
			kernelRun = kr
			defer restoreSysctl(env, kr, "tune")
		}
		say("bringing up lab %s (%s)", name, firstNonEmpty(opt.Site, opt.App, opt.DocRoot))
		app := opt.App
		if opt.DocRoot != "" {
			app = "" // the result names it "docroot"
		}
		labOpt := lab.Options{Name: name, App: app, DocRoot: opt.DocRoot, User: opt.User, CPUs: opt.CPUs, MemoryMax: opt.MemoryMaxB, Set: set, OwnedBy: "tune"}
		if plan.site != nil {
			plan.site.say(env.Stderr)
			siteOpt, err := plan.site.options(env, name, "tune", opt.User, nil, opt.MemoryMaxB)
			if err != nil {
				return err
			}
			labOpt = siteOpt
			labOpt.Set, labOpt.CPUs = set, opt.CPUs
			labOpt.Progress = func(s string) { say("lab: %s", s) }
		}
		l, err = lab.Up(ctx, labOpt)
		if err != nil {
			return err
		}
		defer func() {
			if derr := lab.Down(l.Name); derr != nil {
				say("taking lab %s down: %v", l.Name, derr)
			} else {
				say("lab %s is down", l.Name)
			}
		}()
		if f.resume == "" {
			opt.Start = start
			if plan.site != nil {
				// The live site's configuration: "before" is
				// production's, Debian's default a baseline beside it.
				opt.UseLiveStart(start)
				opt.App = lab.SiteApp
			}
			if opt.App == "" {
				opt.App = "docroot"
			}
		}
		// Checked before the lab existed as far as it could be; what
		// needs the lab (a post open to comments) is checked now.
		pw, err := labstack.ParseWorkload(ctx, l, opt.Workload)
		if err != nil {
			return fmt.Errorf("workload %s on lab %s: %w", redact.Text(opt.Workload, db.RedactNames()), l.Name, err)
		}
		w = &pw
	}
	if restore != nil {
		defer restoreLab(ctx, l, restore, say)
		if f.applySysctl {
			// Every trial restarts the lab's servers, so they listen
			// under the raised settings; restored before the lab gets
			// its configuration back (and its sockets the host's
			// limits).
			kr, err := applySysctl(env, tuneNeed(opt, opt.Start), "tune")
			if err != nil {
				return err
			}
			kernelRun = kr
			defer restoreSysctl(env, kr, "tune")
		}
	}
	w.Expect, w.Host = opt.Expect, opt.Host
	stack := labstack.New(l, *w)
	if err := checkStartPage(ctx, env, stack, say); err != nil {
		return err
	}
	opt.ResetBetween = w.Writes
	if w.Writes {
		say("workload %s writes: the database is reset before every trial", redact.Text(w.Name, db.RedactNames()))
	}
	var findings []results.ProfileFinding
	if f.profile && f.resume == "" {
		if findings, err = profileStart(ctx, l, *w, &opt, out, say); err != nil {
			return err
		}
	}

	phpVersion := "8.2"
	if b, err := phpfpm.Find(); err == nil {
		phpVersion = b.Version
	}
	usesDB := l.MariaDBSocket != ""
	envInfo := environment(ctx)
	// The recommendation's backlogs are added by the tuner.
	completeKernelLimits(envInfo.KernelLimits, l, kernelRun, nil)
	t := &tune.Tuner{
		Stack:       stack,
		Store:       db,
		Environment: envInfo,
		Progress:    tuneProgress(env.Stderr),
		RenderFiles: func(start, rec knob.Config) map[string]string {
			return recommend.Files(start, rec, recommend.Target{PHPVersion: phpVersion, UsesDB: usesDB, Kernel: envInfo.KernelLimits, Conns: opt.Conns})
		},
	}
	// What a sealed lab's code tries to reach outside, over the run.
	blocked := labstack.NewBlockedCounter(ctx, l)
	var res *results.Tune
	if f.resume != "" {
		say("resuming; finished trials are taken from the database")
		res, err = t.Resume(ctx, opt.ID)
	} else {
		res, err = t.Run(ctx, opt)
	}
	if err != nil {
		var ie *tune.InterruptedError
		if errors.As(err, &ie) {
			if redact.Text(opt.Workload, db.RedactNames()) != opt.Workload {
				return fmt.Errorf("%w, --workload '...' (the workload's secret was not stored)", err)
			}
			return err
		}
		return fmt.Errorf("tune %s: %w", opt.ID, err)
	}
	res.Environment = envInfo
	res.ProfileFindings = findings
	var blockedWarning string
	if res.Blocked, blockedWarning = blocked.Since(ctx); blockedWarning != "" {
		res.Warnings = append(res.Warnings, blockedWarning)
	}
	var ran []map[string]string
	for _, tr := range res.Trials {
		ran = append(ran, tr.Config)
	}
	envInfo.PHPBuilds = buildsOf(ran)
	// The result as stored: nothing written below holds a secret.
	if err := redact.Value(res, db.RedactNames()); err != nil {
		return err
	}
	paths, err := writeTuneFiles(out, res, db.RedactNames())
	if err != nil {
		return err
	}
	report.TuneText(env.Stdout, res)
	printBuilds(env.Stdout, envInfo.PHPBuilds)
	fmt.Fprintf(env.Stdout, "\nfiles in %s:\n", outDir)
	for _, p := range paths {
		fmt.Fprintf(env.Stdout, "  %s\n", p)
	}
	fmt.Fprintf(env.Stdout, "\ncheck it yourself: phptune lab up --knobs %s\n", filepath.Join(outDir, "recommended.knobs"))
	return nil
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

// writeTuneFiles writes the recommendation's files, the diff and the
// reports into dir and returns their paths. names are the run's --redact
// names, for the reports' own redaction.
func writeTuneFiles(dir *outdir.Dir, res *results.Tune, redactNames []string) ([]string, error) {
	var paths []string
	names := make([]string, 0, len(res.Files))
	for n := range res.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.ContainsAny(n, `/\`) || n == "" || n[0] == '.' {
			continue // never write outside dir
		}
		if err := dir.WriteFile(n, []byte(res.Files[n])); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(dir.Path(), n))
	}
	if res.Diff != "" {
		if err := dir.WriteFile("recommended.diff", []byte(res.Diff)); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(dir.Path(), "recommended.diff"))
	}
	more, err := writeTuneReport(dir, res, redactNames)
	if err != nil {
		return paths, err
	}
	return append(paths, more...), nil
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

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memAvailable() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n * 1024
		}
	}
	return 0
}

// writeTuneReport writes report.html, result.json and summary.txt.
func writeTuneReport(dir *outdir.Dir, res *results.Tune, names []string) ([]string, error) {
	paths, err := report.WriteAll(dir, report.Run{Tune: res, Secrets: labPasswords(), RedactNames: names})
	if err != nil {
		return nil, err
	}
	return []string{paths["html"], paths["json"], paths["text"]}, nil
}

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
