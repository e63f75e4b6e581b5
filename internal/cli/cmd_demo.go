package cli

import (
	"time"

	"github.com/spf13/cobra"
)

func init() { register(newDemoCmd) }

// newDemoCmd is the README's main command: the whole loop on the embedded
// WordPress. It is phptune tune with the demo's settings.
func newDemoCmd(env *Env) *cobra.Command {
	f := &tuneFlags{
		stack:     stackFlags{app: "wordpress", defaultApp: "wordpress", workload: "front", command: "demo"},
		objective: "throughput",
		maxErrors: "0.1%", strategy: "domain", holdoutRounds: 4,
	}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Tune the embedded WordPress front page under a memory budget and write the report",
		Long: `phptune demo runs the whole loop on the embedded WordPress: it brings up a
WordPress lab from the distro's packages (seeded with posts, pages and
comments), tunes the front page under a memory budget, prints the before/after
table, writes the recommended configuration files and the report, and takes
the lab down. It is the same as:

  phptune tune --app wordpress --workload front --memory-budget 1G --time-budget 15m -c 20`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runTune(env, f, tuneCommandLine(c))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.memoryBudget, "memory-budget", "1G", "memory the stack may use")
	fl.DurationVar(&f.timeBudget, "time-budget", 15*time.Minute, "time for the whole tune, holdout and curve included")
	fl.IntVarP(&f.conns, "connections", "c", 20, "concurrent visitors of the front page")
	fl.DurationVar(&f.trialDuration, "trial-duration", 10*time.Second, "measured time of each trial")
	fl.DurationVar(&f.trialWarmup, "trial-warmup", 3*time.Second, "warm-up of each trial, not measured")
	fl.StringVarP(&f.outDir, "output", "o", "", "a new or empty directory of yours for the files (default ./phptune-tune-RUN)")
	return cmd
}
