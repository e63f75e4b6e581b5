package dbcopy

import (
	"path/filepath"
	"testing"
)

func TestExistingParent(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ in, want string }{
		{dir, dir},
		{filepath.Join(dir, "a", "b"), dir},
		{"/nonexistent-phptune-dir/x", "/"},
	} {
		if got := existingParent(c.in); got != c.want {
			t.Errorf("existingParent(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
