package goldentest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	for _, c := range []struct {
		name, want, got, says string
	}{
		{"same", "a\nb\n", "a\nb\n", "no line differs"},
		{"changed line", "a\nb\n", "a\nc\n", `line 2: golden "b\n", got "c\n"`},
		{"output longer", "a\n", "a\nb\n", `line 2: the golden file ends; got "b\n"`},
		{"output shorter", "a\nb\n", "a\n", `line 2: the output ends; golden has "b\n"`},
		{"missing final newline", "a\n", "a", `line 1: golden "a\n", got "a"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := FirstDifference([]byte(c.want), []byte(c.got)); got != c.says {
				t.Errorf("FirstDifference = %q, want %q", got, c.says)
			}
		})
	}
}

func TestNormalizer(t *testing.T) {
	var n Normalizer
	n.Replace("/tmp/TestX1", "$TMP")
	n.Replace("/tmp/TestX1/home", "$PHPTUNE_HOME")
	n.Replace("", "$NOTHING")
	n.Replace("host1", "$HOST")
	got := n.Apply("/tmp/TestX1/home/results.db and /tmp/TestX1/a on host1")
	if want := "$PHPTUNE_HOME/results.db and $TMP/a on $HOST"; got != want {
		t.Errorf("Apply = %q, want %q", got, want)
	}
}

func TestUpdateCommand(t *testing.T) {
	t.Run("sub", func(t *testing.T) {
		if got, want := UpdateCommand(t), "go test ./internal/testkit/goldentest -run '^TestUpdateCommand$' -update"; got != want {
			t.Errorf("UpdateCommand = %q, want %q", got, want)
		}
	})
}

func TestCheckMatches(t *testing.T) {
	if Updating() {
		t.Skip("compares only")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	CheckString(t, path, "same\n")
	CheckDir(t, dir, map[string]string{"x.golden": "same\n"})
	Stale(t, dir, "*.golden", map[string]bool{path: true})
}
