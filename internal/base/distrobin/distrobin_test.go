package distrobin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "phptune-test-server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	onPath := t.TempDir()
	other := filepath.Join(onPath, "phptune-test-other")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", onPath)
	cases := []struct {
		name, path string
		want, err  string
	}{
		{"at the package's path", bin, bin, ""},
		{"on PATH", filepath.Join(dir, "phptune-test-other"), other, ""},
		{"missing", filepath.Join(dir, "phptune-test-none"), "", "phptune-test-none is not installed; run: phptune setup (or apt-get install none)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Find(c.path, "apt-get install none")
			if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Find(%q) = %q, %v; want %q, %q", c.path, got, err, c.want, c.err)
			}
		})
	}
}
