package outdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParentIsDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(dir, "new.html"), true},
		{filepath.Join(dir, "missing", "new.html"), false},
		{filepath.Join(file, "new.html"), false},
	} {
		if got := ParentIsDir(c.path); got != c.want {
			t.Errorf("ParentIsDir(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestReopenOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	d, err := ReopenOrCreate(path) // gone: created
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("a.txt", []byte("a")); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, err = ReopenOrCreate(path) // there, not empty: reopened
	if err != nil {
		t.Fatalf("reopening a directory with a file: %v", err)
	}
	d.Close()
}

func TestCheckWorkingDir(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := CheckWorkingDir(); err != nil {
		t.Fatalf("a new temporary directory: %v", err)
	}
}
