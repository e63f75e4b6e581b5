package cli

import (
	"strings"
	"testing"
)

// stackCommands are the stack commands, each with what its command line
// needs besides the stack flags (compare: a CONFIG).
var stackCommands = []struct {
	name  string
	after []string
}{
	{"tune", nil}, {"compare", []string{"default"}}, {"capacity", nil},
	{"profile", nil}, {"bench", nil}, {"servers", nil},
}

// TestStackFlagsSameRefusal: every stack command given the same bad
// combination of stack flags refuses it with the same message.
func TestStackFlagsSameRefusal(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	cases := []struct {
		args []string
		want string
		// skip names the commands that refuse the flags for a reason of
		// their own (servers refuses --lab and --docroot outright).
		skip string
	}{
		{[]string{"--app", "hello", "--docroot", "/srv"}, "give exactly one of ", "servers"},
		{[]string{"--lab", "x", "--user", "www-data"}, "--user: only for a lab of its own (--app, --docroot, --site)", "servers"},
		{[]string{"--lab", "x", "--memory-max", "1G"}, "--memory-max: only for a lab of its own (--app, --docroot, --site)", "servers"},
		{[]string{"--app", "nosuchapp"}, `--app "nosuchapp" is not a built-in app`, ""},
		{[]string{"--app", "hello", "--workload", "/", "--workload-from-log", "x.log"}, "give --workload or --workload-from-log, not both", ""},
		{[]string{"--app", "hello", "--allow-post"}, "--allow-post goes with --workload-from-log", ""},
		{[]string{"--app", "hello", "--expect", "("}, "--expect: ", ""},
		{[]string{"--app", "hello", "--host", "a b"}, "--host: ", "servers"},
		{[]string{"--app", "hello", "--workload", "comment"}, "--workload comment needs --app wordpress", ""},
	}
	for _, c := range cases {
		for _, cmd := range stackCommands {
			if strings.Contains(c.skip, cmd.name) {
				continue
			}
			args := append(append([]string{cmd.name}, c.args...), cmd.after...)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				_, errs, code := runCLI(t, args...)
				if code != 2 {
					t.Fatalf("exit %d, want 2 (usage); stderr: %s", code, errs)
				}
				if !strings.Contains(errs, c.want) {
					t.Errorf("stderr lacks %q:\n%s", c.want, errs)
				}
			})
		}
	}
}

// TestStackFlagsOnEveryCommand: a stack flag registered on one stack
// command is registered on all, with the same help; bench's --cpus is
// the generator's (as before the stack flags), documented in its help.
func TestStackFlagsOnEveryCommand(t *testing.T) {
	env := &Env{}
	root := newRoot(env)
	help := map[string]string{}
	for _, cmd := range stackCommands {
		c, _, err := root.Find([]string{cmd.name})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range stackFlagNames {
			f := c.Flags().Lookup(name)
			if f == nil {
				t.Errorf("%s has no --%s", cmd.name, name)
				continue
			}
			if cmd.name == "bench" && name == flagCPUs {
				continue
			}
			if h, ok := help[name]; ok && h != f.Usage {
				t.Errorf("%s --%s: help %q, want %q as the others", cmd.name, name, f.Usage, h)
			}
			help[name] = f.Usage
		}
	}
}

// TestServersRefusesWhatItCannotHonour: servers names why it refuses a
// stack flag instead of ignoring it.
func TestServersRefusesWhatItCannotHonour(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	checkUsageErrors(t, []usageCase{
		{[]string{"servers", "--lab", "x"}, "--lab does not go with phptune servers: every server is tuned on a lab of its own of a built-in app", "phptune tune --server SERVER"},
		{[]string{"servers", "--set", "pm=static"}, "--set does not go with phptune servers: every server is tuned from its own default", "--add LABEL=FILE"},
		{[]string{"servers", "--cpus", "0"}, "--cpus does not go with phptune servers", "Leave it out"},
		{[]string{"compare", "--knobs", "x.knobs", "default"}, "--knobs does not go with phptune compare", "mine=FILE"},
	})
}
