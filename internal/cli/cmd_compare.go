package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/interleave"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/locust"
	"github.com/phptune/phptune/internal/observe"
	"github.com/phptune/phptune/internal/redact"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/sysctl"
)

func init() { register(newCompareCmd) }

// compareConfig is one configuration being compared.
type compareConfig struct {
	Label  string      `json:"label"`
	Config knob.Config `json:"config"`
	RPS    []float64   `json:"throughput_rps_by_round"`
	P99    []float64   `json:"latency_p99_ms_by_round"`
	Errors []float64   `json:"error_rate_by_round"`
	// PHPCPUPerRequest is PHP's CPU seconds per request by round
	// (observe.PHPCPUPerRequest: the PHP workers — php-fpm's, Apache's
	// children with mod_php, Unit's application processes — and php-fpm's
	// master).
	PHPCPUPerRequest []float64 `json:"php_cpu_s_per_request_by_round"`
	// SpeedProbeMs is the machine-speed probe's reading of each round
	// (results.Derived.SpeedProbeMs; 0 none).
	SpeedProbeMs []float64 `json:"speed_probe_ms_by_round"`
	// Engines are the load generator of each round: phptune or locust.
	Engines []string `json:"engine_by_round,omitempty"`
	Failed  string   `json:"failed,omitempty"`
	// Backlogs are the configuration's listen backlogs as asked and as
	// the kernel gave them.
	Backlogs []results.Backlog `json:"backlogs,omitempty"`
}

// compareResult is what phptune compare prints with --json.
type compareResult struct {
	App         string `json:"app"`
	Workload    string `json:"workload"`
	Connections int    `json:"connections"`
	Rounds      int    `json:"rounds"`
	// Engine is the load generator (--engine: phptune or locust), with
	// Locust's version and local workers.
	Engine        string          `json:"engine,omitempty"`
	EngineVersion string          `json:"engine_version,omitempty"`
	Workers       int             `json:"workers,omitempty"`
	DurationS     float64         `json:"duration_s"`
	Configs       []compareConfig `json:"configs"`
	Summary       []compareRow    `json:"summary"`
	// Builds name the PHP builds (php.build) the configurations ran.
	Builds []results.PHPBuild `json:"php_builds,omitempty"`
	// KernelLimits are the host's (package sysctl); each configuration's
	// backlogs, asked and given, are in its Backlogs.
	KernelLimits *results.KernelLimits `json:"kernel_limits,omitempty"`
	// Blocked are the connections a sealed site lab's code tried to open
	// outside the lab over the whole comparison, refused by the seal.
	Blocked []results.Blocked `json:"blocked,omitempty"`
}

type compareRow struct {
	Label          string  `json:"label"`
	MedianRPS      float64 `json:"throughput_rps_median"`
	MedianP99Ms    float64 `json:"latency_p99_ms_median"`
	MeanErrorRate  float64 `json:"error_rate_mean"`
	RatioRPS       float64 `json:"throughput_ratio"` // against the first config, paired by round
	RatioRPSLow    float64 `json:"throughput_ratio_ci_low"`
	RatioRPSHigh   float64 `json:"throughput_ratio_ci_high"`
	RatioP99       float64 `json:"p99_ratio"`
	PHPCPUPerReqMs float64 `json:"php_cpu_ms_per_request_median"`
	// PHPSpeedRatio is the first config's PHP CPU per request ÷ this one's,
	// each divided by its run's speed-probe reading (> 1: this one is
	// faster at the same machine speed), paired by round, with its 95% CI
	// (0: none).
	PHPSpeedRatio     float64 `json:"php_cpu_speed_ratio,omitempty"`
	PHPSpeedRatioLow  float64 `json:"php_cpu_speed_ratio_ci_low,omitempty"`
	PHPSpeedRatioHigh float64 `json:"php_cpu_speed_ratio_ci_high,omitempty"`
}

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

func newCompareCmd(env *Env) *cobra.Command {
	st := stackFlags{defaultApp: "hello", refused: refuseAll("compare measures the configurations named as its CONFIG arguments",
		"Put the settings in a knob file and name it: phptune compare ... default mine=FILE", flagKnobs, flagSet)}
	var conns, rounds int
	var d, warmup time.Duration
	var asJSON, raiseSysctl bool
	var redactNames []string
	var eng engineFlags
	var storedRuns compareRunsFlags // stored runs: compare_runs.go
	cmd := &cobra.Command{
		Use:   "compare [--app APP | --docroot DIR | --lab NAME | --site NAME] CONFIG...",
		Short: "Measure configurations side by side, interleaved, and print ratios against the first",
		Long: `phptune compare brings up one lab and measures each configuration in turn,
round after round (A B C, B C A, ...), each in fresh processes, so that a noisy
machine disturbs them alike. It prints each one's median throughput and p99
and its throughput ratio against the first with a 95% confidence interval,
PHP's CPU per request (its workers and php-fpm's master), and the PHP speed
ratio: the first's PHP CPU per request ÷ each one's, every run's divided by
phptune's machine-speed probe reading during it (a fixed unit of work timed
every 100 ms), which a neighbour slowing the CPU moves less than throughput
or raw CPU per request.

The lab is one of its own for --app (default hello) or --docroot (your app,
a directory with index.php), taken down at the end, or a lab you run
(--lab NAME), whose configuration is restored at the end. --user runs a lab
of its own as that account (root only, never root): the app then runs with
that account's rights. --site NAME|DIR compares on a sealed lab of its own of
a site of this host (as lab up --site makes it), with the site's own Host;
the CONFIG live is then the site's live configuration (its pool and php.ini
as production runs them), also on a running site lab (--lab).

A CONFIG is a knob file (as phptune tune writes: recommended.knobs) or
"default" for the distro's configuration, or "live" for a site's (--site);
LABEL=FILE names it.

--engine locust measures every run on Locust instead of phptune's generator
(phptune setup --with-locust; --workers N runs its master with N workers on
this machine). Locust has no warm-up: each run's --warmup is a throwaway
Locust run of the same load first. Its latencies are its rounded buckets.
HTTP only (not a sealed --site lab). See docs/locust.md.`,
		Example: `  phptune compare --app io -c 50 default phptune-tune-RUN/recommended.knobs
  phptune compare --app wordpress --rounds 5 before=default after=recommended.knobs
  phptune compare --docroot ./public --user www-data default tuned=recommended.knobs
  phptune compare --lab mylab default recommended.knobs
  phptune compare --site site.test live default tuned=recommended.knobs
  phptune compare --app io --engine locust --workers 2 default tuned=recommended.knobs`,
		RunE: func(c *cobra.Command, args []string) error {
			if storedRuns.runs { // stored runs: compare_runs.go
				return compareStoredRuns(env, c, args, storedRuns, asJSON, redactNames)
			}
			// Everything is checked before the lab exists.
			if err := checkApplySysctl(raiseSysctl); err != nil {
				return err
			}
			if len(args) == 0 {
				return usageErr("Try: phptune compare --app hello default recommended.knobs", "name at least one configuration: a knob file or default")
			}
			if err := checkRedactNames(redactNames); err != nil {
				return err
			}
			if err := eng.check(); err != nil {
				return err
			}
			if err := st.check(false); err != nil {
				return err
			}
			if eng.engine == "locust" {
				if st.site != "" {
					return usageErr("Leave --engine locust out with --site", "--engine locust loads over TCP, and a sealed site lab is reached through a unix socket")
				}
				// Installed before a lab is started for it.
				if _, err := locust.Version(env.Ctx, lab.Home()); err != nil {
					return err
				}
			}
			if rounds < 1 || rounds > 50 || conns < 1 || d < time.Second || warmup < 0 {
				return usageErr("Try: --rounds 3 -c 50 -d 10s", "--rounds 1..50, -c at least 1, -d at least 1s")
			}
			// --site: the site found and its live configuration, the
			// "live" configuration of the arguments (also a running site
			// lab's).
			plan, err := st.plan(env.Ctx)
			if err != nil {
				return err
			}
			var live knob.Config
			if plan.site != nil {
				live = plan.site.live.Config
			} else if plan.lab != nil {
				if live, _, err = labstack.LiveStart(plan.lab); err != nil {
					return err
				}
			}
			cfgs, err := compareConfigs(args, live)
			if err != nil {
				return err
			}
			ctx := env.Ctx
			say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "compare: "+format+"\n", a...) }
			var kernelRun *sysctl.Run
			// Every run restarts the servers, so they listen under the
			// raised settings (the session raises them before a lab of its
			// own starts, or after a running lab's configuration is saved).
			var raise func() (func(), error)
			if raiseSysctl {
				var cs []knob.Config
				for _, cc := range cfgs {
					cs = append(cs, cc.Config)
				}
				raise = raiseKernel(env, sysctl.NeedOf(cs, conns), "compare", &kernelRun)
			}
			sess, err := openSession(env, &st, sessionSpec{command: "compare", site: plan.site, restore: true, raise: raise, workload: st.workloadSpec(), redactNames: redactNames})
			if err != nil {
				return err
			}
			defer sess.Close()
			l, w := sess.Lab, sess.Workload
			appName := st.appLabel()
			if st.lab != "" {
				appName = l.App
			}
			stack := labstack.New(l, w)
			var engineVersion string
			if eng.engine == "locust" {
				opt := load.Options{Connections: conns, Duration: d, Warmup: warmup}
				if engineVersion, err = eng.useLocust(ctx, stack, opt, redactNames, env.Stderr, "compare"); err != nil {
					return err
				}
			}
			if err := checkStartPage(ctx, env, stack, say); err != nil {
				return err
			}
			blocked := labstack.NewBlockedCounter(ctx, l)
			res, err := runCompare(ctx, stack, w.Writes, cfgs, conns, rounds, d, warmup, say)
			if err != nil {
				return err
			}
			res.Engine, res.EngineVersion = eng.engine, engineVersion
			if eng.engine == "locust" {
				res.Workers = eng.workers
			}
			var blockedWarning string
			if res.Blocked, blockedWarning = blocked.Since(ctx); blockedWarning != "" {
				say("%s", blockedWarning)
			}
			res.App, res.Workload = appName, w.Name
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
			// What is printed holds no secret (a workload's query, a
			// failure's message).
			if err := redact.Value(res, redactNames); err != nil {
				return err
			}
			if asJSON {
				e := json.NewEncoder(env.Stdout)
				e.SetIndent("", "  ")
				if err := e.Encode(res); err != nil {
					return err
				}
			} else {
				printCompare(env.Stdout, res, d)
				printBuilds(env.Stdout, res.Builds)
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
		},
	}
	fl := cmd.Flags()
	st.add(fl, "compare", labstack.WorkloadFront)
	fl.IntVarP(&conns, "connections", "c", 50, "connections")
	fl.IntVar(&rounds, "rounds", 3, "rounds; each measures every configuration once")
	fl.DurationVarP(&d, "duration", "d", 10*time.Second, "measured time of each run")
	fl.DurationVar(&warmup, "warmup", 3*time.Second, "warm-up of each run, not measured")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addApplySysctlFlag(fl, &raiseSysctl)
	addRedactFlag(fl, &redactNames)
	eng.addLocal(fl)
	storedRuns.add(fl) // stored runs: compare_runs.go
	return cmd
}

// runCompare measures cfgs interleaved on st (package interleave) and
// summarises them against the first.
func runCompare(ctx context.Context, st interleave.Stack, writes bool, cfgs []compareConfig, conns, rounds int, d, warmup time.Duration, say func(string, ...any)) (*compareResult, error) {
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
	res := &compareResult{Connections: conns, Rounds: rounds, DurationS: d.Seconds()}
	for i := range cfgs {
		cc := cfgs[i]
		cc.Failed = s.Failed(i)
		for _, b := range s.Benches(i) {
			cc.RPS = append(cc.RPS, b.ThroughputRPS)
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
				engine = "phptune"
			}
			cc.Engines = append(cc.Engines, engine)
		}
		res.Configs = append(res.Configs, cc)
	}
	base := res.Configs[0]
	for i, cc := range res.Configs {
		row := compareRow{Label: cc.Label}
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

// printCompare prints compare's table.
func printCompare(w io.Writer, res *compareResult, d time.Duration) {
	fmt.Fprintf(w, "%s %s, %d connections, %d rounds of %s (medians; ratios against %s, paired by round, 95%% CI)\n",
		res.App, res.Workload, res.Connections, res.Rounds, d, res.Summary[0].Label)
	fmt.Fprintf(w, "%-24s %10s %10s %8s %22s %8s %12s %22s\n", "config", "rps", "p99 ms", "errors", "throughput ratio", "p99 ×", "PHP CPU/req", "PHP speed ratio")
	for _, row := range res.Summary {
		speed := "-"
		if row.PHPSpeedRatio > 0 {
			speed = fmt.Sprintf("%.2f× [%.2f, %.2f]", row.PHPSpeedRatio, row.PHPSpeedRatioLow, row.PHPSpeedRatioHigh)
		}
		fmt.Fprintf(w, "%-24s %10.1f %10.1f %7.2f%% %8.2f× [%.2f, %.2f] %7.2f× %9.2f ms %22s\n",
			row.Label, row.MedianRPS, row.MedianP99Ms, 100*row.MeanErrorRate, row.RatioRPS, row.RatioRPSLow, row.RatioRPSHigh, row.RatioP99, row.PHPCPUPerReqMs, speed)
	}
	fmt.Fprintln(w, "PHP speed ratio: the first config's PHP CPU per request ÷ this one's, each divided by the machine-speed probe's reading of its run (> 1: faster at the same machine speed)")
	if res.Engine == "locust" {
		fmt.Fprintf(w, "measured by Locust %s (%d local workers): its latencies are rounded buckets timed from each send; each run's warm-up was a throwaway Locust run\n", res.EngineVersion, res.Workers)
	}
	// The kernel's limits, and each configuration's backlogs the kernel
	// capped: those configurations ran with less than they ask for.
	for _, l := range sysctl.Lines(res.KernelLimits) {
		fmt.Fprintf(w, "kernel: %s\n", l)
	}
	for _, cc := range res.Configs {
		for _, b := range cc.Backlogs {
			if b.Effective < b.Asked {
				fmt.Fprintf(w, "%s: %s: %s\n", cc.Label, b.Knob, sysctl.BacklogText(b.Asked, b.Somaxconn))
			}
		}
	}
	report.BlockedText(w, res.Blocked, "")
}

// compareConfigs reads compare's CONFIG arguments (default, FILE or
// LABEL=FILE); a bad knob file is a usage error naming the file and line.
//
// live is a site's live configuration (--site, or --lab of a site lab
// that recorded it), which the file name "live" stands for; nil
// otherwise.
func compareConfigs(args []string, live knob.Config) ([]compareConfig, error) {
	var cfgs []compareConfig
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
			cfgs = append(cfgs, compareConfig{Label: label, Config: live.Clone()})
			continue
		}
		if file != "default" {
			data, err := os.ReadFile(file)
			if err != nil {
				return nil, usageErr("Give a knob file of KNOB=VALUE lines, as phptune tune writes (recommended.knobs), or default", "configuration %s: %v", label, err)
			}
			if cfg, err = cfg.ApplyFile(string(data)); err != nil {
				return nil, usageErr("See every knob, its default and its range: phptune knobs", "configuration %s: %s: %v", label, file, err)
			}
			if err := cfg.Validate(); err != nil {
				return nil, usageErr("See every knob, its default and its range: phptune knobs", "configuration %s: %s: %v", label, file, err)
			}
		}
		cfgs = append(cfgs, compareConfig{Label: label, Config: cfg})
	}
	return cfgs, nil
}
