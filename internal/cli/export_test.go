package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportAnsible writes a role from a knob file, and refuses bad input
// before writing anything.
func TestExportAnsible(t *testing.T) {
	tmp := t.TempDir()
	knobs := filepath.Join(tmp, "recommended.knobs")
	if err := os.WriteFile(knobs, []byte("pm=static\npm.max_children=9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "fleet")
	out, errs, code := runCLI(t, "export", "ansible", dir, "--knobs", knobs, "--php-version", "8.2")
	if code != 0 || !strings.Contains(out, "Wrote the role for pool www on PHP 8.2") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "roles", "phptune_apply", "files", "zz-phptune.conf"))
	if err != nil || !strings.Contains(string(b), "pm.max_children = 9") || !strings.Contains(string(b), "[www]") {
		t.Errorf("drop-in: %v\n%s", err, b)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no recommendation", []string{"export", "ansible", filepath.Join(tmp, "a")}, "needs a recommendation"},
		{"both", []string{"export", "ansible", filepath.Join(tmp, "b"), tmp, "--knobs", knobs}, "not both"},
		{"directory not empty", []string{"export", "ansible", dir, "--knobs", knobs, "--php-version", "8.2"}, "is not empty"},
		{"bad pool", []string{"export", "ansible", filepath.Join(tmp, "c"), "--knobs", knobs, "--pool", "a b", "--php-version", "8.2"}, "pool name"},
		{"bad version", []string{"export", "ansible", filepath.Join(tmp, "d"), "--knobs", knobs, "--php-version", "eight"}, "PHP branch"},
		{"missing knob file", []string{"export", "ansible", filepath.Join(tmp, "e"), "--knobs", filepath.Join(tmp, "none")}, "--knobs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want 2 and %q\n%s%s", code, tt.want, out, errs)
			}
		})
	}
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		if _, err := os.Stat(filepath.Join(tmp, d)); err == nil {
			t.Errorf("a refused export wrote %s", d)
		}
	}
}
