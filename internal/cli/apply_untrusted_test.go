package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// TestApplyRefusesAccountWritableHostDirs: on a host copy whose php-fpm
// directories another account owns or can write, apply changes nothing
// and names the directory and the fix; after an apply, rollback refuses
// in the same way to put files back through a directory opened since,
// and goes through once it is fixed.
func TestApplyRefusesAccountWritableHostDirs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	h := hosttest.Debian(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "recommended.knobs"), []byte("pm=static\npm.max_children=7\nopcache.validate_timestamps=off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host := []string{"--root", h.Root}
	apply := append([]string{"apply", dir, "--yes", "--settle", "100ms"}, host...)
	fpm := filepath.Dir(h.PoolDir)

	for _, tt := range []struct {
		name          string
		spoil, repair func() error
		want          []string
	}{
		{"fpm dir of another account", func() error { return os.Chown(fpm, 65534, 0) }, func() error { return os.Chown(fpm, 0, 0) },
			[]string{fpm + " (on the path to " + h.PoolDir, "belongs to uid 65534", "chown root: " + fpm}},
		{"conf.d writable by others", func() error { return os.Chmod(h.IniDir, 0o777) }, func() error { return os.Chmod(h.IniDir, 0o755) },
			[]string{h.IniDir, "chmod go-w " + h.IniDir}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spoil(); err != nil {
				t.Fatal(err)
			}
			defer tt.repair()
			out, errs, code := runCLI(t, apply...)
			if code == 0 {
				t.Fatalf("apply through an account-writable directory succeeded:\n%s%s", out, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("apply's error lacks %q:\n%s", w, errs)
				}
			}
			for _, f := range []string{filepath.Join(h.PoolDir, "zz-phptune.conf"), filepath.Join(h.IniDir, "99-phptune.ini")} {
				if _, err := os.Lstat(f); err == nil {
					t.Errorf("a refused apply wrote %s", f)
				}
			}
			for path, want := range h.Files {
				if got, _ := os.ReadFile(path); string(got) != string(want) {
					t.Errorf("a refused apply edited %s", path)
				}
			}
		})
	}

	out, errs, code := runCLI(t, apply...)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	dropIn := filepath.Join(h.PoolDir, "zz-phptune.conf")
	if _, err := os.Stat(dropIn); err != nil {
		t.Fatalf("apply wrote no drop-in: %v", err)
	}
	if err := os.Chmod(h.PoolDir, 0o775); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, append([]string{"rollback", "--yes"}, host...)...)
	if code == 0 || !strings.Contains(errs, "not putting "+dropIn+" back") || !strings.Contains(errs, "chmod go-w "+h.PoolDir) {
		t.Errorf("rollback through a group-writable pool.d: exit %d, want a refusal naming %s and chmod go-w\n%s%s", code, dropIn, out, errs)
	}
	if _, err := os.Stat(dropIn); err != nil {
		t.Errorf("the refused rollback removed %s: %v", dropIn, err)
	}
	if err := os.Chmod(h.PoolDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, append([]string{"rollback", "--yes"}, host...)...)
	if code != 0 {
		t.Fatalf("rollback once pool.d is fixed: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(dropIn); err == nil {
		t.Errorf("rollback once pool.d is fixed left %s", dropIn)
	}
	// What is left is the reload grace's own transaction (a second
	// rollback removes it), made by the refused apply in conf.d's case.
	runCLI(t, append([]string{"rollback", "--yes"}, host...)...)
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
}
