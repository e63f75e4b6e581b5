package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/shellquote"
	"github.com/phptune/phptune/internal/decide/capacity"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
)

func init() { register(newCapacityCmd) }

// capacityFlags are phptune capacity's command line.
type capacityFlags struct {
	// stack is the stack measured and its traffic.
	stack             stackFlags
	slo, maxErrors    string
	startRate         float64
	minRate, maxRate  float64
	growth, tolerance float64
	step, stepWarmup  time.Duration
	timeBudget        time.Duration
	maxSteps          int
	probeConns        int
	asJSON, noSave    bool
	reportFile        string
	redact            []string
	// eng is --engine and --workers.
	eng engineFlags
}

// sloHelp is the --slo grammar, for the help and the refusals.
const sloHelp = `p99<500ms, p95<1s, p99<500ms,errors<0.1% (terms pNN<DURATION with NN one of 50, 90, 95, 99, 99.9 and a duration of 1ms to 60s with its unit, or errors<PERCENT%; <= also allowed; comma-separated)`

func newCapacityCmd(env *Env) *cobra.Command {
	f := &capacityFlags{}
	cmd := &cobra.Command{
		Use:     "capacity",
		Short:   "Find the highest request rate a stack sustains within a latency SLO (open model)",
		Long:    capacityLong,
		Example: capacityExample,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runCapacity(env, f, c)
		},
	}
	fl := cmd.Flags()
	f.stack.add(fl, "capacity", workload.Front)
	fl.StringVar(&f.slo, "slo", "p99<500ms", "latency SLO, e.g. 'p99<500ms' or 'p95<1s,errors<0.1%' (grammar above)")
	fl.StringVar(&f.maxErrors, "max-errors", "0", "highest error rate a step may have, e.g. 0.1% or 0 (unless --slo has an errors term)")
	fl.Float64Var(&f.startRate, "start-rate", 0, "first rate in requests/s (default: half the throughput of a closed-model probe)")
	fl.Float64Var(&f.minRate, "min-rate", capacity.DefaultMinRate, "lowest rate tried, requests/s (at least 1)")
	fl.Float64Var(&f.maxRate, "max-rate", capacity.DefaultMaxRate, "highest rate tried, requests/s")
	fl.Float64Var(&f.growth, "growth", capacity.DefaultGrowth, "factor between ramp steps (1.1 to 10)")
	fl.Float64Var(&f.tolerance, "tolerance", capacity.DefaultTolerance, "stop when the failing rate is within this fraction above the passing one (0.02 to 1)")
	fl.DurationVar(&f.step, "step", 0, "measured time of each step (default: the rule above)")
	fl.DurationVar(&f.stepWarmup, "step-warmup", 0, "warm-up of each step (default: the rule above)")
	fl.DurationVar(&f.timeBudget, "time-budget", 15*time.Minute, "time for the whole search, probe included (0: none)")
	fl.IntVar(&f.maxSteps, "max-steps", capacity.DefaultMaxSteps, "most steps the search may run")
	fl.IntVar(&f.probeConns, "probe-connections", 50, "connections of the closed-model probe that picks the first rate")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON (docs/results-schema.md, kind capacity)")
	fl.BoolVar(&f.noSave, "no-save", false, "do not store the result in the results database nor write the HTML report")
	fl.StringVar(&f.reportFile, "report", "", "HTML report file (default ./phptune-report-RUN.html)")
	addRedactFlag(fl, &f.redact)
	f.eng.addLocal(fl)
	return cmd
}

// capacityFlagOf names the flag behind a capacity.Options field.
var capacityFlagOf = map[string]string{
	"StartRate": "--start-rate", "MinRate": "--min-rate", "MaxRate": "--max-rate", "Growth": "--growth",
	"Tolerance": "--tolerance", "Warmup": "--step-warmup", "Duration": "--step", "MaxSteps": "--max-steps",
	"TimeBudget": "--time-budget", "SLO": "--slo", "Errors": "--max-errors",
}

// capacityHints say what to type instead, by flag.
var capacityHints = map[string]string{
	"--start-rate":  "Try: --start-rate 100 (requests/s, at least 1; leave it out to probe)",
	"--min-rate":    "Try: --min-rate 1",
	"--max-rate":    "Try: --max-rate 100000",
	"--growth":      "Try: --growth 1.5",
	"--tolerance":   "Try: --tolerance 0.1",
	"--step":        "Try: --step 10s (or leave it out for the rule)",
	"--step-warmup": "Try: --step-warmup 2s",
	"--max-steps":   "Try: --max-steps 24",
	"--time-budget": "Try: --time-budget 10m, or 0 for none",
	"--slo":         "Try: --slo 'p99<500ms'",
	"--max-errors":  "Try: --max-errors 0.1%",
}

// planCapacity checks the command line and returns the search's options,
// before anything starts: the SLO's grammar, rates of at least 1 rps, and a
// time budget that holds the probe and one step.
func planCapacity(f *capacityFlags, c *cobra.Command) (labstack.CapacityOptions, error) {
	var o labstack.CapacityOptions
	if err := checkRedactNames(f.redact); err != nil {
		return o, err
	}
	if err := f.stack.check(false); err != nil {
		return o, err
	}
	slo, err := capacity.ParseSLO(f.slo)
	if err != nil {
		return o, usageErr("Try: --slo 'p99<500ms'; the grammar: "+sloHelp, "--slo %q: %s", f.slo, strings.TrimPrefix(err.Error(), capacity.ErrSLO.Error()+": "))
	}
	o.SLO = slo
	if slo.Errors != nil && c.Flags().Changed("max-errors") {
		return o, usageErr("Try: --slo '"+f.slo+"' without --max-errors, or drop the errors term", "--max-errors and the --slo term %s both limit the errors; give one", slo.Errors)
	}
	rate, err := parseErrorRate(f.maxErrors)
	if err != nil {
		return o, err
	}
	o.Errors = capacity.ErrorLimit{Rate: rate}
	if f.probeConns < 1 || f.probeConns > 10000 {
		return o, usageErr("Try: --probe-connections 50", "--probe-connections %d: give 1 to 10000", f.probeConns)
	}
	o.MinRate, o.MaxRate, o.Growth, o.Tolerance = f.minRate, f.maxRate, f.growth, f.tolerance
	o.Warmup, o.Duration, o.MaxSteps, o.TimeBudget = f.stepWarmup, f.step, f.maxSteps, f.timeBudget
	o.ProbeConnections = f.probeConns
	// Zero means "the default" to capacity.Options: refuse explicit zeros
	// and negatives here, naming the flag.
	for _, z := range []struct {
		name string
		v    float64
	}{{"min-rate", f.minRate}, {"max-rate", f.maxRate}, {"growth", f.growth}, {"tolerance", f.tolerance}} {
		if z.v <= 0 && c.Flags().Changed(z.name) {
			flag := "--" + z.name
			return o, usageErr(capacityHints[flag], "%s %g: must be positive", flag, z.v)
		}
	}
	if c.Flags().Changed("max-steps") && f.maxSteps < 1 {
		return o, usageErr(capacityHints["--max-steps"], "--max-steps %d: give at least 1", f.maxSteps)
	}
	if c.Flags().Changed("start-rate") && f.startRate < 1 {
		return o, usageErr(capacityHints["--start-rate"], "--start-rate %g: the rate schedule starts below 1 request per second; give at least 1", f.startRate)
	}
	if f.stepWarmup < 0 || (c.Flags().Changed("step") && f.step < time.Second) {
		flag := "--step"
		if f.stepWarmup < 0 {
			flag = "--step-warmup"
		}
		return o, usageErr(capacityHints[flag], "%s: a step needs at least 1s measured and a warm-up that is not negative", flag)
	}
	if err := f.checkSchedule(o); err != nil {
		return o, err
	}
	o.StartRate = f.startRate
	if f.startRate > 0 {
		o.StartFrom = "--start-rate"
	}
	return o, nil
}

// runCapacity is phptune capacity: the search planned, the session
// opened, the start page checked, the search run on the stack and its
// result stored and printed.
func runCapacity(env *Env, f *capacityFlags, c *cobra.Command) error {
	ctx := env.Ctx
	o, set, err := f.validate(env, c)
	if err != nil {
		return err
	}
	plan, err := f.stack.plan(ctx)
	if err != nil {
		return err
	}
	command := "phptune " + shellquote.Join(redact.Args(env.Args, f.redact))
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "capacity: "+format+"\n", a...) }
	// A running lab is measured as it runs: nothing to restore.
	var engineVersion string
	// What every step asks of Locust: a constant rate, a warm-up.
	steps := load.Options{Connections: 1, Duration: capacity.MinStep, Warmup: time.Second, Pacer: load.ConstantPacer{Rate: 1}}
	sess, stack, err := openStack(env, &f.stack, sessionSpec{command: "capacity", site: plan.site, set: set,
		workload: f.stack.workloadSpec(), redactNames: f.redact,
		generator: f.eng.stackGenerator(ctx, steps, f.redact, env.Stderr, "capacity", locustCapacityNote, &engineVersion)}, say)
	if err != nil {
		return err
	}
	defer sess.Close()
	l, w := sess.Lab, sess.Workload
	if o.StartRate == 0 {
		say("probing for the first rate: %d connections, closed model, %s", o.ProbeConnections, labstack.ProbeDuration)
	}
	o.OnStep = func(s results.CapacityStep) { sayCapacityStep(s, f.redact, say) }
	blocked := labstack.NewBlockedCounter(ctx, l)
	res, err := stack.Capacity(ctx, o)
	if res == nil {
		return err
	}
	var blockedWarning string
	if res.Blocked, blockedWarning = blocked.Since(ctx); blockedWarning != "" {
		res.Warnings = append(res.Warnings, blockedWarning)
	}
	res.Warnings = append(res.Warnings, labstack.CacheWarnings(l)...)
	if f.eng.engine == engineLocust {
		res.Engine, res.EngineVersion, res.Workers = f.eng.engine.String(), engineVersion, f.eng.workers
		res.Warnings = append(res.Warnings, locustCapacityNote)
	}
	res.ID = fmt.Sprintf("capacity-%s-%d", res.StartedAt.Format("20060102T150405"), os.Getpid())
	res.Command = command
	res.Environment = environment(ctx)
	if ferr := f.finish(env, res, l.App, w.Name, say); ferr != nil {
		return ferr
	}
	return err
}

// validate checks the command line before anything starts and returns
// the search's options and the --knobs and --set assignments a lab of
// its own starts with; Locust, when asked for, must be installed.
func (f *capacityFlags) validate(env *Env, c *cobra.Command) (labstack.CapacityOptions, []string, error) {
	o, err := planCapacity(f, c)
	if err != nil {
		return o, nil, err
	}
	if err := f.eng.check(); err != nil {
		return o, nil, err
	}
	if err := f.eng.checkLocust(env.Ctx, f.stack.site != ""); err != nil {
		return o, nil, err
	}
	set, _, err := knobConfig(f.stack.knobsFile, f.stack.set)
	return o, set, err
}

// sayCapacityStep says one step's rate and verdict.
func sayCapacityStep(s results.CapacityStep, names []string, say func(string, ...any)) {
	v := "pass"
	if !s.Pass {
		v = "FAIL: " + strings.Join(s.FailReasons, "; ")
	}
	p99 := 0.0
	if s.Bench != nil {
		p99 = s.Bench.Latency.P99Ms
	}
	say("step %d (%s) %s rps: p99 %.1f ms, %s", s.N, s.Phase, fmtRate(s.RateRPS), p99, redact.Text(v, names))
}

// finish redacts the result, stores it unless --no-save and prints it as
// text or JSON.
func (f *capacityFlags) finish(env *Env, res *results.Capacity, app, workload string, say func(string, ...any)) error {
	if err := redact.Value(res, f.redact); err != nil {
		return err
	}
	if !f.noSave {
		path, serr := saveCapacityRun(context.WithoutCancel(env.Ctx), res, app, workload, f.reportFile, f.redact)
		if serr != nil {
			say("saving the result: %v", serr)
		} else {
			say("stored as run %s; report: %s", res.ID, path)
		}
	}
	if f.asJSON {
		e := json.NewEncoder(env.Stdout)
		e.SetIndent("", "  ")
		return e.Encode(res)
	}
	return report.CapacityText(env.Stdout, res)
}

// checkSchedule refuses a rate schedule capacity.Options.Validate
// refuses, naming the flag; without --start-rate the probe's time comes
// off the budget.
func (f *capacityFlags) checkSchedule(o labstack.CapacityOptions) error {
	check := o.Options
	check.StartRate = f.startRate
	probe := time.Duration(0)
	if f.startRate == 0 {
		// Probing: the first rate is not known yet; the lowest allowed
		// one stands in (its step is the longest), and the probe's time
		// comes off the budget.
		check.StartRate = max(f.minRate, 1)
		probe = labstack.ProbeWarmup + labstack.ProbeDuration
		if check.TimeBudget > 0 {
			check.TimeBudget -= probe
			if check.TimeBudget <= 0 {
				return usageErr(capacityHints["--time-budget"], "--time-budget %s: too small for the %s probe and one step", f.timeBudget, probe)
			}
		}
	}
	if err := check.Validate(); err != nil {
		var fe *capacity.FieldError
		if errors.As(err, &fe) {
			flag := capacityFlagOf[fe.Field]
			msg := fe.Msg
			if fe.Field == "TimeBudget" && probe > 0 {
				msg += fmt.Sprintf(", after the %s probe", probe)
			}
			return usageErr(capacityHints[flag], "%s: %s", flag, msg)
		}
		return err
	}
	return nil
}

// locustCapacityNote is what a capacity search on Locust says of its
// latencies, in its output and its record.
const locustCapacityNote = "latency is Locust's, not corrected for coordinated omission: each user waits for its answer before its next request, " +
	"so latencies count from the send, not from when the request was due, and a slow server lowers the rate sent instead; " +
	"the achieved column against the asked rate shows by how much (a step more than 10% short fails)"

func fmtRate(r float64) string { return fmt.Sprintf("%g", r) }

// saveCapacityRun stores a capacity result and writes its HTML report;
// it returns the report's path.
func saveCapacityRun(ctx context.Context, c *results.Capacity, app, workload, out string, names []string) (string, error) {
	save := func(db *store.DB) error { return db.SaveCapacity(ctx, c, app, workload) }
	return saveRun(ctx, names, save, out, c.ID, report.Run{Capacity: c})
}
