package cli

import (
	"github.com/spf13/cobra"
)

func init() { register(newDemoCmd) }

// demoDefaults are the flags in which demo differs from tune: the embedded
// WordPress, 20 visitors of its front page, a 1 GiB memory budget. Every
// other flag is tune's, with tune's default, so a flag added to tune has a
// valid value in demo.
var demoDefaults = map[string]string{
	"memory-budget": "1G",
	"connections":   "20",
}

// newDemoCmd is the README's main command: the whole loop on the embedded
// WordPress. It is phptune tune with demoDefaults.
func newDemoCmd(env *Env) *cobra.Command {
	cmd, _ := demoCmd(env)
	return cmd
}

// demoCmd is demo's command and the tune flags it fills.
func demoCmd(env *Env) (*cobra.Command, *tuneFlags) {
	f := &tuneFlags{}
	f.stack.defaultApp = "wordpress"
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Tune the embedded WordPress front page under a memory budget and write the report",
		Long: `phptune demo runs the whole loop on the embedded WordPress: it brings up a
WordPress lab from the distro's packages (seeded with posts, pages and
comments), tunes the front page under a memory budget, prints the before/after
table and the verdict, writes the recommended configuration files and the
report, and takes the lab down. It is phptune tune with other defaults (every
tune flag works here too):

  phptune tune --app wordpress --workload front --memory-budget 1G --time-budget 15m -c 20`,
		Example: `  phptune demo
  phptune demo --time-budget 5m`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runTuneCommand(env, f, c)
		},
	}
	f.add(cmd.Flags(), "demo")
	setFlagDefaults(cmd.Flags(), demoDefaults)
	return cmd, f
}
