package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/decide/interleave"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/watch/errlog"
	"github.com/phptune/phptune/internal/watch/observe"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

func init() { register(newCompareCmd) }

// phpCPU is a run's PHP CPU seconds per request (observe.PHPCPUPerRequest:
// the PHP workers and php-fpm's master); 0 unknown.
func phpCPU(b *results.Bench) float64 {
	if o := b.Observation; o != nil {
		return observe.PHPCPUPerRequest(o.Derived.CPUSecondsPerRequest)
	}
	return 0
}

// phpSpeed is a run's requests per speed-probe unit of PHP CPU: 1 ÷ (PHP
// CPU per request ÷ the probe's reading); 0 unknown.
func phpSpeed(b *results.Bench) float64 {
	cpu := phpCPU(b)
	if cpu <= 0 || b.Observation == nil || b.Observation.Derived.SpeedProbeMs <= 0 {
		return 0
	}
	return b.Observation.Derived.SpeedProbeMs / 1000 / cpu
}

// compareFlags are phptune compare's command line.
type compareFlags struct {
	// stack is the lab the configurations run on and its traffic.
	stack            stackFlags
	conns, rounds    int
	duration, warmup time.Duration
	asJSON           bool
	applySysctl      bool
	redact           []string
	eng              engineFlags
	// storedRuns are --runs and --force: stored runs, compare_runs.go.
	storedRuns compareRunsFlags
}

func newCompareCmd(env *Env) *cobra.Command {
	f := &compareFlags{stack: stackFlags{defaultApp: "hello", refused: refuseAll("compare measures the configurations named as its CONFIG arguments",
		"Put the settings in a knob file and name it: phptune compare ... default mine=FILE", flagKnobs, flagSet)}}
	cmd := &cobra.Command{
		Use:     "compare [--app APP | --docroot DIR | --lab NAME | --site NAME] CONFIG...",
		Short:   "Measure configurations side by side, interleaved, and print ratios against the first",
		Long:    compareLong,
		Example: compareExample,
		RunE: func(c *cobra.Command, args []string) error {
			if f.storedRuns.runs {
				return compareStoredRuns(env, c, args, f.storedRuns, f.asJSON, f.redact)
			}
			// Everything is checked before the lab exists.
			if err := f.validate(env, len(args)); err != nil {
				return err
			}
			return runCompareCmd(env, f, args)
		},
	}
	fl := cmd.Flags()
	f.stack.add(fl, "compare", workload.Front)
	fl.IntVarP(&f.conns, "connections", "c", 50, "connections")
	fl.IntVar(&f.rounds, "rounds", 3, "rounds; each measures every configuration once")
	fl.DurationVarP(&f.duration, "duration", "d", 10*time.Second, "measured time of each run")
	fl.DurationVar(&f.warmup, "warmup", 3*time.Second, "warm-up of each run, not measured")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	addApplySysctlFlag(fl, &f.applySysctl)
	addRedactFlag(fl, &f.redact)
	f.eng.addLocal(fl)
	f.storedRuns.add(fl)
	return cmd
}

// validate refuses what cannot run before anything starts: nargs
// CONFIG arguments, the flags, and Locust when it is asked for and not
// installed.
func (f *compareFlags) validate(env *Env, nargs int) error {
	if err := checkApplySysctl(f.applySysctl); err != nil {
		return err
	}
	if nargs == 0 {
		return usageErr("Try: phptune compare --app hello default recommended.knobs", "name at least one configuration: a knob file or default")
	}
	if err := checkRedactNames(f.redact); err != nil {
		return err
	}
	if err := f.eng.check(); err != nil {
		return err
	}
	if err := f.stack.check(false); err != nil {
		return err
	}
	if err := f.eng.checkLocust(env.Ctx, f.stack.site != ""); err != nil {
		return err
	}
	if f.rounds < 1 || f.rounds > 50 || f.conns < 1 || f.duration < time.Second || f.warmup < 0 {
		return usageErr("Try: --rounds 3 -c 50 -d 10s", "--rounds 1..50, -c at least 1, -d at least 1s")
	}
	return nil
}

// runCompareCmd is phptune compare CONFIG...: the stack planned, the
// configurations read, the session opened, the configurations measured
// interleaved, and the result printed.
func runCompareCmd(env *Env, f *compareFlags, args []string) error {
	ctx := env.Ctx
	plan, cfgs, err := f.configs(ctx, args)
	if err != nil {
		return err
	}
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "compare: "+format+"\n", a...) }
	var kernelRun *sysctl.Run
	// Every run restarts the servers, so they listen under the raised
	// settings (the session raises them before a lab of its own starts,
	// or after a running lab's configuration is saved).
	var raise func() (func(), error)
	if f.applySysctl {
		var cs []knob.Config
		for _, cc := range cfgs {
			cs = append(cs, cc.Config)
		}
		raise = raiseKernel(env, sysctl.NeedOf(cs, f.conns), "compare", &kernelRun)
	}
	var engineVersion string
	runs := load.Options{Connections: f.conns, Duration: f.duration, Warmup: f.warmup}
	sess, stack, err := openStack(env, &f.stack, sessionSpec{command: "compare", site: plan.site, restore: true, raise: raise,
		workload: f.stack.workloadSpec(), redactNames: f.redact,
		generator: f.eng.stackGenerator(ctx, runs, f.redact, env.Stderr, "compare", "", &engineVersion)}, say)
	if err != nil {
		return err
	}
	defer sess.Close()
	l, w := sess.Lab, sess.Workload
	blocked := labstack.NewBlockedCounter(ctx, l)
	res, err := runCompare(ctx, stack, w.Writes, cfgs, f.conns, f.rounds, f.duration, f.warmup, say)
	if err != nil {
		return err
	}
	res.Engine, res.EngineVersion = f.eng.engine.String(), engineVersion
	if f.eng.engine == engineLocust {
		res.Workers = f.eng.workers
	}
	var blockedWarning string
	if res.Blocked, blockedWarning = blocked.Since(ctx); blockedWarning != "" {
		say("%s", blockedWarning)
	}
	for _, w := range labstack.CacheWarnings(l) {
		say("%s", termsafe.Text(w))
	}
	res.App, res.Workload = f.stack.appLabel(), w.Name
	if f.stack.lab != "" {
		res.App = l.App
	}
	completeCompare(res, l, kernelRun)
	return f.print(env, res)
}

// configs plans the stack and reads the CONFIG arguments; with --site
// (or --lab of a site lab) "live" is the site's live configuration.
func (f *compareFlags) configs(ctx context.Context, args []string) (*stackPlan, []results.CompareConfig, error) {
	plan, err := f.stack.plan(ctx)
	if err != nil {
		return nil, nil, err
	}
	var live knob.Config
	if plan.site != nil {
		live = plan.site.live.Config
	} else if plan.lab != nil {
		if live, _, err = labstack.LiveStart(plan.lab); err != nil {
			return nil, nil, err
		}
	}
	cfgs, err := compareConfigs(args, live)
	return plan, cfgs, err
}

// completeCompare adds the kernel's limits, each configuration's
// backlogs and the PHP builds that ran to res.
func completeCompare(res *results.Compare, l *lab.Lab, kernelRun *sysctl.Run) {
	res.KernelLimits = sysctl.NewFS(sysctlProc).Collect(nil)
	completeKernelLimits(res.KernelLimits, l, kernelRun, nil)
	for i := range res.Configs {
		res.Configs[i].Backlogs = sysctl.Backlogs(res.Configs[i].Config, sysctl.RunSomaxconn(res.KernelLimits))
	}
	var ran []map[string]string
	for _, cc := range res.Configs {
		ran = append(ran, cc.Config)
	}
	res.Builds = buildsOf(ran)
}

// print prints res, redacted, as the table or JSON, and fails naming
// the configurations that failed.
func (f *compareFlags) print(env *Env, res *results.Compare) error {
	// What is printed holds no secret (a workload's query, a failure's
	// message).
	if err := redact.Value(res, f.redact); err != nil {
		return err
	}
	if f.asJSON {
		e := json.NewEncoder(env.Stdout)
		e.SetIndent("", "  ")
		if err := e.Encode(res); err != nil {
			return err
		}
	} else {
		report.CompareText(env.Stdout, res, f.duration)
		report.BuildsText(env.Stdout, res.Builds)
	}
	var failed []string
	for _, cc := range res.Configs {
		if cc.Failed != "" {
			failed = append(failed, cc.Label)
		}
	}
	sort.Strings(failed)
	if len(failed) > 0 {
		return fmt.Errorf("configurations that failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// runCompare measures cfgs interleaved on st (package interleave) and
// summarises them against the first.
func runCompare(ctx context.Context, st interleave.Stack, writes bool, cfgs []results.CompareConfig, conns, rounds int, d, warmup time.Duration, say func(string, ...any)) (*results.Compare, error) {
	ic := make([]interleave.Config, len(cfgs))
	for i, cc := range cfgs {
		ic[i] = interleave.Config{Label: cc.Label, Config: cc.Config}
	}
	s := interleave.New(ic, interleave.StackRunner{Stack: st, Conns: conns, Duration: d, Warmup: warmup, Reset: writes})
	s.DropFailed = true
	s.OnRun = func(r interleave.Run, o interleave.Outcome) {
		if !o.OK() {
			say("%s: %s", r.Label, o.Failed)
			return
		}
		b := o.Bench
		say("round %d/%d %s: %.1f rps, p99 %.1f ms, errors %.2f%%", r.Round+1, rounds, r.Label, b.ThroughputRPS, b.Latency.P99Ms, 100*errorRate(b))
	}
	if err := s.Run(ctx, rounds); err != nil {
		return nil, err
	}
	res := &results.Compare{Connections: conns, Rounds: rounds, DurationS: d.Seconds()}
	for i := range cfgs {
		cc := cfgs[i]
		cc.Failed = s.Failed(i)
		for _, b := range s.Benches(i) {
			cc.RPS = append(cc.RPS, b.ThroughputRPS)
			cc.Requests = append(cc.Requests, b.Requests)
			cc.P99 = append(cc.P99, b.Latency.P99Ms)
			cc.Errors = append(cc.Errors, errorRate(b))
			cc.PHPCPUPerRequest = append(cc.PHPCPUPerRequest, phpCPU(b))
			probe := 0.0
			if b.Observation != nil {
				probe = b.Observation.Derived.SpeedProbeMs
			}
			cc.SpeedProbeMs = append(cc.SpeedProbeMs, probe)
			engine := b.Engine
			if engine == "" {
				engine = engineOwn.String()
			}
			cc.Engines = append(cc.Engines, engine)
			if b.ServerErrors != nil {
				cc.PHPErrors = errlog.MergePHP(cc.PHPErrors, b.ServerErrors.PHP)
			}
		}
		res.Configs = append(res.Configs, cc)
	}
	base := res.Configs[0]
	for i, cc := range res.Configs {
		row := results.CompareRow{Label: cc.Label}
		if len(cc.RPS) > 0 {
			row.MedianRPS, row.MedianP99Ms, row.MeanErrorRate = stats.Median(cc.RPS), stats.Median(cc.P99), stats.Mean(cc.Errors)
			row.PHPCPUPerReqMs = 1000 * stats.Median(cc.PHPCPUPerRequest)
		}
		if len(base.RPS) > 0 && len(cc.RPS) > 0 {
			if ci, err := s.Ratio(0, i, interleave.Throughput, 0.95); err == nil {
				// One round gives no interval (its bounds are infinite,
				// which JSON cannot carry): 0 says "none".
				row.RatioRPS, row.RatioRPSLow, row.RatioRPSHigh = ci.Ratio, finiteOr0(ci.Low), finiteOr0(ci.High)
			} else if m := stats.Median(base.RPS); m > 0 {
				row.RatioRPS = stats.Median(cc.RPS) / m
			}
			if p, err := s.Ratio(0, i, interleave.P99, 0.95); err == nil {
				row.RatioP99 = p.Ratio
			}
			if c, err := s.Ratio(0, i, phpSpeed, 0.95); err == nil {
				row.PHPSpeedRatio, row.PHPSpeedRatioLow, row.PHPSpeedRatioHigh = c.Ratio, finiteOr0(c.Low), finiteOr0(c.High)
			}
		}
		res.Summary = append(res.Summary, row)
	}
	return res, nil
}

func finiteOr0(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return x
}

func errorRate(b *results.Bench) float64 {
	if b.Requests <= 0 {
		return 0
	}
	return float64(b.Errors) / float64(b.Requests)
}

// inlineKnobs reads a CONFIG's FILE part as knob assignments
// ("php.build=debian-8.4;opcache.jit=tracing") when it holds a '=' and
// names no file.
func inlineKnobs(file string) ([]string, bool) {
	if !strings.Contains(file, "=") {
		return nil, false
	}
	if _, err := os.Stat(file); err == nil {
		return nil, false
	}
	var out []string
	for _, a := range strings.Split(file, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out, len(out) > 0
}

// compareConfigs reads compare's CONFIG arguments (default, FILE,
// LABEL=FILE, or LABEL=KNOB=VALUE[;KNOB=VALUE...] when no file of that
// name exists); a bad knob file is a usage error naming the file and line.
//
// live is a site's live configuration (--site, or --lab of a site lab
// that recorded it), which the file name "live" stands for; nil
// otherwise.
func compareConfigs(args []string, live knob.Config) ([]results.CompareConfig, error) {
	var cfgs []results.CompareConfig
	for _, a := range args {
		label, file, ok := strings.Cut(a, "=")
		if !ok {
			label, file = strings.TrimSuffix(filepath.Base(a), ".knobs"), a
		}
		if label == "" || file == "" {
			return nil, usageErr("Try: before=default after=recommended.knobs", "configuration %q: write LABEL=FILE, FILE or default", a)
		}
		cfg := knob.Defaults()
		if file == "live" {
			if live == nil {
				return nil, usageErr("Give --site NAME (or --lab of a site lab) to compare with the site's live configuration, or a knob file", "configuration %s: live is a site's live configuration, and this comparison runs no site lab", label)
			}
			cfgs = append(cfgs, results.CompareConfig{Label: label, Config: live.Clone()})
			continue
		}
		if inline, ok := inlineKnobs(file); ok {
			c, err := cfg.Apply(inline)
			if err == nil {
				err = c.Validate()
			}
			if err != nil {
				return nil, usageErr("See every knob, its default and its range: phptune knobs", "configuration %s: %v", label, err)
			}
			cfgs = append(cfgs, results.CompareConfig{Label: label, Config: c})
			continue
		}
		if file != "default" {
			var err error
			cfg, err = cfg.ApplyFileAt(file)
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, usageErr("Give a knob file of KNOB=VALUE lines, as phptune tune writes (recommended.knobs), or default", "configuration %s: %v", label, err)
			}
			if err != nil {
				return nil, usageErr("See every knob, its default and its range: phptune knobs", "configuration %s: %s: %v", label, file, err)
			}
			if err := cfg.Validate(); err != nil {
				return nil, usageErr("See every knob, its default and its range: phptune knobs", "configuration %s: %s: %v", label, file, err)
			}
		}
		cc := results.CompareConfig{Label: label, Config: cfg}
		if file != "default" {
			q, err := tuneQuote(file)
			if err != nil {
				return nil, err
			}
			cc.FromTune = q
		}
		cfgs = append(cfgs, cc)
	}
	return cfgs, nil
}
