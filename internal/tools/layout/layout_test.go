package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite docs/development.md's Layout section")

func TestRender(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tests := []struct {
		name string
		pkgs []Package
		want string
	}{
		{"none", nil, ""},
		{"one", []Package{{Dir: "internal/stack/lab", Synopsis: "Package lab runs labs."}}, "- `internal/stack/lab` — Package lab runs labs.\n"},
		{"no doc comment", []Package{{Dir: "x"}}, "- `x` — (no doc comment)\n"},
		{"wrapped", []Package{{Dir: "p", Synopsis: long}}, "- `p` — " + strings.Repeat("word ", 17) + "word\n  " + strings.TrimSpace(strings.Repeat("word ", 12)) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Render(tt.pkgs)
			if got != tt.want {
				t.Errorf("Render:\n%q\nwant\n%q", got, tt.want)
			}
			for _, line := range strings.Split(got, "\n") {
				if n := utf8.RuneCountInString(line); n > lineWidth {
					t.Errorf("line of %d characters (> %d): %q", n, lineWidth, line)
				}
			}
		})
	}
}

func TestSplice(t *testing.T) {
	tests := []struct {
		name, doc, want, err string
	}{
		{"replaced", "a\n" + Begin + "\nold\n" + End + "\nb\n", "a\n" + Begin + "\nnew\n" + End + "\nb\n", ""},
		{"empty before", "a\n" + Begin + End + "\n", "a\n" + Begin + "\nnew\n" + End + "\n", ""},
		{"no begin", "a\n" + End + "\n", "", "want exactly one"},
		{"no end", Begin + "\n", "", "want exactly one"},
		{"two begins", Begin + Begin + End, "", "holds 2 lines"},
		{"swapped", End + "\n" + Begin + "\n", "", "swap them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Splice(tt.doc, "new\n")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Splice: error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Splice = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func FuzzSplice(f *testing.F) {
	f.Add("a\n"+Begin+"\nold\n"+End+"\nb\n", "new\n")
	f.Add(End+Begin, "")
	f.Add(Begin+Begin+End, "x")
	f.Fuzz(func(t *testing.T, doc, section string) {
		got, err := Splice(doc, section)
		if err != nil {
			return
		}
		before := doc[:strings.Index(doc, Begin)]
		after := doc[strings.Index(doc, End):]
		if !strings.HasPrefix(got, before+Begin+"\n"+section) || !strings.HasSuffix(got, after) {
			t.Fatalf("Splice(%q, %q) = %q: the text around the markers changed", doc, section, got)
		}
	})
}

// TestDevelopmentLayoutCurrent fails when docs/development.md's Layout section
// is not what the generator prints for the packages as they are now.
func TestDevelopmentLayoutCurrent(t *testing.T) {
	root := moduleRoot(t)
	pkgs, err := ReadPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages under %s: the walk is broken", len(pkgs), root)
	}
	path := filepath.Join(root, "docs", "development.md")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Splice(string(old), RenderGroups(pkgs))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if want == string(old) {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/development.md's Layout section is out of date (a package was added, removed or its doc comment changed).\n" +
		"Regenerate it: go run ./internal/tools/layout -w docs/development.md\n" +
		"(or: go test ./internal/tools/layout -run TestDevelopmentLayoutCurrent -update)")
}

// moduleRoot returns the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestGroupOrder fails when a package lies in no group or imports a package
// of a later group: the groups in groups.go are floors, and an import runs
// only down or sideways, so that the tree reads like the pipeline.
func TestGroupOrder(t *testing.T) {
	pkgs, err := ReadPackages(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range CheckGroups(pkgs) {
		t.Error(line)
	}
}

func TestCheckGroups(t *testing.T) {
	tests := []struct {
		name string
		pkgs []Package
		want string
	}{
		{"down", []Package{{Dir: "internal/stack/lab", Imports: []string{"internal/base/termsafe", "internal/stack/seal"}}}, ""},
		{"up", []Package{{Dir: "internal/model/knob", Imports: []string{"internal/stack/lab"}}}, "internal/model/knob (model) imports internal/stack/lab (stack), a later group"},
		{"no group", []Package{{Dir: "internal/misc"}}, "internal/misc is in no group"},
		{"prefix is not a group", []Package{{Dir: "internal/basement"}}, "internal/basement is in no group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(CheckGroups(tt.pkgs), "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("CheckGroups = %q, want %q", got, tt.want)
			}
		})
	}
}
