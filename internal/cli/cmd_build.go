package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/build/phpbuild"
	"github.com/phptune/phptune/internal/build/setup"
)

func init() { register(newBuildCmd) }

func newBuildCmd(env *Env) *cobra.Command {
	var (
		o       phpbuild.Options
		jsonOut bool
	)
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Rebuild the installed PHP (Debian's flags; plain, PGO, LTO, BOLT) into phptune's build cache",
		Long:  buildLong(),
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !phpbuild.Trained(o.Variant) && c.Flags().Changed("train") {
				return usageErr("Try: phptune build --variant pgo --train wordpress", "--train is for the trained variants: pgo, pgo-lto, bolt, pgo-bolt, pgo-lto-bolt")
			}
			return runBuild(env, o, jsonOut)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.PHP, "php", "", "the PHP release to build: the installed one (default) or "+strings.Join(phpbuild.PHPReleases(), ", ")+" (the newer Debian release's source package, built against this Debian)")
	f.StringVar(&o.Variant, "variant", "plain", "plain, pgo, pgo-lto (pgo with gcc's link-time optimisation), or bolt, pgo-bolt, pgo-lto-bolt (that build's php-fpm rewritten by LLVM BOLT from an instrumented training run)")
	f.StringVar(&o.Train, "train", "", "pgo training workload APP[:WORKLOAD]: hello, phpinfo, strings (a private docroot) or io, wordpress[:front|mix|comment] (in a lab of their own, with MariaDB); default strings")
	f.DurationVar(&o.TrainDuration, "train-duration", phpbuild.DefaultTrainDuration, "how long the generator loads the instrumented php-fpm (another duration is another build)")
	f.StringVar(&o.Source, "source", "", "a Debian php source directory or tarball instead of apt-get source")
	f.IntVar(&o.Jobs, "jobs", 2, "make -j")
	f.StringVar(&o.ExtraCFLAGS, "cflags", "", "compiler flags added after Debian's, e.g. \"-O3\" or \"-march=native\" (part of the build's key; shown in its record)")
	f.BoolVar(&o.Minimal, "minimal", false, "--disable-all with fpm, cgi, cli and opcache only (tests, CI)")
	f.BoolVar(&o.Rebuild, "rebuild", false, "build again even when the same build exists")
	f.BoolVar(&o.NoInstall, "no-install", false, "print the apt-get line for missing build dependencies instead of installing them")
	f.BoolVar(&jsonOut, "json", false, "print the build's record as JSON")
	cmd.AddCommand(newBuildListCmd(env), newBuildRmCmd(env), newBuildDepsCmd(env), newBuildUnitCmd(env))
	return cmd
}

// runBuild builds (or finds) the build o asks for and prints its record.
func runBuild(env *Env, o phpbuild.Options, jsonOut bool) error {
	o.Progress = env.Stderr
	start := time.Now()
	res, err := phpbuild.Build(env.Ctx, o)
	if err != nil {
		return buildErr(err, "Try: phptune build --help")
	}
	r := res.Record
	if jsonOut {
		return printJSON(env, r)
	}
	if res.Cached {
		fmt.Fprintf(env.Stderr, "build: already built (%s); --rebuild makes it again\n", time.Since(start).Round(time.Millisecond))
	}
	printBuild(env, r)
	return nil
}

// buildErr is a build's error: one about a flag (its text starts with
// "--") is a usage error with hint; a missing dependency names its
// apt-get line itself.
func buildErr(err error, hint string) error {
	var me *phpbuild.MissingDepsError
	if !errors.As(err, &me) && strings.HasPrefix(err.Error(), "--") {
		return usageErr(hint, "%v", err)
	}
	return err
}

// stepsText is a build's n steps (step(i) is the name and seconds of
// the i-th) and their total, as "configure 12.0s, make 300.1s (total 312s)".
func stepsText(n int, step func(i int) (string, float64)) string {
	var steps []string
	total := 0.0
	for i := 0; i < n; i++ {
		name, sec := step(i)
		steps = append(steps, fmt.Sprintf("%s %.1fs", name, sec))
		total += sec
	}
	return fmt.Sprintf("%s (total %.0fs)", strings.Join(steps, ", "), total)
}

// printBuild prints a build's record for people, its security warning
// first and last when its source is older than the installed PHP.
func printBuild(env *Env, r *phpbuild.Record) {
	note := r.SecurityNote()
	if note != "" {
		fmt.Fprintln(env.Stdout, note)
	}
	fmt.Fprintf(env.Stdout, "build %s\n", r.ID)
	fmt.Fprintf(env.Stdout, "  PHP %s (package %s) from %s; installed php-fpm %s\n", r.SourceVersion, r.SourcePackage, r.Source, r.Installed)
	v := r.Variant
	if r.Minimal {
		v += " (minimal: --disable-all, fpm/cgi/cli, opcache)"
	}
	fmt.Fprintf(env.Stdout, "  variant %s", v)
	if r.Training != "" {
		fmt.Fprintf(env.Stdout, ", trained on %s: %s", r.Training, r.TrainInfo)
	}
	fmt.Fprintln(env.Stdout)
	if r.ExtraCFLAGS != "" {
		fmt.Fprintf(env.Stdout, "  added to Debian's flags: %s\n", r.ExtraCFLAGS)
	}
	fmt.Fprintf(env.Stdout, "  CFLAGS %s\n  configure %s\n", r.CFLAGS, strings.Join(r.Configure, " "))
	fmt.Fprintf(env.Stdout, "  steps %s\n", stepsText(len(r.Steps), func(i int) (string, float64) { return r.Steps[i].Name, r.Steps[i].Seconds }))
	fmt.Fprintf(env.Stdout, "  distro extensions: %s\n", phpbuild.SummarizeExt(r.Extensions))
	if r.DistroPHP != "" {
		fmt.Fprintf(env.Stdout, "  PHP %s built on Debian's PHP %s: a lab of it reads /etc/php/%s/fpm/php.ini", r.SourceVersion, r.DistroPHP, r.DistroPHP)
		if len(r.Unavailable) > 0 {
			fmt.Fprintf(env.Stdout, " and runs without %s (no build of them for this release here)", strings.Join(r.Unavailable, ", "))
		}
		fmt.Fprintln(env.Stdout)
	}
	if r.ExtNote != "" {
		fmt.Fprintf(env.Stdout, "  (%s; the build has its own opcache)\n", r.ExtNote)
	}
	fmt.Fprintf(env.Stdout, "  binaries and logs: %s/%s\n", phpbuild.Dir(), r.ID)
	if note != "" {
		fmt.Fprintln(env.Stdout, note)
	}
}

func newBuildListCmd(env *Env) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the complete builds in phptune's build cache",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			rs, err := phpbuild.List()
			if err != nil {
				return err
			}
			if jsonOut {
				if rs == nil {
					rs = []*phpbuild.Record{}
				}
				return printJSON(env, rs)
			}
			if len(rs) == 0 {
				fmt.Fprintln(env.Stderr, "no builds; make one with: phptune build")
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPHP\tVARIANT\tTRAINING\tCREATED\tSECURITY")
			for _, r := range rs {
				v := r.Variant
				if r.Minimal {
					v += " (minimal)"
				}
				if r.ExtraCFLAGS != "" {
					v += " +" + r.ExtraCFLAGS
				}
				sec := "same as or newer than installed " + r.Installed
				if r.Older {
					sec = "OLDER than installed " + r.Installed + ": missing security fixes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.SourceVersion, v, dash(r.Training), r.Created, sec)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the records as JSON")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newBuildRmCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID",
		Short: "Remove a build from phptune's build cache",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := phpbuild.Remove(args[0]); err != nil {
				if errors.Is(err, phpbuild.ErrNoBuild) {
					return usageErr("List them with: phptune build list", "%v", err)
				}
				return err
			}
			fmt.Fprintf(env.Stderr, "build %s removed\n", args[0])
			return nil
		},
	}
}

func newBuildDepsCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "deps",
		Short: "Install what every build needs (compiler, make, autoconf, dpkg-dev) as root, or print the apt-get line",
		Long: `deps installs the packages every build needs: ` + strings.Join(setup.BuildDeps, ", ") + `.
The packages Debian's configure flags need on top (libssl-dev, libxml2-dev,
libsystemd-dev...) are known only once the source's debian/rules is read:
phptune build installs those itself (as root) or prints their apt-get line.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := setup.InstallMissing(env.Ctx, setup.BuildDeps, env.Stderr); err != nil {
				return err
			}
			fmt.Fprintln(env.Stderr, "build deps: installed")
			return nil
		},
	}
}
