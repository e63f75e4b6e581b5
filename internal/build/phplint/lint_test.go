package phplint

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// fakePHP is a php -l of PHP 8.3 and later in shell: a file holding
// NEW fails (a fatal error), OLD fails on both PHPs, DEP has a
// deprecation, HANG sleeps; old=1 in the environment of the script
// (its first argument) makes it the older PHP, on which NEW compiles.
const fakePHP = `#!/bin/sh
old=$1; shift
[ "$1" = -l ] && shift
for f in "$@"; do
  if [ ! -r "$f" ]; then echo "Could not open input file: $f" >&2; continue; fi
  if grep -q HANG "$f"; then sleep 30; fi
  if grep -q OLD "$f"; then printf '\nParse error: syntax error, unexpected end of file in %s on line 4\nErrors parsing %s\n' "$f" "$f"; continue; fi
  if [ "$old" = 0 ] && grep -q NEW "$f"; then printf '\nFatal error: Cannot redeclare function array_find() in %s on line 2\nErrors parsing %s\n' "$f" "$f"; continue; fi
  if [ "$old" = 0 ] && grep -q DEP "$f"; then printf '\nDeprecated: f(): Implicitly marking parameter $x as nullable is deprecated in %s on line 3\n' "$f"; fi
  echo "No syntax errors detected in $f"
  [ "$old" = 1 ] && exit 0
done
exit 0
`

func lintTree(t *testing.T) (dir, php string) {
	t.Helper()
	base := t.TempDir()
	php = filepath.Join(base, "php")
	if err := os.WriteFile(php, []byte(fakePHP), 0o755); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(base, "site")
	files := map[string]string{
		"index.php":              "<?php echo 1;",
		"wp-includes/poly.php":   "<?php NEW",
		"wp-includes/broken.php": "<?php OLD",
		"lib/dep.php":            "<?php DEP",
		"lib/dep2.PHP":           "<?php DEP",
		"readme.txt":             "NEW",
		"vendor/a/b.php":         "<?php",
	}
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "wp-includes"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	return dir, php
}

func TestRun(t *testing.T) {
	dir, php := lintTree(t)
	cases := []struct {
		name                            string
		max, batch                      int
		failNew, failBoth, dep, checked int
		truncated                       bool
	}{
		{"all, one batch", 0, 0, 1, 1, 2, 6, false},
		{"batches of one", 0, 1, 1, 1, 2, 6, false},
		{"bounded", 3, 2, 0, 0, 2, 3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Run(context.Background(), Options{Dir: dir, New: []string{php, "0"}, Old: []string{php, "1"}, MaxFiles: c.max, Batch: c.batch})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.FailNew) != c.failNew || len(r.FailBoth) != c.failBoth || len(r.Deprecated) != c.dep || r.Checked != c.checked || r.Truncated != c.truncated || r.Links != 1 {
				t.Errorf("report %+v", r)
			}
			if len(r.Problems) != 0 {
				t.Errorf("problems: %+v", r.Problems)
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	dir, php := lintTree(t)
	if err := os.WriteFile(filepath.Join(dir, "lib", "a-hang.php"), []byte("<?php HANG"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := Run(context.Background(), Options{Dir: dir, New: []string{php, "0"}, Old: []string{php, "1"}, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || r.Problems[0].Path != "lib/a-hang.php" || !strings.Contains(r.Problems[0].Problem, "timed out") {
		t.Errorf("problems %+v", r.Problems)
	}
	// The files after the one that hung were run again.
	if len(r.FailNew) != 1 || len(r.Deprecated) != 2 {
		t.Errorf("report %+v", r)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestWriteTextGolden(t *testing.T) {
	r := &Report{Dir: "/srv/site", Found: 1834, Checked: 1834, Seconds: 12.44, Links: 2,
		FailNew: []File{{Path: "wp-content/plugins/p/polyfill.php", Messages: []Message{
			{Level: "Deprecated", Text: "f(): Implicitly marking parameter $x as nullable is deprecated", Line: 1},
			{Level: "Fatal error", Text: "Cannot redeclare function array_find()", Line: 2}}}},
		FailBoth: []File{{Path: "old/broken.php", OldFails: true, Messages: []Message{{Level: "Parse error", Text: "syntax error, unexpected end of file", Line: 4}}}},
		Deprecated: []File{{Path: "wp-includes/x.php", Messages: []Message{
			{Level: "Deprecated", Text: "a(): Implicitly marking parameter $a as nullable is deprecated, the explicit nullable type must be used instead", Line: 3},
			{Level: "Deprecated", Text: "b()", Line: 9}, {Level: "Deprecated", Text: "c()\nsecond line", Line: 12}, {Level: "Warning", Text: "\x1b[31mred"}}}},
		Problems: []File{{Path: "private.php", Problem: "could not be opened by PHP (the account cannot read it, or it went away)"}},
	}
	var b bytes.Buffer
	WriteText(&b, r, "PHP 8.4", "PHP 8.2", 3)
	goldentest.CheckString(t, filepath.Join("testdata", "report.golden"), b.String())
	r.Truncated = true
	if s := Summary(r, "PHP 8.4", "PHP 8.2"); !strings.Contains(s, "only the first 1834") {
		t.Errorf("summary %q", s)
	}
}
