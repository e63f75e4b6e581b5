package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestCLIBasics(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	cases := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderr   string
		noStdout bool
	}{
		{name: "knobs lists defaults and ranges", args: []string{"knobs"}, stdout: "pm.max_children"},
		{name: "knobs json", args: []string{"knobs", "--json"}, stdout: `"Name": "opcache.jit"`},
		{name: "unknown command is a usage error", args: []string{"tunez"}, code: 2, stderr: "unknown command"},
		{name: "bad flag is a usage error", args: []string{"lab", "up", "--bogus"}, code: 2, stderr: "Try: phptune lab up --help"},
		{name: "invalid knob refused", args: []string{"lab", "up", "--set", "pm=fast"}, code: 2, stderr: `knob pm: value "fast" is not one of the choices; valid: static|dynamic|ondemand`},
		{name: "php-fpm spare rule", args: []string{"lab", "up", "--set", "pm.max_children=2"}, code: 2, stderr: "php-fpm requires max_spare_servers <= max_children"},
		{name: "missing knob file", args: []string{"lab", "up", "--knobs", "/nonexistent.knobs"}, code: 2, stderr: "--knobs /nonexistent.knobs"},
		{name: "status with no labs", args: []string{"lab", "status"}, stdout: "no labs"},
		{name: "down unknown lab", args: []string{"lab", "down", "nope"}, code: 1, stderr: `no such lab "nope"`},
		{name: "logs unknown lab", args: []string{"lab", "logs", "nope"}, code: 1, stderr: "no such lab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errs)
			}
			if !strings.Contains(out, c.stdout) {
				t.Errorf("stdout lacks %q:\n%s", c.stdout, out)
			}
			if !strings.Contains(errs, c.stderr) {
				t.Errorf("stderr lacks %q:\n%s", c.stderr, errs)
			}
		})
	}
	// Nothing was created for the refused labs.
	if entries, _ := os.ReadDir(os.Getenv("PHPTUNE_HOME") + "/labs"); len(entries) != 0 {
		t.Errorf("refused commands left labs behind: %v", entries)
	}
}
