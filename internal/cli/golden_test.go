package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// The golden CLI tests run phptune in-process through Main, as the
// binary runs it, and compare its stdout, stderr and exit code with the
// files under testdata/cli. After an intended change of output, rewrite
// them with
//
//	go test ./internal/cli -run '^TestGolden' -update
//
// (make golden rewrites every package's) and review git diff.
//
// A case is testdata/cli/NAME.args: one argument a line, verbatim; lines
// starting with # are comments, and "# exit: N" gives the exit code the
// case must end with (0 when absent; -update does not change it). Its
// output is NAME.stdout and NAME.stderr. In arguments, $TMP (a directory of
// the case's own), $PHPTUNE_HOME and $TESTDATA (testdata/cli) are
// expanded, and in the output they and the host name are put back, so the
// golden files hold no path of one run or machine.
//
// Every case runs with a fresh PHPTUNE_HOME whose results database holds
// the stored runs of testdata/cli/runs (see seedResults). Every command's
// --help is a case of its own, generated from the command tree
// (testdata/cli/help/COMMAND.stdout): a new command fails until its
// golden file is written.

const goldenDir = "testdata/cli"

// cliCase is one command line and the exit code it must end with.
type cliCase struct {
	args []string
	code int
}

// parseArgsFile reads a .args file: one argument a line, # comments, and
// "# exit: N" for the expected exit code.
func parseArgsFile(text string) (cliCase, error) {
	var c cliCase
	if text == "" {
		return c, nil
	}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			if v, ok := strings.CutPrefix(strings.TrimSpace(rest), "exit:"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil || n < 0 || n > 255 {
					return c, fmt.Errorf("%q: give the exit code as # exit: N, N from 0 to 255", line)
				}
				c.code = n
			}
			continue
		}
		c.args = append(c.args, line)
	}
	return c, nil
}

func TestParseArgsFile(t *testing.T) {
	for _, c := range []struct {
		name, text string
		args       []string
		code       int
		err        bool
	}{
		{name: "empty", text: ""},
		{name: "args", text: "report\n--format\ntext\n", args: []string{"report", "--format", "text"}},
		{name: "spaces kept", text: "--expect\nJust another site \n", args: []string{"--expect", "Just another site "}},
		{name: "comments and exit", text: "# a usage error\n# exit: 2\nlab\n", args: []string{"lab"}, code: 2},
		{name: "bad exit", text: "# exit: two\n", err: true},
		{name: "exit out of range", text: "# exit: 300\n", err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseArgsFile(c.text)
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if c.err {
				return
			}
			if strings.Join(got.args, "\x00") != strings.Join(c.args, "\x00") || got.code != c.code {
				t.Errorf("got %q exit %d, want %q exit %d", got.args, got.code, c.args, c.code)
			}
		})
	}
}

func FuzzParseArgsFile(f *testing.F) {
	for _, s := range []string{"", "knobs\n", "# exit: 2\nlab\nup\n", "# exit:\n", "#exit: 99999999999999999999\n", "a\n\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parseArgsFile(text)
		if err != nil {
			return
		}
		if c.code < 0 || c.code > 255 {
			t.Fatalf("exit code %d accepted", c.code)
		}
		for _, a := range c.args {
			if strings.Contains(a, "\n") || strings.HasPrefix(a, "#") {
				t.Fatalf("argument %q: a line break or a comment taken as an argument", a)
			}
		}
	})
}

// goldenRun runs args through Main with a fresh PHPTUNE_HOME seeded with
// the stored runs, and returns its output normalised.
func goldenRun(t *testing.T, args []string) (stdout, stderr string, code int) {
	t.Helper()
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	t.Setenv("PHPTUNE_HOME", home)
	seedResults(t, home)
	testdata, err := filepath.Abs(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var n goldentest.Normalizer
	n.Replace(tmp, "$TMP")
	n.Replace(home, "$PHPTUNE_HOME")
	n.Replace(testdata, "$TESTDATA")
	if h, err := os.Hostname(); err == nil && len(h) > 3 {
		n.Replace(h, "$HOSTNAME")
	}
	expand := strings.NewReplacer("$TMP", tmp, "$PHPTUNE_HOME", home, "$TESTDATA", testdata)
	expanded := make([]string, len(args))
	for i, a := range args {
		expanded[i] = expand.Replace(a)
	}
	var out, errb bytes.Buffer
	code = Main(context.Background(), expanded, &out, &errb)
	return n.Apply(out.String()), n.Apply(errb.String()), code
}

// seedResults stores the runs of testdata/cli/runs in home's results
// database: bench-*.json as bench runs, servers-*.json as servers
// comparisons, as phptune bench and phptune servers store them.
func seedResults(t *testing.T, home string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	paths, _ := filepath.Glob(filepath.Join(goldenDir, "runs", "*.json"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch name := filepath.Base(p); {
		case strings.HasPrefix(name, "bench-"):
			var b results.Bench
			if err := json.Unmarshal(data, &b); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if err := db.SaveBench(ctx, &b, "hello", "front"); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(name, "servers-"):
			var s results.Servers
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if err := db.CreateRun(ctx, store.Run{ID: s.ID, Kind: store.KindServers, CreatedAt: s.StartedAt, Command: s.Command, App: s.App, Workload: s.Workload}); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishServers(ctx, s.ID, store.StatusDone, &s); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: name a stored run bench-*.json or servers-*.json", p)
		}
	}
}

// TestGoldenCLI runs every testdata/cli/*.args case.
func TestGoldenCLI(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.args"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in %s/*.args (%v)", goldenDir, err)
	}
	used := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".args")
		base := filepath.Join(goldenDir, name)
		used[base+".stdout"], used[base+".stderr"] = true, true
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseArgsFile(string(text))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			stdout, stderr, code := goldenRun(t, c.args)
			if code != c.code {
				t.Errorf("phptune %s: exit %d, want %d (if intended, change \"# exit:\" in %s)\nstderr:\n%s", strings.Join(c.args, " "), code, c.code, f, stderr)
			}
			goldentest.CheckString(t, base+".stdout", stdout)
			goldentest.CheckString(t, base+".stderr", stderr)
		})
	}
	goldentest.Stale(t, goldenDir, "*.stdout", used)
	goldentest.Stale(t, goldenDir, "*.stderr", used)
}

// TestGoldenHelp runs COMMAND --help for every command of the tree,
// cobra's help and completion commands included: it must exit 0, print
// nothing on stderr and print testdata/cli/help/COMMAND.stdout.
func TestGoldenHelp(t *testing.T) {
	root := newRoot(&Env{Ctx: context.Background(), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root, nil)
	sort.Slice(paths, func(i, j int) bool { return strings.Join(paths[i], " ") < strings.Join(paths[j], " ") })
	dir := filepath.Join(goldenDir, "help")
	used := map[string]bool{}
	for _, path := range paths {
		name := strings.Join(append([]string{"phptune"}, path...), "-")
		golden := filepath.Join(dir, name+".stdout")
		used[golden] = true
		t.Run(name, func(t *testing.T) {
			args := append(append([]string(nil), path...), "--help")
			stdout, stderr, code := goldenRun(t, args)
			if code != 0 || stderr != "" {
				t.Errorf("phptune %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr)
			}
			goldentest.CheckString(t, golden, stdout)
		})
	}
	goldentest.Stale(t, dir, "*.stdout", used)
}
