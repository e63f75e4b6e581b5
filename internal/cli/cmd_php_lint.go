package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/build/phplint"
	"github.com/phptune/phptune/internal/build/phproot"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/stack/lab"
)

// phpLintFlags are phptune php lint's command line.
type phpLintFlags struct {
	site, user string
	jsonOut    bool
}

func newPHPLintCmd(env *Env) *cobra.Command {
	var f phpLintFlags
	cmd := &cobra.Command{
		Use:   "lint VERSION [DIR | --site NAME]",
		Short: "Check that a site's PHP files still compile on a PHP root's PHP (php -l), against the installed PHP",
		Long: `lint gives every *.php file under DIR (or under the app root of --site NAME, as
phptune site finds it: the docroot, or the directory holding the docroot and
the app's configuration) to php -l of the PHP root of VERSION (phptune php add
8.4), 50 files a run, two runs at a time, each run bounded to 60 s. php -l
only compiles: no code of the site runs. The root's PHP reads no ini file
(-n), shows every message (error_reporting=E_ALL) and loads the extensions
Debian 13's conf.d enables in the root, as a lab on php.build=debian-VERSION
does, so that a polyfill declaring a function the newer PHP now has fails
here as it would there. Each file it refuses is given to the installed PHP
(php8.2 with its own CLI configuration), to tell a file that fails only on
the newer PHP from one that is already broken.

It prints the files that fail on the newer PHP only, with PHP's own message
and line, those already failing, the deprecations and warnings the newer PHP
raises at compile time (an implicitly nullable parameter type, say) per
file, and a summary; it exits 1 when a file fails on the newer PHP only.
At most 50,000 files are checked (in path order; the
summary says when there were more); symbolic links are not followed.

The files are read by an unprivileged account: with --site the pool's own
account when discovery found it, else --user, else phptune's account (run as
root; phptune's home is made passable for another account, as for a site
lab). A file that account cannot read is listed as not checked.

Errors PHP raises only when code runs (a class name the newer PHP declares,
a function an extension no longer has) are not found by php -l: measure the
site on php.build=debian-VERSION (compare, tune), whose results count PHP's
fatal errors, warnings and deprecations per configuration, as PHP logs them:
only what error_reporting lets through (Debian's php.ini leaves out
deprecations, WordPress without WP_DEBUG deprecations and notices), where
lint shows every message PHP raises compiling a file.`,
		Example: `  phptune php lint 8.4 /srv/www/site
  phptune php lint 8.4 --site site.test --json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := phproot.CheckVersion(args[0]); err != nil {
				return usageErr("Try: phptune php lint 8.4 /srv/www/site", "%v", err)
			}
			if (len(args) == 2) == (f.site != "") {
				return usageErr("Try: phptune php lint 8.4 /srv/www/site, or phptune php lint 8.4 --site site.test", "give a DIR or --site NAME (one of them)")
			}
			return runPHPLint(env, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.site, "site", "", "lint the app root of this host's site NAME|DIR (as phptune site finds it)")
	fl.StringVar(&f.user, "user", "", "the account that reads the files (default: the site's pool account, else phptune's)")
	fl.BoolVar(&f.jsonOut, "json", false, "print the result as JSON")
	return cmd
}

// phpLintResult is php lint's --json.
type phpLintResult struct {
	PHP     string   `json:"php"`
	Against string   `json:"against"`
	Account string   `json:"account"`
	Notes   []string `json:"notes,omitempty"`
	*phplint.Report
}

// runPHPLint resolves the directory, the account and both PHPs, then
// lints and prints.
func runPHPLint(env *Env, args []string, f phpLintFlags) error {
	r, err := phproot.Find(lab.Home(), args[0])
	if err != nil {
		return usageErr("Make it with: phptune php add "+args[0], "%v", err)
	}
	dir, user, notes, err := lintTarget(env, args, f)
	if err != nil {
		return err
	}
	acct, err := lab.NewToolAccount(user)
	if err != nil {
		return usageErr("Give an existing account that may read the files: --user www-data", "%v", err)
	}
	argv, extNotes, err := r.CLICommand()
	if err != nil {
		return err
	}
	notes = append(notes, extNotes...)
	newArgv := append(argv, "-d", "error_reporting=-1", "-d", "display_errors=1", "-d", "log_errors=0", "-d", "html_errors=0")
	old, oldName, err := oldPHPCLI()
	if err != nil {
		notes = append(notes, err.Error()+": the files that fail are not checked against it")
	}
	newName := "PHP " + phpRelease(r.Manifest.PHP)
	o := phplint.Options{Dir: dir, New: newArgv, Old: old, Attr: acct.SysProcAttr}
	if !f.jsonOut {
		fmt.Fprintf(env.Stderr, "php lint: %s as %s with %s (%s), failures against %s\n", termsafe.Line(dir), termsafe.Line(acct.Name), newName, r.Dir, oldName)
		for _, n := range notes {
			fmt.Fprintf(env.Stderr, "php lint: %s\n", termsafe.Line(n))
		}
	}
	rep, err := phplint.Run(env.Ctx, o)
	if err != nil {
		return err
	}
	if f.jsonOut {
		err = printJSON(env, phpLintResult{PHP: newName, Against: oldName, Account: acct.Name, Notes: notes, Report: rep})
	} else {
		phplint.WriteText(env.Stdout, rep, newName, oldName, 5)
	}
	if err == nil && len(rep.FailNew) > 0 {
		what := fmt.Sprintf("%d files no longer compile", len(rep.FailNew))
		if len(rep.FailNew) == 1 {
			what = "1 file no longer compiles"
		}
		err = fmt.Errorf("%s on %s", what, newName)
	}
	return err
}

// lintTarget is the directory to lint and the account to read it as:
// DIR and --user, or --site's app root and its pool's account.
func lintTarget(env *Env, args []string, f phpLintFlags) (dir, user string, notes []string, err error) {
	if f.site == "" {
		if dir, err = filepath.Abs(args[1]); err != nil {
			return "", "", nil, err
		}
		if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
			return "", "", nil, usageErr("Give the directory of the site's PHP files", "%s is not a directory", dir)
		}
		return dir, f.user, nil, nil
	}
	s, err := findSite(env.Ctx, f.site)
	if err != nil {
		return "", "", nil, err
	}
	dir, notes = lab.SiteAppRoot(s)
	user = f.user
	if user == "" && s.Pool != nil && s.Pool.User != "" {
		user = s.Pool.User
	}
	return dir, user, notes, nil
}

// oldPHPCLI is the installed PHP's CLI (the distro's php-fpm's release),
// with every message shown, and its name: "PHP 8.2".
func oldPHPCLI() ([]string, string, error) {
	b, err := phpfpm.Find()
	if err != nil {
		return nil, "the installed PHP", err
	}
	cli := "/usr/bin/php" + b.Version
	if _, err := os.Stat(cli); err != nil {
		return nil, "PHP " + b.Version, fmt.Errorf("no %s (php%s-cli)", cli, b.Version)
	}
	return []string{cli, "-d", "error_reporting=-1", "-d", "display_errors=1", "-d", "log_errors=0", "-d", "html_errors=0"}, "PHP " + b.Version, nil
}
