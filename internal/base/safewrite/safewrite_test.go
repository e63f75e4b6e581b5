package safewrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.conf")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o640, -1, -1); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "new" || st.Mode().Perm() != 0o640 {
		t.Errorf("%q %v", b, st.Mode())
	}
	// A link planted where the temporary file goes is never written
	// through: Write removes it (a leftover) and creates the file with
	// O_EXCL|O_NOFOLLOW, which refuses one planted in between.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	if err := os.Symlink(target, path+".phptune-tmp"); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("newer"), 0o640, -1, -1); err != nil && !strings.Contains(err.Error(), "writing") {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("written through a planted link: %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.phptune-tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
