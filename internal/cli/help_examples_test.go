package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/testkit/readmecmd"
)

// TestHelpExamplesParse: every one-line example of a --help text that is
// a complete phptune command names a command that exists, flags it has,
// values of their types and the arguments it takes. Running each as
// written is left to the README test for the commands the README shows;
// an example here is only parsed (the servers and build examples alone
// would take hours).
func TestHelpExamplesParse(t *testing.T) {
	env := &Env{Ctx: context.Background(), Stdout: io.Discard, Stderr: io.Discard}
	root := newRoot(env)
	n := 0
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			args, _, err := readmecmd.Split(strings.TrimSpace(line))
			if err != nil {
				t.Errorf("%s --help: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if len(args) < 2 || args[0] != "phptune" || strings.ContainsAny(line, "|<>$") {
				continue // not a phptune command, or one that pipes or redirects
			}
			n++
			sub, rest, err := root.Find(args[1:])
			if err != nil || sub == root {
				t.Errorf("%s --help: example %q names no command (%v)", c.CommandPath(), line, err)
				continue
			}
			sub.Flags().VisitAll(func(f *pflag.Flag) { f.Changed = false })
			if err := sub.ParseFlags(rest); err != nil {
				t.Errorf("%s --help: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if sub.Args != nil {
				if err := sub.Args(sub, sub.Flags().Args()); err != nil {
					t.Errorf("%s --help: example %q: %v", c.CommandPath(), line, err)
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if n < 15 {
		t.Errorf("found %d phptune examples in the --help texts, expected more: is the parsing broken?", n)
	}
	t.Logf("%d examples parsed", n)
}
