package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// TestGoldenApplyDryRun prints apply --dry-run's diffs and plan for a
// recommendation (php-fpm, PHP and an nginx knob no drop-in carries) on a
// host copy: Debian's php-fpm configuration under a temporary root, its
// master started for real (hosttest; skipped with -short). The root, the
// home and the PHP version's directories are normalised. Rewrite with
// go test ./internal/cli -run '^TestGoldenApplyDryRun$' -update.
func TestGoldenApplyDryRun(t *testing.T) {
	h := hosttest.Debian(t)
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "recommended.knobs"), []byte("pm=static\npm.max_children=7\nopcache.validate_timestamps=off\nnginx.worker_processes=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"apply", dir, "--dry-run", "--settle", "100ms", "--root", h.Root}, &out, &errb)
	if code != 0 {
		t.Fatalf("apply --dry-run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if err := h.Unchanged(); err != nil {
		t.Fatalf("the dry run changed the host: %v", err)
	}
	var n goldentest.Normalizer
	n.Replace(h.Root, "$ROOT")
	n.Replace(home, "$PHPTUNE_HOME")
	n.Replace(dir, "$TUNE_DIR")
	n.Replace("/etc/php/"+h.Version+"/", "/etc/php/$PHP_VERSION/")
	n.Replace("php"+h.Version+"-fpm", "php$PHP_VERSION-fpm")
	n.Replace("php-fpm"+h.Version, "php-fpm$PHP_VERSION")
	n.Replace("php-fpm "+h.Version+",", "php-fpm $PHP_VERSION,")
	stdout, stderr := n.Apply(out.String()), n.Apply(errb.String())
	if strings.Contains(stdout+stderr, os.TempDir()+"/") {
		t.Errorf("a temporary path is left in the output: normalise it\n%s%s", stdout, stderr)
	}
	goldentest.CheckString(t, filepath.Join(goldenDir, "live", "apply-dry-run.stdout"), stdout)
	goldentest.CheckString(t, filepath.Join(goldenDir, "live", "apply-dry-run.stderr"), stderr)
}
