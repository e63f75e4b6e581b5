// Package cli implements phptune's command line. Each subcommand lives in its
// own cmd_*.go file and registers itself with register, so the command tree is
// assembled in one place (newRoot) and the whole CLI can be run in-process by
// tests through Run.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/phptune/phptune/internal/hostinfo"
	"github.com/phptune/phptune/internal/results"
	"io"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/lab"
)

// Env is what every subcommand gets: the context (cancelled on Ctrl-C or
// SIGTERM) and the output streams. Results go to Stdout, progress and
// diagnostics to Stderr.
type Env struct {
	Ctx    context.Context
	Stdout io.Writer
	Stderr io.Writer
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
	return root
}

// Run executes phptune with args (without the program name) and returns the
// error, if any, without printing it.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	env := &Env{Ctx: ctx, Stdout: stdout, Stderr: stderr}
	root := newRoot(env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && isUnknownCommand(err) {
		return &UsageError{Msg: err.Error(), Hint: "Try: phptune --help"}
	}
	return err
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
	fmt.Fprintln(stderr, "phptune:", err)
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

// resultsDBPath is the results database every bench and tune run is stored
// in: beside the labs ($PHPTUNE_HOME/results.db, /var/lib/phptune/results.db
// for root).
func resultsDBPath() string {
	return filepath.Join(filepath.Dir(lab.Root()), "results.db")
}

// environment describes the machine and the stack's versions for a
// result, the versions cached beside the results database.
func environment(ctx context.Context) *results.Environment {
	return hostinfo.CollectCached(ctx, filepath.Join(filepath.Dir(lab.Root()), "versions.json"))
}
