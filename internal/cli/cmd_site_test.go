package cli

import (
	"strings"
	"testing"
)

// TestSiteCommandRefusals: phptune site refuses a bad command line with
// exit 2 and a host without the nginx it reads with exit 1, each naming
// the fix.
func TestSiteCommandRefusals(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"a NAME or DIR is needed", []string{"site"}, 2, "takes one NAME (a server name) or DIR (a document root), not 0 arguments"},
		{"a relative root", []string{"site", "site.test", "--root", "copy"}, 2, "--root \"copy\": give an absolute directory"},
		{"no nginx of that root", []string{"site", "site.test", "--root", root}, 1, "no nginx master (owned by root) runs with " + root + "/etc/nginx/nginx.conf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, c.code, c.stderr)
			}
			if out != "" {
				t.Errorf("printed %q on a refusal", out)
			}
		})
	}
	if out, _, code := runCLI(t, "site", "--help"); code != 0 || !strings.Contains(out, "never printed") || !strings.Contains(out, "starts no server") {
		t.Errorf("--help (exit %d) does not say what site reads and never prints:\n%s", code, out)
	}
}
