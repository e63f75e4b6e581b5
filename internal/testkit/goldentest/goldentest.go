// Package goldentest compares what a test produced with a golden file kept
// under the test's testdata directory, and rewrites the golden files when
// the tests run with -update (go test ./internal/PKG -update; make golden
// rewrites every package's). It is used only by tests: it registers the
// -update flag, so a test file that imports it must not define its own.
//
// A difference is reported with the first line that differs and the
// command that accepts the new output, for review with git diff.
package goldentest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files with what the tests produce")

// Updating reports whether the tests run with -update: golden files are
// then written, not compared.
func Updating() bool { return *update }

// Check compares got with the golden file at path (relative to the
// package's directory, e.g. testdata/x.golden). With -update it writes got
// to path instead, creating its directory.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		write(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v\n(create it with: %s)", path, err, UpdateCommand(t))
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s: %s\n(if the change is intended: %s, then review git diff)\n--- got (first 4000 bytes)\n%.4000s",
			path, FirstDifference(want, got), UpdateCommand(t), got)
	}
}

// CheckString is Check for text.
func CheckString(t testing.TB, path, got string) {
	t.Helper()
	Check(t, path, []byte(got))
}

// CheckDir compares files (name → content) with the directory dir, which
// must hold exactly those files. With -update dir is replaced by files.
func CheckDir(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			write(t, filepath.Join(dir, name), []byte(text))
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("golden directory %s: %v\n(create it with: %s)", dir, err, UpdateCommand(t))
		return
	}
	var golden []string
	for _, e := range entries {
		golden = append(golden, e.Name())
	}
	var produced []string
	for name := range files {
		produced = append(produced, name)
	}
	sort.Strings(produced)
	if strings.Join(golden, " ") != strings.Join(produced, " ") {
		t.Errorf("%s holds %v, the test produced %v\n(if the change is intended: %s)", dir, golden, produced, UpdateCommand(t))
	}
	for _, name := range golden {
		if got, ok := files[name]; ok {
			Check(t, filepath.Join(dir, name), []byte(got))
		}
	}
}

// Stale fails the test for every file in dir whose name matches pattern
// (filepath.Match) and is not in used: a golden file no case produces any
// more. With -update it removes them instead.
func Stale(t testing.TB, dir, pattern string, used map[string]bool) {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		if used[m] {
			continue
		}
		if *update {
			if err := os.Remove(m); err != nil {
				t.Error(err)
			}
			continue
		}
		t.Errorf("golden file %s belongs to no test case: remove it (%s does)", m, UpdateCommand(t))
	}
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// UpdateCommand is the command that rewrites the golden files of t's
// top-level test: go test ./PKG -run '^TestX$' -update, PKG the package's
// directory relative to the module root.
func UpdateCommand(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("go test ./%s -run '^%s$' -update", packageDir(), name)
}

// packageDir is the working directory (the package under test) relative
// to the directory holding go.mod; "." when it cannot be found.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return "."
			}
			return filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}

// FirstDifference describes the first line where got differs from want:
// its number and both versions of it, or which one ends early.
func FirstDifference(want, got []byte) string {
	w, g := lines(want), lines(got)
	for i := 0; i < len(w) || i < len(g); i++ {
		switch {
		case i >= len(w):
			return fmt.Sprintf("line %d: the golden file ends; got %q", i+1, g[i])
		case i >= len(g):
			return fmt.Sprintf("line %d: the output ends; golden has %q", i+1, w[i])
		case w[i] != g[i]:
			return fmt.Sprintf("line %d: golden %q, got %q", i+1, w[i], g[i])
		}
	}
	return "no line differs"
}

// lines splits b after each newline; a final newline starts no line.
func lines(b []byte) []string {
	l := strings.SplitAfter(string(b), "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}
