package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLinks(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []Link
	}{
		{"plain", "see [load](docs/load.md).", []Link{{1, "docs/load.md"}}},
		{"fragment and title", "x\n[a](b.md#c \"t\") [d](e.md)", []Link{{2, "b.md#c"}, {2, "e.md"}}},
		{"code span", "`[a](b.md)` and [c](d.md)", []Link{{1, "d.md"}}},
		{"fence", "```\n[a](b.md)\n```\n[c](d.md)", []Link{{4, "d.md"}}},
		{"unclosed", "[a](b.md", nil},
		{"none", "no links here", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Links(tt.doc); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Links = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAnchors(t *testing.T) {
	doc := "# Security model\n## Live hosts: advise, apply and rollback\n```\n# not a heading\n```\n## `--user` rule\n## Notes\n## Notes\n"
	want := map[string]bool{
		"security-model": true, "live-hosts-advise-apply-and-rollback": true,
		"--user-rule": true, "notes": true, "notes-1": true,
	}
	if got := Anchors(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("Anchors = %v, want %v", got, want)
	}
}

func FuzzLinks(f *testing.F) {
	f.Add("see [load](docs/load.md#x \"t\") `[a](b)`\n```\n[c](d)\n```")
	f.Add("](")
	f.Add("[a](")
	f.Fuzz(func(t *testing.T, doc string) {
		lines := strings.Count(doc, "\n") + 1
		for _, l := range Links(doc) {
			if l.Line < 1 || l.Line > lines || strings.ContainsAny(l.Target, ") \n") {
				t.Fatalf("Links(%q) gave %+v", doc, l)
			}
		}
		Anchors(doc)
	})
}

// TestDocsLinksResolve checks every relative link of README.md and docs/*.md:
// the file it names exists inside the repository and, when it names a
// fragment, the file has that heading.
func TestDocsLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	checked := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range Links(string(text)) {
			if strings.Contains(l.Target, "://") || strings.HasPrefix(l.Target, "mailto:") {
				continue
			}
			checked++
			where := filepath.ToSlash(strings.TrimPrefix(file, root+string(filepath.Separator))) + ":" + itoa(l.Line)
			path, fragment, _ := strings.Cut(l.Target, "#")
			target := file
			if path != "" {
				target = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
			}
			rel, err := filepath.Rel(root, target)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %q points outside the repository: link to a page of docs/ instead", where, l.Target)
				continue
			}
			body, err := os.ReadFile(target)
			if err != nil {
				if info, serr := os.Stat(target); serr == nil && info.IsDir() && fragment == "" {
					continue
				}
				t.Errorf("%s: link %q: %s does not exist: fix the link or add the page", where, l.Target, rel)
				continue
			}
			if fragment != "" && !Anchors(string(body))[fragment] {
				t.Errorf("%s: link %q: %s has no heading for #%s: fix the fragment", where, l.Target, rel, fragment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found in README.md and docs/: the reader is broken")
	}
}

// TestReadmeShort keeps README.md a page for users.
func TestReadmeShort(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\n"); n > 300 {
		t.Errorf("README.md has %d lines (at most 300): move the detail to a page of docs/ and link it from the commands table", n)
	}
}
