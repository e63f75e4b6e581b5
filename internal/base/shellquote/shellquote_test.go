package shellquote

import (
	"os/exec"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"bench":              "bench",
		"--lab=mylab":        "--lab=mylab",
		"http://127.0.0.1/":  "http://127.0.0.1/",
		"0-1,3":              "0-1,3",
		"":                   "''",
		"a b":                "'a b'",
		"it's":               `'it'\''s'`,
		"$(rm -rf /)":        "'$(rm -rf /)'",
		"p99<300ms":          "'p99<300ms'",
		"~/x":                "'~/x'",
		"a\nb":               "'a\nb'",
		`back\slash`:         `'back\slash'`,
		"Welcome|Bienvenue!": "'Welcome|Bienvenue!'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := Join([]string{"phptune", "bench", "--expect", "a b"}); got != "phptune bench --expect 'a b'" {
		t.Errorf("Join: %s", got)
	}
}

// FuzzQuote: sh reads a quoted word back as the word itself.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"plain", "", "a b", "it's", "$(x)", "`x`", "\\", "'\"'", "a\nb"} {
		f.Add(s)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		f.Skip("no sh")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return // no shell word holds a NUL
		}
		out, err := exec.Command(sh, "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Fatalf("sh read %s back as %q (%v)", Quote(s), out, err)
		}
	})
}
