package hosttest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Files holds every file of a copy (php-fpm's, nginx's, MariaDB's
// configuration) by path, as it was before the test, to check it is
// byte-identical afterwards.
type Files map[string][]byte

// write writes a file of the copy and keeps what it holds.
func (f Files) write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f[path] = b
}

// unchanged reports the first file of f that is not byte-identical to
// what it was, and the first file in dirs that f does not hold.
func (f Files) unchanged(dirs ...string) error {
	for path, want := range f {
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			return fmt.Errorf("%s changed (%v)", path, err)
		}
	}
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if _, ok := f[filepath.Join(dir, e.Name())]; !ok {
				return fmt.Errorf("%s was added", filepath.Join(dir, e.Name()))
			}
		}
	}
	return nil
}
