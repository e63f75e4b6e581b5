package cli

import (
	"strings"
	"testing"
)

// TestPHPLintUsage: php lint's command line is refused (exit 2) before
// anything runs, saying why.
func TestPHPLintUsage(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no version", []string{"php", "lint"}, "accepts between 1 and 2 arg(s)"},
		{"unknown version", []string{"php", "lint", "7.1", "/tmp"}, "7.1"},
		{"neither dir nor site", []string{"php", "lint", "8.4"}, "give a DIR or --site NAME"},
		{"both dir and site", []string{"php", "lint", "8.4", "/tmp", "--site", "site.test"}, "give a DIR or --site NAME"},
		{"no root made", []string{"php", "lint", "8.4", "/tmp"}, "php add 8.4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, c.args...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, c.want, errs)
			}
		})
	}
}
