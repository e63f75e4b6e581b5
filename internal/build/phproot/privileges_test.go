package phproot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDropPrivileges: setuid and setgid bits go, other modes stay, a link
// is not followed (its target outside the tree keeps its bit).
func TestDropPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("setting a setuid bit on a file needs its owner; the tree is root's")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	su := filepath.Join(root, "usr", "bin", "su")
	plain := filepath.Join(root, "usr", "bin", "php")
	outside := filepath.Join(dir, "outside")
	for _, f := range []string{su, plain, outside} {
		if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(su, os.ModeSetuid|os.ModeSetgid|0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "usr", "bin", "link")); err != nil {
		t.Fatal(err)
	}
	if p, _ := privileged(root); len(p) != 1 {
		t.Fatalf("before: privileged %v, want su", p)
	}
	if err := dropPrivileges(root); err != nil {
		t.Fatal(err)
	}
	if p, _ := privileged(root); len(p) != 0 {
		t.Errorf("after: privileged %v", p)
	}
	for f, want := range map[string]os.FileMode{su: 0o755, plain: 0o755, outside: os.ModeSetuid | 0o755} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid); got != want {
			t.Errorf("%s: mode %v, want %v", f, got, want)
		}
	}
}
