package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/apps"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/redact"
	"github.com/phptune/phptune/internal/stats"
)

func init() { register(newCompareCmd) }

// compareConfig is one configuration being compared.
type compareConfig struct {
	Label  string      `json:"label"`
	Config knob.Config `json:"config"`
	RPS    []float64   `json:"throughput_rps_by_round"`
	P99    []float64   `json:"latency_p99_ms_by_round"`
	Errors []float64   `json:"error_rate_by_round"`
	// CPUPerRequest is the php-fpm workers' CPU seconds per request, by round.
	FPMCPUPerRequest []float64 `json:"fpm_cpu_s_per_request_by_round"`
	Failed           string    `json:"failed,omitempty"`
}

// compareResult is what phptune compare prints with --json.
type compareResult struct {
	App         string          `json:"app"`
	Workload    string          `json:"workload"`
	Connections int             `json:"connections"`
	Rounds      int             `json:"rounds"`
	DurationS   float64         `json:"duration_s"`
	Configs     []compareConfig `json:"configs"`
	Summary     []compareRow    `json:"summary"`
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
	FPMCPUPerReqMs float64 `json:"fpm_cpu_ms_per_request_median"`
}

func newCompareCmd(env *Env) *cobra.Command {
	var appName, workload string
	var conns, rounds int
	var d, warmup time.Duration
	var asJSON bool
	var redactNames []string
	cmd := &cobra.Command{
		Use:   "compare [--app APP] CONFIG...",
		Short: "Measure configurations side by side, interleaved, and print ratios against the first",
		Long: `phptune compare brings up one lab and measures each configuration in turn,
round after round (A B C, B C A, ...), each in fresh processes, so that a noisy
machine disturbs them alike. It prints each one's median throughput and p99
and its throughput ratio against the first with a 95% confidence interval.

A CONFIG is a knob file (as phptune tune writes: recommended.knobs) or
"default" for the distro's configuration; LABEL=FILE names it.`,
		Example: `  phptune compare --app io -c 50 default phptune-tune-RUN/recommended.knobs
  phptune compare --app wordpress --rounds 5 before=default after=recommended.knobs`,
		RunE: func(c *cobra.Command, args []string) error {
			// Everything is checked before the lab exists.
			if len(args) == 0 {
				return usageErr("Try: phptune compare --app hello default recommended.knobs", "name at least one configuration: a knob file or default")
			}
			if err := checkRedactNames(redactNames); err != nil {
				return err
			}
			if _, err := apps.Lookup(appName); err != nil {
				return usageErr("Choose one of: "+appNames(), "--app %q is not a built-in app", appName)
			}
			if rounds < 1 || rounds > 50 || conns < 1 || d < time.Second || warmup < 0 {
				return usageErr("Try: --rounds 3 -c 50 -d 10s", "--rounds 1..50, -c at least 1, -d at least 1s")
			}
			if workload == "comment" && appName != "wordpress" {
				return usageErr("Try: --app wordpress --workload comment", "--workload comment needs --app wordpress")
			}
			if err := checkWorkload(workload, appName); err != nil {
				return err
			}
			cfgs, err := compareConfigs(args)
			if err != nil {
				return err
			}
			ctx := env.Ctx
			say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "compare: "+format+"\n", a...) }
			name := fmt.Sprintf("compare-%d", os.Getpid())
			l, err := lab.Up(ctx, lab.Options{Name: name, App: appName, OwnedBy: "compare"})
			if err != nil {
				return err
			}
			defer func() {
				if err := lab.Down(l.Name); err != nil {
					say("taking lab %s down: %v", l.Name, err)
				}
			}()
			w, err := labstack.ParseWorkload(ctx, l, workload)
			if err != nil {
				// Checked as far as it could be without the lab; this
				// is what needs it (a post open to comments).
				return fmt.Errorf("workload %s on lab %s: %w", redact.Text(workload, redactNames), l.Name, err)
			}
			st := labstack.New(l, w)
			for r := 0; r < rounds; r++ {
				for k := range cfgs {
					i := (k + r) % len(cfgs) // rotate the order every round
					cc := &cfgs[i]
					if cc.Failed != "" {
						continue
					}
					if err := st.Apply(ctx, cc.Config); err != nil {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						cc.Failed = err.Error()
						say("%s failed to start: %v", cc.Label, err)
						continue
					}
					if w.Writes {
						if err := st.Reset(ctx); err != nil {
							return err
						}
					}
					b, err := st.Measure(ctx, conns, d, warmup)
					if err != nil {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						cc.Failed = err.Error()
						say("%s: %v", cc.Label, err)
						continue
					}
					er := 0.0
					if b.Requests > 0 {
						er = float64(b.Errors) / float64(b.Requests)
					}
					cc.RPS = append(cc.RPS, b.ThroughputRPS)
					cc.P99 = append(cc.P99, b.Latency.P99Ms)
					cc.Errors = append(cc.Errors, er)
					cpu := 0.0
					if o := b.Observation; o != nil {
						for g, v := range o.Derived.CPUSecondsPerRequest {
							if strings.HasPrefix(g, "php-fpm workers") {
								cpu += v
							}
						}
					}
					cc.FPMCPUPerRequest = append(cc.FPMCPUPerRequest, cpu)
					say("round %d/%d %s: %.1f rps, p99 %.1f ms, errors %.2f%%", r+1, rounds, cc.Label, b.ThroughputRPS, b.Latency.P99Ms, 100*er)
				}
			}
			res := compareResult{App: appName, Workload: w.Name, Connections: conns, Rounds: rounds, DurationS: d.Seconds(), Configs: cfgs}
			base := cfgs[0]
			for _, cc := range cfgs {
				row := compareRow{Label: cc.Label}
				if len(cc.RPS) > 0 {
					row.MedianRPS, row.MedianP99Ms, row.MeanErrorRate = stats.Median(cc.RPS), stats.Median(cc.P99), stats.Mean(cc.Errors)
					row.FPMCPUPerReqMs = 1000 * stats.Median(cc.FPMCPUPerRequest)
				}
				if n := min(len(base.RPS), len(cc.RPS)); n > 0 {
					if ci, err := stats.PairedRatio(base.RPS[:n], cc.RPS[:n], 0.95); err == nil {
						row.RatioRPS, row.RatioRPSLow, row.RatioRPSHigh = ci.Ratio, ci.Low, ci.High
					} else if base.RPS[0] > 0 {
						row.RatioRPS = stats.Median(cc.RPS) / stats.Median(base.RPS)
					}
					if p, err := stats.PairedRatio(base.P99[:n], cc.P99[:n], 0.95); err == nil {
						row.RatioP99 = p.Ratio
					}
				}
				res.Summary = append(res.Summary, row)
			}
			// What is printed holds no secret (a workload's query, a
			// failure's message).
			if err := redact.Value(&res, redactNames); err != nil {
				return err
			}
			if asJSON {
				e := json.NewEncoder(env.Stdout)
				e.SetIndent("", "  ")
				return e.Encode(res)
			}
			fmt.Fprintf(env.Stdout, "%s %s, %d connections, %d rounds of %s (medians; ratios against %s, paired by round, 95%% CI)\n",
				appName, res.Workload, conns, rounds, d, res.Summary[0].Label)
			fmt.Fprintf(env.Stdout, "%-24s %10s %10s %8s %22s %8s %12s\n", "config", "rps", "p99 ms", "errors", "throughput ratio", "p99 ×", "fpm CPU/req")
			for _, row := range res.Summary {
				fmt.Fprintf(env.Stdout, "%-24s %10.1f %10.1f %7.2f%% %8.2f× [%.2f, %.2f] %7.2f× %9.2f ms\n",
					row.Label, row.MedianRPS, row.MedianP99Ms, 100*row.MeanErrorRate, row.RatioRPS, row.RatioRPSLow, row.RatioRPSHigh, row.RatioP99, row.FPMCPUPerReqMs)
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
	fl.StringVar(&appName, "app", "hello", "built-in app to compare on: "+appNames())
	fl.StringVar(&workload, "workload", "front", "front, comment, a path, or a scenario file")
	fl.IntVarP(&conns, "connections", "c", 50, "connections")
	fl.IntVar(&rounds, "rounds", 3, "rounds; each measures every configuration once")
	fl.DurationVarP(&d, "duration", "d", 10*time.Second, "measured time of each run")
	fl.DurationVar(&warmup, "warmup", 3*time.Second, "warm-up of each run, not measured")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addRedactFlag(fl, &redactNames)
	return cmd
}

// compareConfigs reads compare's CONFIG arguments (default, FILE or
// LABEL=FILE); a bad knob file is a usage error naming the file and line.
func compareConfigs(args []string) ([]compareConfig, error) {
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
