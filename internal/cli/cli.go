// Package cli implements phptune's command line. Each subcommand lives in its
// own cmd_*.go file and registers itself with register, so the command tree is
// assembled in one place (newRoot) and the whole CLI can be run in-process by
// tests through Run.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/build/phpbuild"
	"github.com/phptune/phptune/internal/build/phproot"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/watch/hostinfo"
)

// Env is what every subcommand gets: the context (cancelled on Ctrl-C or
// SIGTERM) and the output streams. Results go to Stdout, progress and
// diagnostics to Stderr.
type Env struct {
	Ctx context.Context
	// Stdout and Stderr show control characters as text (termsafe): a
	// process name, status page, log line, title or answer from a lab or
	// a host cannot drive the terminal phptune prints it on.
	Stdout io.Writer
	Stderr io.Writer
	// TermStdout and TermStderr are the terminals themselves, for
	// phptune's own control sequences (top's redraw, bench's progress
	// line) and terminal checks, and nothing from outside phptune.
	TermStdout io.Writer
	TermStderr io.Writer
	// Args is the command line as given to Run (without the program
	// name), for the record of a run: redact it before storing it.
	Args []string
}

var commandFactories []func(*Env) *cobra.Command

// register adds a subcommand constructor; called from init in cmd_*.go files.
func register(f func(*Env) *cobra.Command) { commandFactories = append(commandFactories, f) }

// UsageError marks an error caused by the command line itself; Main exits 2
// for it. Hint, when set, says what to type instead.
type UsageError struct {
	Msg  string
	Hint string
}

func (e *UsageError) Error() string {
	if e.Hint == "" {
		return e.Msg
	}
	return e.Msg + "\n" + e.Hint
}

func usageErr(hint, format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

func newRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "phptune",
		Short: "Measure and tune PHP web stacks with evidence",
		Long: `phptune brings up a PHP stack (nginx + php-fpm + MariaDB + an app) from the
distro's own packages in a private directory, loads it with its own HTTP/1.1
and FastCGI generator, watches every process, searches for the configuration
that is best under your limits and writes the evidence as a report.

Exit codes: 0 success, 1 failure, 2 bad command line, 130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetContext(env.Ctx)
	cmds := make([]*cobra.Command, 0, len(commandFactories))
	for _, f := range commandFactories {
		cmds = append(cmds, f(env))
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name() < cmds[j].Name() })
	root.AddCommand(cmds...)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Msg: err.Error(), Hint: "Try: " + c.CommandPath() + " --help"}
	})
	usageArgs(root)
	return root
}

// usageArgs makes a wrong number of arguments a usage error (exit 2) that
// points at the command's help, as a bad flag is, for c and every command
// under it.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &UsageError{Msg: err.Error(), Hint: "Try: " + cmd.CommandPath() + " --help"}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// Run executes phptune with args (without the program name) and returns the
// error, if any, without printing it.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	env := &Env{Ctx: ctx, Stdout: termsafe.NewWriter(stdout), Stderr: termsafe.NewWriter(stderr), TermStdout: stdout, TermStderr: stderr, Args: args}
	stdout, stderr = env.Stdout, env.Stderr
	// A tune or compare killed outright (SIGKILL, the OOM killer) leaves
	// its lab; the next command says so and takes it down.
	for _, h := range lab.ReapOrphans() {
		fmt.Fprintf(stderr, "phptune: lab %s %s\n", h.Lab.Name, h.Status)
	}
	// So does a run with --apply-sysctl killed outright: the kernel
	// settings it raised go back to the values it recorded.
	restoreLeftoverSysctl(stderr)
	wire(stderr)
	root := newRoot(env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && isUnknownCommand(err) {
		return &UsageError{Msg: err.Error(), Hint: "Try: phptune --help"}
	}
	return err
}

// wireBuilds is done once per process: see wire.
var wireBuilds sync.Once

// wire connects packages that must not import each other, for every
// command. The knob php.build names a PHP phptune built, or a PHP root
// of another Debian release (debian-8.4, from phptune php add): its valid
// values come from the build cache and the roots, and a lab resolves them
// through package phpbuild or phproot, which import knob and lab. A figure JSON cannot carry (+Inf,
// NaN) is written as 0, and said on stderr.
func wire(stderr io.Writer) {
	wireBuilds.Do(func() {
		knob.BuildValidator = func(v string) (string, error) {
			if _, ok := phproot.BuildVersion(v); ok {
				return phproot.Validate(v)
			}
			return phpbuild.Validator(v)
		}
		lab.PHPBuilds = func(id string) (*lab.PHPBuild, error) {
			if _, ok := phproot.BuildVersion(id); ok {
				return phproot.ForLab(id)
			}
			return phpbuild.ForLab(id)
		}
	})
	redact.Warn = func(msg string) { fmt.Fprintln(stderr, "phptune: warning: "+msg) }
}

func isUnknownCommand(err error) bool {
	var ue *UsageError
	if errors.As(err, &ue) {
		return false
	}
	s := err.Error()
	return len(s) > 15 && (s[:15] == "unknown command" || (len(s) > 20 && s[:20] == "unknown shorthand fl"))
}

// Main runs phptune, prints any error to stderr and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := Run(ctx, args, stdout, stderr)
	if err == nil {
		return 0
	}
	printError(stderr, err)
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		return 2
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return 130
	default:
		return 1
	}
}

// printError prints a command's error. It may quote what a lab or a host
// wrote (a log line, an answer, a path): its control characters are shown,
// not acted on.
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, "phptune:", termsafe.Text(err.Error()))
}

// resultsDBPath is the results database every bench and tune run is stored
// in: in phptune's state home, beside the labs ($PHPTUNE_HOME/results.db,
// /var/lib/phptune/results.db for root).
func resultsDBPath() string {
	return filepath.Join(lab.Home(), "results.db")
}

// openResults makes phptune's state home private (lab.EnsureHome) and
// opens the results database in it, which store.Open makes private too.
// names are the command's --redact names: nothing is stored with their
// values.
func openResults(ctx context.Context, names []string) (*store.DB, error) {
	if _, err := lab.EnsureHome(); err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, resultsDBPath())
	if err != nil {
		return nil, err
	}
	db.Redact(names...)
	return db, nil
}

// environment describes the machine and the stack's versions for a
// result, the versions cached beside the results database.
func environment(ctx context.Context) *results.Environment {
	return hostinfo.CollectCached(ctx, filepath.Join(lab.Home(), "versions.json"))
}

// addRedactFlag adds --redact NAME to a command that records requests or
// command lines.
func addRedactFlag(fl *pflag.FlagSet, names *[]string) {
	fl.StringArrayVar(names, "redact", nil, "also treat `NAME` as secret: the values of headers, form fields, query parameters and flags called NAME are replaced by <redacted> in the results database, the JSON, text and HTML (repeatable; Authorization, Cookie and names with key, token, pass, password, passwd, secret, auth or session are always redacted)")
}

// checkRedactNames refuses --redact values that are not names (a whole
// header line, an assignment), which would silently redact nothing.
func checkRedactNames(names []string) error {
	for _, n := range names {
		if strings.TrimSpace(n) == "" || strings.ContainsAny(n, ":= \t\r\n") {
			return usageErr("Try: --redact X-Tenant (the header or field name only; repeat --redact for more)", "--redact %q: give the name of a header, form field or query parameter, without its value", n)
		}
	}
	return nil
}

// groupCmd is a command that only holds subcommands: run alone it fails
// with missing, the usage error naming them.
func groupCmd(use, short string, missing error, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return missing },
	}
	cmd.AddCommand(subs...)
	return cmd
}
