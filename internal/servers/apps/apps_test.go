package apps

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCheckDocRoot(t *testing.T) {
	base := t.TempDir()
	cases := []struct {
		name, want string // want: part of the error, "" when accepted
		php        bool
	}{
		{"plain", "", true},
		{"with space", "", true},
		{"x;add_header X-Injected yes", "", true},
		{"{brace}", "", true},
		{`quote"d`, "", true},
		{"it's#", "", true},
		{`back\slash`, "", true},
		{"a$uri", `--docroot: path "` + base + `/a$uri" has '$' at byte ` + strconv.Itoa(len(base)+2) + `, which nginx.conf cannot carry: nginx reads $ there as the start of a variable and has no escape for a literal $; rename the directory, or point --docroot at a symlink to it whose path has no '$'`, true},
		{"new\nline", `has a newline ('\n')`, true},
		{"no php", "has no .php file", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(base, c.name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.php {
				if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte("<?php echo 1;"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := CheckDocRoot(dir)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("CheckDocRoot(%q) = %v, want %q", dir, err, c.want)
			}
		})
	}
	if err := CheckDocRoot(filepath.Join(base, "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing docroot: %v", err)
	}
}
