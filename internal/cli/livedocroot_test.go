package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// TestLiveDocrootPoolRefused runs a copy of Debian's php-fpm whose pool
// has a chdir and a doc_root, as a hosting panel's pool does (no vhost
// names them): a --docroot that is, holds or lies inside either is
// refused, naming the pool, its file and the fix; a sibling is not;
// --unsealed-production lets it through.
func TestLiveDocrootPoolRefused(t *testing.T) {
	base := t.TempDir()
	panel := filepath.Join(base, "php-panel", "www")
	shop := filepath.Join(base, "shop", "public")
	other := filepath.Join(base, "staging", "public")
	for _, d := range []string{panel, filepath.Join(panel, "sub"), shop, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := hosttest.Debian(t, func(www string) string {
		return www + "\nchdir = " + panel + "\nphp_admin_value[doc_root] = " + shop + "\n"
	})
	file := filepath.Join(h.PoolDir, "www.conf")
	for _, c := range []struct {
		dir, relation, root, key string
	}{
		{panel, "is", panel, "chdir"},
		{filepath.Join(panel, "sub"), "lies inside", panel, "chdir"},
		{filepath.Join(base, "php-panel"), "holds", panel, "chdir"},
		{shop, "is", shop, "php_admin_value[doc_root]"},
	} {
		err := checkLiveDocroot(c.dir, "lab up", false)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("--docroot %s: %v, want a usage error", c.dir, err)
			continue
		}
		msg := ue.Msg + "\n" + ue.Hint
		said := c.relation + " " + c.root + ", the directory"
		if c.relation == "is" {
			said = "is the directory"
		}
		for _, want := range []string{
			said + " the live php-fpm pool www serves code from",
			"php-fpm pool www in " + file + " (" + c.key + ")",
			"phptune lab up --site " + c.root, "--unsealed-production",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("--docroot %s: %q does not say %q", c.dir, msg, want)
			}
		}
		if err := checkLiveDocroot(c.dir, "lab up", true); err != nil {
			t.Errorf("--docroot %s --unsealed-production: %v", c.dir, err)
		}
	}
	if err := checkLiveDocroot(other, "lab up", false); err != nil {
		t.Errorf("--docroot %s (no live site's): %v", other, err)
	}
}
