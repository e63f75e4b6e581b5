package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/build/phproot"
	"github.com/phptune/phptune/internal/stack/lab"
)

func init() { register(newPHPCmd) }

func newPHPCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "php",
		Short: "Newer PHP from its Debian release's own packages (PHP roots): add, list, remove, lint",
		Long: `php makes, lists and removes PHP roots: a Debian 13 (trixie) file tree holding
that release's own php8.4-fpm and the extensions the host's PHP loads, made by
mmdebstrap from the Debian archive the system's apt sources name, and kept in
phptune's home (` + phproot.Dir(lab.Home()) + `). Nothing is compiled and nothing
under /etc changes. phptune build --php 8.4 instead rebuilds PHP 8.4 from its
source, when the archive serves it.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(newPHPAddCmd(env), newPHPListCmd(env), newPHPRemoveCmd(env), newPHPLintCmd(env))
	return cmd
}

func newPHPAddCmd(env *Env) *cobra.Command {
	var ext, skip []string
	var keyring string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "add VERSION",
		Short: "Make a PHP root of VERSION (8.4: Debian 13's php8.4-fpm and extensions) as root",
		Long: `add makes the PHP root of VERSION (8.4 only, from Debian 13 "trixie"): the
host's php -m is mapped to that release's packages (mysqli and pdo_mysql to
php8.4-mysql, dom and xsl to php8.4-xml, Zend OPcache to php8.4-opcache,
apcu to php8.4-apcu...; built-in modules need none), and --ext adds modules.

Everything is checked before anything is made, and refused with the fix: the
release, root, mmdebstrap (make setup installs it), the keyring (it must hold
Debian 13's key that signs the archive's Release), the route to the archive,
1 GiB free, and every module against the release's package index (a module
without a package is named; --skip-ext leaves it out).

The root is made in a work directory beside its place (about 300 MB, a minute
or two), checked (php-fpm8.4 -v, php8.4 -m lists every wanted module), recorded
(manifest.json: every package and version, the time it took, its size) and
only then renamed into place: a half-made root is removed, never used. An
existing root is returned as it is (phptune php remove 8.4 to make it again).`,
		Example: `  phptune php add 8.4
  phptune php add 8.4 --ext apcu,redis --skip-ext excimer`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := phproot.CheckVersion(args[0]); err != nil {
				return usageErr("Try: phptune php add 8.4", "%v", err)
			}
			o := phproot.Options{Version: args[0], Home: lab.Home(), Keyring: keyring, Progress: env.Stderr}
			var err error
			if o.Ext, err = phproot.NormalizeExt("--ext", ext); err != nil {
				return usageErr("Try: phptune php add 8.4 --ext apcu,redis", "%v", err)
			}
			if o.SkipExt, err = phproot.NormalizeExt("--skip-ext", skip); err != nil {
				return usageErr("Try: phptune php add 8.4 --skip-ext excimer", "%v", err)
			}
			return runPHPAdd(env, o, jsonOut)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&ext, "ext", nil, "modules to add to the host's php -m list (apcu,redis,...)")
	f.StringSliceVar(&skip, "skip-ext", nil, "modules to leave out, e.g. one the release has no package for")
	f.StringVar(&keyring, "keyring", phproot.DefaultKeyring, "the keyring that checks the archive's signature (it must hold Debian 13's key)")
	f.BoolVar(&jsonOut, "json", false, "print the root's manifest as JSON")
	return cmd
}

// runPHPAdd makes (or finds) the root o asks for and prints it. Every
// check runs before phptune's home is made or touched.
func runPHPAdd(env *Env, o phproot.Options, jsonOut bool) error {
	start := time.Now()
	r, err := phproot.Find(o.Home, o.Version)
	made := false
	if errors.Is(err, phproot.ErrNotMade) {
		var p *phproot.Prepared
		if p, err = phproot.Prepare(env.Ctx, o); err != nil {
			return err
		}
		if _, err = lab.EnsureHome(); err != nil {
			return err
		}
		r, err = phproot.Make(env.Ctx, p, o.Home, o.Progress)
		made = true
	}
	if err != nil {
		return err
	}
	if jsonOut {
		return printJSON(env, r.Manifest)
	}
	if !made {
		fmt.Fprintf(env.Stderr, "php add: PHP %s's root already exists (%s); phptune php remove %s makes it again\n", r.Version, time.Since(start).Round(time.Millisecond), r.Version)
	}
	m := r.Manifest
	fmt.Fprintf(env.Stdout, "PHP root %s: %s\n", r.Version, m.PHP)
	fmt.Fprintf(env.Stdout, "  Debian %s (%s) from %s; %d packages, %s, made in %.0fs at %s\n", m.Debian, m.Suite, m.Archive, len(m.Packages), sizeText(m.DiskBytes), m.Seconds, m.MadeAt.Format(time.RFC3339))
	var mods []string
	for _, e := range m.Extensions {
		mods = append(mods, e.Module)
	}
	fmt.Fprintf(env.Stdout, "  modules: %s\n", strings.Join(mods, " "))
	if len(m.Skipped) > 0 {
		fmt.Fprintf(env.Stdout, "  left out (--skip-ext): %s\n", strings.Join(m.Skipped, " "))
	}
	fmt.Fprintf(env.Stdout, "  php-fpm: %s\n  manifest: %s/manifest.json\n", r.Host(r.FPM), r.Dir)
	return nil
}

// phpRelease is the version in php -v's first line ("PHP 8.4.11 (fpm-fcgi)
// ..." gives "8.4.11"), or "?".
func phpRelease(line string) string {
	if f := strings.Fields(line); len(f) > 1 {
		return f[1]
	}
	return "?"
}

// sizeText is n bytes in MB.
func sizeText(n int64) string { return fmt.Sprintf("%d MB", (n+500_000)/1_000_000) }

func newPHPListCmd(env *Env) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the PHP roots in phptune's home",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			rs, err := phproot.List(lab.Home())
			if err != nil {
				return err
			}
			if jsonOut {
				ms := []phproot.Manifest{}
				for _, r := range rs {
					ms = append(ms, r.Manifest)
				}
				return printJSON(env, ms)
			}
			if len(rs) == 0 {
				fmt.Fprintln(env.Stderr, "no PHP roots; make one with: phptune php add 8.4")
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tPHP\tPATH\tSIZE\tPACKAGES\tMADE")
			for _, r := range rs {
				m := r.Manifest
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.Version, phpRelease(m.PHP), r.FS, sizeText(m.DiskBytes), len(m.Packages), m.MadeAt.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the manifests as JSON")
	return cmd
}

func newPHPRemoveCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "remove VERSION",
		Short: "Remove the PHP root of VERSION",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := phproot.Remove(lab.Home(), args[0]); err != nil {
				if errors.Is(err, phproot.ErrNotMade) || errors.Is(err, phproot.ErrUnknownVersion) {
					return usageErr("List them with: phptune php list", "%v", err)
				}
				return err
			}
			fmt.Fprintf(env.Stderr, "PHP root %s removed\n", args[0])
			return nil
		},
	}
}
