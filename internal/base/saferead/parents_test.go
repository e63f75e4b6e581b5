package saferead

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRootOnlyParents(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (directories of another account)")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	mk := func(name string, mode os.FileMode, uid int) string {
		d := filepath.Join(base, name)
		os.Mkdir(d, mode)
		os.Chmod(d, mode)
		os.Chown(d, uid, 0)
		return d
	}
	own := mk("own", 0o755, 0)
	other := mk("other", 0o755, 65534)
	open := mk("open", 0o777, 0)
	sticky := mk("sticky", 0o777|os.ModeSticky, 0)
	os.Symlink(own, filepath.Join(base, "link"))
	for _, tt := range []struct {
		p, want string // want: "" for safe, else a piece of the error
	}{
		{filepath.Join(own, "f"), ""},
		{filepath.Join(sticky, "f"), ""},
		{filepath.Join(other, "f"), "is not root's (uid 65534)"},
		{filepath.Join(open, "f"), "can be written by others than root (mode 0777)"},
		{filepath.Join(base, "link", "f"), "is not a directory"},
		{filepath.Join(base, "missing", "f"), "checking"},
	} {
		u := RootOnlyParents(tt.p)
		switch {
		case tt.want == "" && u != nil:
			t.Errorf("RootOnlyParents(%s) = %v, want safe", tt.p, u)
		case tt.want != "" && (u == nil || !strings.Contains(u.Error(), tt.want)):
			t.Errorf("RootOnlyParents(%s) = %v, want %q", tt.p, u, tt.want)
		}
	}
}
