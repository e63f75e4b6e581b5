package saferead

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootConfig: root follows a configuration's links one hop at a
// time, each a link of root's in root's directories, and reads only a
// file of root's alone at the end.
func TestRootConfig(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (links and files of another account)")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	write := func(p, text string, mode os.FileMode) string {
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	link := func(target, p string) string {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conf := write(filepath.Join(base, "opcache.ini"), "opcache.enable=1\n", 0o644)
	secret := write(filepath.Join(base, "secret"), "password=hunter2\n", 0o600)
	open := write(filepath.Join(base, "open.ini"), "x=1\n", 0o666)
	site := filepath.Join(base, "site")
	os.Mkdir(site, 0o755)
	siteLink := link(secret, filepath.Join(site, "php.ini"))
	os.Lchown(siteLink, 65534, 65534)
	os.Chown(site, 65534, 65534)
	theirs := link(secret, filepath.Join(base, "theirs.ini"))
	os.Lchown(theirs, 65534, 65534)
	link("loop2", filepath.Join(base, "loop1"))
	link("loop1", filepath.Join(base, "loop2"))
	for _, tt := range []struct {
		name, path, want, err string
	}{
		{"root's file", conf, "opcache.enable=1\n", ""},
		{"root's relative link", link("opcache.ini", filepath.Join(base, "10-opcache.ini")), "opcache.enable=1\n", ""},
		{"a chain of root's links", link(filepath.Join(base, "10-opcache.ini"), filepath.Join(base, "20-opcache.ini")), "opcache.enable=1\n", ""},
		{"root's link into another account's directory, whose link leads to a secret", link(siteLink, filepath.Join(base, "20-site.ini")), "", "the directory " + site + " is not root's"},
		{"a link of another account's", theirs, "", "is a link not of root's"},
		{"a file others can write", open, "", "writable by group or others"},
		{"a loop", filepath.Join(base, "loop1"), "", "more than 8 links"},
		{"a missing file", filepath.Join(base, "none.ini"), "", "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := RootConfig(tt.path, 1<<20)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), tt.path) {
					t.Fatalf("error %v, want one naming %s and %q", err, tt.path, tt.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error holds the secret: %v", err)
				}
				return
			}
			if err != nil || string(b) != tt.want {
				t.Fatalf("got %q, %v; want %q", b, err, tt.want)
			}
		})
	}
}
