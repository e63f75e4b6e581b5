package unidiff

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		ctx  int
		want string
	}{
		{"equal", "a\nb", "a\nb", 3, ""},
		{"one change in the middle", "1\n2\n3\n4\n5", "1\n2\nX\n4\n5", 1,
			"--- a\n+++ b\n@@ -2,3 +2,3 @@\n 2\n-3\n+X\n 4\n"},
		{"append to empty", "", "x\ny", 3, "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"delete all", "x", "", 3, "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n"},
		{"two hunks far apart", "1\n2\n3\n4\n5\n6\n7\n8\n9", "A\n2\n3\n4\n5\n6\n7\n8\nB", 1,
			"--- a\n+++ b\n@@ -1,2 +1,2 @@\n-1\n+A\n 2\n@@ -8,2 +8,2 @@\n 8\n-9\n+B\n"},
		{"close changes merge", "1\n2\n3\n4\n5", "A\n2\n3\nB\n5", 1,
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n-1\n+A\n 2\n 3\n-4\n+B\n 5\n"},
		{"insertion", "1\n2\n3", "1\n2\nnew\n3", 0, "--- a\n+++ b\n@@ -2,0 +3 @@\n+new\n"},
	}
	for _, tt := range tests {
		if got := Diff("a", "b", lines(tt.a), lines(tt.b), tt.ctx); got != tt.want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

// TestDiffApplies checks the output with patch(1) when it is
// installed: the diff of two knob-like listings must turn one into the other.
func TestDiffApplies(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch not installed")
	}
	var la, lb []string
	for i := range 40 {
		la = append(la, fmt.Sprintf("knob%d = %d", i, i))
		lb = append(lb, la[i])
		if i%7 == 3 {
			lb[i] = fmt.Sprintf("knob%d = changed", i)
		}
	}
	lb = append(lb[:10], lb[12:]...)
	lb = append(lb, "added = 1")
	d := Diff("start.knobs", "recommended.knobs", la, lb, 3)
	dir := t.TempDir()
	f := filepath.Join(dir, "start.knobs")
	os.WriteFile(f, []byte(strings.Join(la, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "d.patch"), []byte(d), 0o644)
	cmd := exec.Command(patch, f, filepath.Join(dir, "d.patch"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s\n%s", err, out, d)
	}
	got, _ := os.ReadFile(f)
	if string(got) != strings.Join(lb, "\n")+"\n" {
		t.Errorf("patched file differs:\n%s", got)
	}
}

func TestLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\nb\n", []string{"a", "", "b"}},
	} {
		if got := Lines([]byte(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
