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
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/phpfpm"
	"github.com/phptune/phptune/internal/recommend"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/search"
	"github.com/phptune/phptune/internal/store"
	"github.com/phptune/phptune/internal/tune"
)

func init() { register(newTuneCmd) }

// tuneFlags are phptune tune's command line.
type tuneFlags struct {
	labName, app, docroot string
	workload, objective   string
	slo, maxErrors        string
	memoryBudget          string
	timeBudget            time.Duration
	trialDuration         time.Duration
	trialWarmup           time.Duration
	conns                 int
	holdoutRounds         int
	strategy              string
	resume                string
	outDir                string
	knobsFile             string
	set                   []string
	challenges            string
	curve                 string
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
Every trial is stored in the results database as it finishes; Ctrl-C stops
cleanly and --resume RUN continues without redoing finished trials.

Files go to -o DIR (default ./phptune-tune-RUN): the recommendation in each
component's own syntax (php-fpm-pool.conf, php.ini, nginx.conf, my.cnf), a
knob file for 'phptune lab up --knobs', the diff, the evidence and the report.`,
		Example: `  phptune tune --app hello --time-budget 5m
  phptune tune --app wordpress --workload front --memory-budget 1G
  phptune tune --app wordpress --workload comment --max-errors 0.1% --slo 'p99<2s'
  phptune tune --lab mylab --workload /shop/ --objective latency
  phptune tune --resume 20261123-071502`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runTune(env, f, tuneCommandLine(c))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.labName, "lab", "", "tune this running lab (see phptune lab status)")
	fl.StringVar(&f.app, "app", "", "tune a lab of its own with this built-in app: "+appNames())
	fl.StringVar(&f.docroot, "docroot", "", "tune a lab of its own serving this PHP directory")
	fl.StringVar(&f.workload, "workload", "front", "front (GET /), comment (WordPress comment POSTs; the DB is reset between trials), a path like /shop/, or a scenario file")
	fl.StringVar(&f.objective, "objective", "throughput", "throughput or latency")
	fl.StringVar(&f.slo, "slo", "", "latency limit, e.g. 'p99<300ms'")
	fl.StringVar(&f.maxErrors, "max-errors", "0.1%", "highest error rate a configuration may have, e.g. 0.1% or 0")
	fl.StringVar(&f.memoryBudget, "memory-budget", "", "memory the stack may use, e.g. 2G; default 80% of MemAvailable at the start; 'none' for no limit")
	fl.DurationVar(&f.timeBudget, "time-budget", 15*time.Minute, "time for the whole tune, holdout and curve included")
	fl.IntVarP(&f.conns, "connections", "c", 50, "concurrency of the workload (the traffic you tune for)")
	fl.DurationVar(&f.trialDuration, "trial-duration", 10*time.Second, "measured time of each trial")
	fl.DurationVar(&f.trialWarmup, "trial-warmup", 3*time.Second, "warm-up of each trial, not measured")
	fl.IntVar(&f.holdoutRounds, "holdout-rounds", 4, "rounds of start against recommended at the end")
	fl.StringVar(&f.strategy, "strategy", "domain", "search strategy: domain (knee, pool size, paired comparisons) or grid (exhaustive pm × max_children, for comparison)")
	fl.StringVar(&f.challenges, "challenges", "", "categorical changes to decide, comma-separated (default all: "+challengeNames(search.DefaultChallenges)+", and for the comment workload "+challengeNames(search.WriteChallenges)+"); 'grid' for the exhaustive grid's ("+challengeNames(search.GridChallenges)+")")
	fl.StringVar(&f.curve, "curve", "", "connections at which start and recommended are also measured at the end, comma-separated, or 'none' (default: a quarter, half and twice -c); kept in the time budget when the work after the search fits a third of it")
	fl.StringVar(&f.resume, "resume", "", "continue an interrupted tune by its run ID")
	fl.StringVarP(&f.outDir, "output", "o", "", "directory for the files (default ./phptune-tune-RUN)")
	fl.StringVar(&f.knobsFile, "knobs", "", "start from the knob settings in this file")
	fl.StringArrayVar(&f.set, "set", nil, "start with this knob set, KNOB=VALUE (repeatable)")
	return cmd
}

// tuneCommandLine is the command as typed, for the record.
func tuneCommandLine(c *cobra.Command) string {
	parts := strings.Fields(c.CommandPath())
	c.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Value.Type() == "stringArray" {
			for _, v := range strings.Split(strings.Trim(fl.Value.String(), "[]"), ",") {
				parts = append(parts, "--"+fl.Name, shellQuote(v))
			}
			return
		}
		parts = append(parts, "--"+fl.Name, shellQuote(fl.Value.String()))
	})
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '=' || r == ':' || r == '%' || r == ',' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
	budgetMsg string
	outDir    string
}

func planTune(f *tuneFlags, command string) (*tunePlan, error) {
	p := &tunePlan{}
	if f.resume != "" {
		if f.labName != "" || f.app != "" || f.docroot != "" || len(f.set) > 0 || f.knobsFile != "" {
			return nil, usageErr("Try: phptune tune --resume "+f.resume, "--resume continues a run with its stored settings; give no --lab, --app, --docroot, --set or --knobs")
		}
	} else {
		n := 0
		for _, s := range []string{f.labName, f.app, f.docroot} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			return nil, usageErr("Try: phptune tune --app hello, or --lab NAME, or --docroot DIR", "give exactly one of --lab, --app and --docroot")
		}
		if f.app != "" {
			if _, err := apps.Lookup(f.app); err != nil {
				return nil, usageErr("Choose one of: "+appNames(), "--app %q is not a built-in app", f.app)
			}
		}
		if f.labName != "" && (len(f.set) > 0 || f.knobsFile != "") {
			return nil, usageErr("Try: phptune lab up --knobs FILE, then phptune tune --lab NAME", "--lab tunes the lab as it runs; --set and --knobs are for a lab of its own (--app, --docroot)")
		}
		set, err := knobAssignments(f.knobsFile, f.set)
		if err != nil {
			return nil, err
		}
		start, err := knob.Defaults().Apply(set)
		if err != nil {
			return nil, usageErr("See: phptune knobs", "%v", err)
		}
		if err := start.Validate(); err != nil {
			return nil, usageErr("See: phptune knobs", "starting configuration: %v", err)
		}
		p.start = start
	}
	if f.workload == "comment" && f.app != "" && f.app != "wordpress" {
		return nil, usageErr("Try: --app wordpress --workload comment", "--workload comment posts WordPress comments; --app %s has no comment form", f.app)
	}
	if f.objective != "throughput" && f.objective != "latency" {
		return nil, usageErr("Try: --objective throughput", "--objective %q: choose throughput or latency", f.objective)
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
	slo, err := parseSLO(f.slo)
	if err != nil {
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
		Command: command, App: f.app, Workload: f.workload, Objective: f.objective,
		Lab: f.labName, DocRoot: f.docroot, Conns: f.conns,
		Limits:     results.Limits{MemoryBudgetB: budget, MaxErrorRate: rate, SLOP99Ms: slo},
		TimeBudget: f.timeBudget, Duration: f.trialDuration, Warmup: f.trialWarmup,
		HoldoutRounds: f.holdoutRounds, Strategy: f.strategy,
	}
	if f.trialWarmup == 0 {
		p.opt.Warmup = -1 // tune's "none"
	}
	if f.docroot != "" {
		abs, err := filepath.Abs(f.docroot)
		if err != nil {
			return nil, usageErr("", "--docroot %s: %v", f.docroot, err)
		}
		p.opt.DocRoot = abs
	}
	switch f.challenges {
	case "":
	case "grid":
		for _, c := range search.GridChallenges {
			p.opt.Challenges = append(p.opt.Challenges, c.Name)
		}
	default:
		for _, name := range strings.Split(f.challenges, ",") {
			name = strings.TrimSpace(name)
			known := false
			for _, c := range search.KnownChallenges() {
				known = known || c.Name == name
			}
			if !known {
				return nil, usageErr("Choose from: "+challengeNames(search.KnownChallenges())+", or grid", "--challenges: unknown challenge %q", name)
			}
			p.opt.Challenges = append(p.opt.Challenges, name)
		}
	}
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
	return p, nil
}

func runTune(env *Env, f *tuneFlags, command string) error {
	ctx := env.Ctx
	plan, err := planTune(f, command)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(resultsDBPath()), 0o755); err != nil {
		return fmt.Errorf("creating phptune's directory: %w", err)
	}
	db, err := store.Open(ctx, resultsDBPath())
	if err != nil {
		return err
	}
	defer db.Close()

	opt := plan.opt
	if f.resume != "" {
		run, err := db.Run(ctx, f.resume)
		if err != nil {
			return usageErr("See the run IDs with: phptune report --list", "--resume %s: %v", f.resume, err)
		}
		var stored tune.Options
		if err := json.Unmarshal(run.Options, &stored); err != nil {
			return fmt.Errorf("run %s: stored options unreadable: %w", f.resume, err)
		}
		opt = stored
	} else {
		opt.ID = time.Now().UTC().Format("20060102-150405")
		if _, err := db.Run(ctx, opt.ID); err == nil {
			time.Sleep(time.Second)
			opt.ID = time.Now().UTC().Format("20060102-150405")
		}
	}
	outDir := plan.outDir
	if outDir == "" {
		outDir = "phptune-tune-" + opt.ID
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return usageErr("Try: -o DIR with a directory you can write", "output directory %s: %v", outDir, err)
	}
	say := func(format string, args ...any) { fmt.Fprintf(env.Stderr, "tune: "+format+"\n", args...) }
	say("run %s; %s; files go to %s", opt.ID, plan.budgetMsg, outDir)

	// The stack.
	var l *lab.Lab
	var restore knob.Config
	if opt.Lab != "" {
		if l, err = lab.Open(opt.Lab); err != nil {
			return usageErr("See: phptune lab status", "--lab %s: %v", opt.Lab, err)
		}
		restore = l.Config.Clone()
		if f.resume == "" {
			opt.Start = l.Config.Clone()
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
		say("bringing up lab %s (%s)", name, firstNonEmpty(opt.App, opt.DocRoot))
		app := opt.App
		if opt.DocRoot != "" {
			app = "" // the result names it "docroot"
		}
		l, err = lab.Up(ctx, lab.Options{Name: name, App: app, DocRoot: opt.DocRoot, Set: set})
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
			if opt.App == "" {
				opt.App = "docroot"
			}
		}
	}
	if restore != nil {
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := l.Apply(rctx, restore); err != nil {
				say("restoring lab %s's configuration: %v", l.Name, err)
			} else {
				say("lab %s runs its starting configuration again", l.Name)
			}
		}()
	}
	w, err := labstack.ParseWorkload(ctx, l, opt.Workload)
	if err != nil {
		return usageErr("Try: --workload front", "%v", err)
	}
	opt.ResetBetween = w.Writes
	if w.Writes {
		say("workload %s writes: the database is reset before every trial", w.Name)
	}

	phpVersion := "8.2"
	if b, err := phpfpm.Find(); err == nil {
		phpVersion = b.Version
	}
	usesDB := l.MariaDBSocket != ""
	envInfo := environment(ctx)
	t := &tune.Tuner{
		Stack:       labstack.New(l, w),
		Store:       db,
		Environment: envInfo,
		Progress:    tuneProgress(env.Stderr),
		RenderFiles: func(start, rec knob.Config) map[string]string {
			return recommend.Files(start, rec, recommend.Target{PHPVersion: phpVersion, UsesDB: usesDB})
		},
	}
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
			return err
		}
		return fmt.Errorf("tune %s: %w", opt.ID, err)
	}
	res.Environment = envInfo
	paths, err := writeTuneFiles(outDir, res)
	if err != nil {
		return err
	}
	report.TuneText(env.Stdout, res)
	fmt.Fprintf(env.Stdout, "\nfiles in %s:\n", outDir)
	for _, p := range paths {
		fmt.Fprintf(env.Stdout, "  %s\n", p)
	}
	fmt.Fprintf(env.Stdout, "\ncheck it yourself: phptune lab up --knobs %s\n", filepath.Join(outDir, "recommended.knobs"))
	return nil
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
// reports into dir and returns their paths.
func writeTuneFiles(dir string, res *results.Tune) ([]string, error) {
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
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte(res.Files[n]), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	if res.Diff != "" {
		p := filepath.Join(dir, "recommended.diff")
		if err := os.WriteFile(p, []byte(res.Diff), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	more, err := writeTuneReport(dir, res)
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
		fmt.Fprintf(w, "tune: [%s] trial %d/~%d %s: %.1f rps %s%s%s · %s elapsed%s\n",
			p.Phase, p.Trial, p.Total, p.Label, p.RPS, p.Status, reused, best, p.Elapsed.Round(time.Second), left)
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
func writeTuneReport(dir string, res *results.Tune) ([]string, error) {
	paths, err := report.WriteAll(dir, report.Run{Tune: res, Secrets: labPasswords()})
	if err != nil {
		return nil, err
	}
	return []string{paths["html"], paths["json"], paths["text"]}, nil
}
