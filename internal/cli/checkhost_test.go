package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckHostRefusals(t *testing.T) {
	knobs := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(knobs, []byte("pm.max_children=7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "--knobs", knobs, "--check-host", "site.test"}, "--check-host names the Host of --check-url's request"},
		{[]string{"apply", "--knobs", knobs, "--check-url", "http://127.0.0.1/", "--check-host", "bad host\r\n"}, "--check-host:"},
	} {
		_, errs, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d\n%s", tc.args, code, errs)
		}
	}
}
