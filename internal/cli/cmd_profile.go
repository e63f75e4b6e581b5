package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labprofile"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/watch/perf"
)

func init() { register(newProfileCmd) }

// profileFlags are phptune profile's command line.
type profileFlags struct {
	// stack is the lab profiled and its traffic.
	stack               stackFlags
	clock, outDir       string
	conns, rounds, freq int
	duration, warmup    time.Duration
	asJSON, native, php bool
}

func newProfileCmd(env *Env) *cobra.Command {
	f := &profileFlags{stack: stackFlags{defaultApp: "hello"}}
	cmd := &cobra.Command{
		Use:     "profile [--app APP | --docroot DIR | --lab NAME | --site NAME]",
		Short:   "Show where the time goes under load: native stacks (perf) and PHP functions (excimer), and the knobs they point to",
		Long:    profileLong,
		Example: profileExample,
		RunE: func(c *cobra.Command, args []string) error {
			set, err := f.validate()
			if err != nil {
				return err
			}
			return runProfile(env, f, set)
		},
	}
	fl := cmd.Flags()
	f.stack.add(fl, "profile", workload.Front)
	fl.IntVarP(&f.conns, "connections", "c", 8, "connections")
	fl.IntVar(&f.rounds, "rounds", 3, "rounds; each runs plain, with perf and with excimer once")
	fl.DurationVarP(&f.duration, "duration", "d", 10*time.Second, "measured time of each run")
	fl.DurationVar(&f.warmup, "warmup", 3*time.Second, "warm-up of each run, not measured (the samplers run through it)")
	fl.StringVar(&f.clock, "php-clock", lab.ProfilerCPU, "excimer's clock: cpu (the worker's CPU time) or wall (waiting on the database counts too)")
	fl.IntVar(&f.freq, "freq", perf.DefaultOptions.Freq, "perf's sampling rate per CPU, Hz")
	fl.BoolVar(&f.native, "native", true, "sample native stacks with perf")
	fl.BoolVar(&f.php, "php", true, "sample PHP stacks with excimer")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fl.StringVarP(&f.outDir, "output", "o", "", "a new or empty directory of yours for the files (default ./phptune-profile-TIME)")
	return cmd
}

// validate refuses what cannot run before anything starts and returns
// the --knobs and --set assignments a lab of its own starts with.
func (f *profileFlags) validate() ([]string, error) {
	if err := f.stack.check(false); err != nil {
		return nil, err
	}
	set, _, err := knobConfig(f.stack.knobsFile, f.stack.set)
	if err != nil {
		return nil, err
	}
	switch {
	case f.rounds < 1 || f.rounds > 20 || f.conns < 1 || f.duration < time.Second || f.warmup < 0:
		return nil, usageErr("Try: --rounds 3 -c 8 -d 10s", "--rounds 1..20, -c at least 1, -d at least 1s")
	case f.clock != lab.ProfilerCPU && f.clock != lab.ProfilerWall:
		return nil, usageErr("Try: --php-clock cpu (CPU time) or --php-clock wall (waits count too)", "--php-clock %q is not cpu or wall", f.clock)
	case f.freq < 1 || f.freq > 999:
		return nil, usageErr("Try: --freq 49 (DWARF stacks are costly: 49-99 Hz)", "--freq %d: use 1..999 Hz", f.freq)
	case !f.native && !f.php:
		return nil, usageErr("Leave out --native=false or --php=false", "nothing to sample: --native and --php are both off")
	}
	if err := checkOutDirFor(f.outDir, "phptune-profile-TIME", "profile"); err != nil {
		return nil, err
	}
	return set, nil
}

// runProfile is phptune profile once its flags are valid: the output
// directory made, the session opened, the lab profiled (labprofile.Run),
// the files written and the result printed.
func runProfile(env *Env, f *profileFlags, set []string) error {
	ctx := env.Ctx
	plan, err := f.stack.plan(ctx)
	if err != nil {
		return err
	}
	// Made now, before the lab: a directory planted under the default
	// name is refused before anything runs.
	outDir := f.outDir
	if outDir == "" {
		outDir = "phptune-profile-" + time.Now().UTC().Format("20060102-150405")
	}
	out, err := createOutDir(outDir)
	if err != nil {
		return err
	}
	defer out.CloseRemovingIfEmpty()
	say := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "profile: "+format+"\n", a...) }
	sess, err := openSession(env, &f.stack, sessionSpec{command: "profile", site: plan.site, set: set, restore: true, workload: f.stack.workloadSpec()})
	if err != nil {
		return err
	}
	defer sess.Close()
	l, w := sess.Lab, sess.Workload
	appName := f.stack.appLabel()
	if f.stack.lab != "" {
		appName = l.App
	}
	res, err := labprofile.Run(ctx, l, w, labprofile.Options{
		Conns: f.conns, Duration: f.duration, Warmup: f.warmup, Rounds: f.rounds, PHPClock: f.clock,
		Native: f.native, PHP: f.php, Perf: perf.Options{Freq: f.freq, StackBytes: perf.DefaultOptions.StackBytes},
		Say: say,
	})
	if err != nil {
		return err
	}
	if err := redact.Value(res, nil); err != nil {
		return err
	}
	if err := report.WriteProfile(out, appName, w.Name, res); err != nil {
		return err
	}
	if f.asJSON {
		e := json.NewEncoder(env.Stdout)
		e.SetIndent("", "  ")
		return e.Encode(res)
	}
	report.ProfileText(env.Stdout, res)
	fmt.Fprintf(env.Stdout, "\nfiles: %s (profile.html: flame graphs)\n", outDir)
	return nil
}
