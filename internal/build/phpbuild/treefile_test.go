package phpbuild

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// plantTree makes base/src/php with sapi/fpm/php-fpm and modules/opcache.so
// as regular files, and elsewhere/ (outside base) holding files of the same
// names for links to point at.
func plantTree(t *testing.T) (base, elsewhere string) {
	t.Helper()
	root := t.TempDir()
	base = filepath.Join(root, "work")
	elsewhere = filepath.Join(root, "elsewhere")
	for _, f := range []string{"src/php/sapi/fpm/php-fpm", "src/php/modules/opcache.so"} {
		p := filepath.Join(base, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("built"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"fpm/php-fpm", "opcache.so", "secret"} {
		p := filepath.Join(elsewhere, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not the build's"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return base, elsewhere
}

// replaceWithLink swaps base/rel for a symbolic link to target.
func replaceWithLink(t *testing.T, base, rel, target string) {
	t.Helper()
	p := filepath.Join(base, rel)
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func TestOpenTreeFile(t *testing.T) {
	tests := []struct {
		name    string
		rel     string
		plant   func(t *testing.T, base, elsewhere string)
		wantErr string // "" when the open succeeds
	}{
		{name: "regular file", rel: "src/php/modules/opcache.so"},
		{name: "binary in sapi", rel: "src/php/sapi/fpm/php-fpm"},
		{
			name: "modules is a link", rel: "src/php/modules/opcache.so",
			plant:   func(t *testing.T, base, e string) { replaceWithLink(t, base, "src/php/modules", e) },
			wantErr: "src/php/modules is a symbolic link: refused",
		},
		{
			name: "sapi is a link", rel: "src/php/sapi/fpm/php-fpm",
			plant:   func(t *testing.T, base, e string) { replaceWithLink(t, base, "src/php/sapi", e) },
			wantErr: "src/php/sapi is a symbolic link: refused",
		},
		{
			name: "the tree itself is a link", rel: "src/php/modules/opcache.so",
			plant: func(t *testing.T, base, e string) {
				if err := os.MkdirAll(filepath.Join(e, "tree", "modules"), 0o755); err != nil {
					t.Fatal(err)
				}
				replaceWithLink(t, base, "src/php", filepath.Join(e, "tree"))
			},
			wantErr: "src/php is a symbolic link: refused",
		},
		{
			name: "the file is a link", rel: "src/php/modules/opcache.so",
			plant: func(t *testing.T, base, e string) {
				replaceWithLink(t, base, "src/php/modules/opcache.so", filepath.Join(e, "secret"))
			},
			wantErr: "opcache.so is a symbolic link: refused",
		},
		{
			name: "a relative link", rel: "src/php/modules/opcache.so",
			plant:   func(t *testing.T, base, e string) { replaceWithLink(t, base, "src/php/modules", "../../../elsewhere") },
			wantErr: "src/php/modules is a symbolic link: refused",
		},
		{
			name: "the file is a FIFO", rel: "src/php/modules/opcache.so",
			plant: func(t *testing.T, base, _ string) {
				p := filepath.Join(base, "src/php/modules/opcache.so")
				os.Remove(p)
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "is a named pipe, not a regular file: refused",
		},
		{
			name: "the file is a directory", rel: "src/php/modules",
			wantErr: "is a directory, not a regular file: refused",
		},
		{name: "missing", rel: "src/php/modules/gone.so", wantErr: "the build made no gone.so"},
		{name: "dot-dot", rel: "src/../../elsewhere/secret", wantErr: "without . or .."},
		{name: "absolute", rel: "/etc/passwd", wantErr: "want a path inside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, elsewhere := plantTree(t)
			if tt.plant != nil {
				tt.plant(t, base, elsewhere)
			}
			f, err := openTreeFile(base, tt.rel)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("openTreeFile(%q): %v", tt.rel, err)
				}
				b := make([]byte, 16)
				n, _ := f.Read(b)
				f.Close()
				if string(b[:n]) != "built" {
					t.Fatalf("read %q, want the build's file", b[:n])
				}
				return
			}
			if err == nil {
				f.Close()
				t.Fatalf("openTreeFile(%q) opened the file; want an error with %q", tt.rel, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("openTreeFile(%q): %v; want %q in it", tt.rel, err, tt.wantErr)
			}
		})
	}
}

// TestCompleteRefusesLinkedDirectory plants a build tree whose modules/
// (or sapi/) is a link to a directory holding a file of the expected name:
// the copy into the cache is refused and no file from the link's target,
// nor the build, lands in the cache.
func TestCompleteRefusesLinkedDirectory(t *testing.T) {
	for _, linked := range []string{"modules", "sapi"} {
		t.Run(linked, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("PHPTUNE_HOME", home)
			if err := os.MkdirAll(filepath.Join(Dir(), ".work"), 0o755); err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(Dir(), ".work", "tmp-test")
			elsewhere := t.TempDir()
			for _, f := range []string{"sapi/fpm/php-fpm", "sapi/cli/php", "sapi/cgi/php-cgi", "modules/opcache.so"} {
				for _, root := range []string{filepath.Join(work, "src", "php-8.2.0"), elsewhere} {
					p := filepath.Join(root, f)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte("from "+root), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.Mkdir(filepath.Join(work, "logs"), 0o755); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(work, "src", "php-8.2.0")
			if err := os.RemoveAll(filepath.Join(src, linked)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(elsewhere, linked), filepath.Join(src, linked)); err != nil {
				t.Fatal(err)
			}
			b := &builder{work: work, src: src, logs: filepath.Join(work, "logs"), rec: Record{ID: "0123456789ab"}}
			_, err := b.complete()
			if err == nil || !strings.Contains(err.Error(), linked+" is a symbolic link: refused") {
				t.Fatalf("complete() = %v; want the link %s refused", err, linked)
			}
			if _, err := os.Lstat(filepath.Join(Dir(), "0123456789ab")); err == nil {
				t.Fatal("the build landed in the cache")
			}
			_ = filepath.WalkDir(Dir(), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || strings.HasPrefix(p, work) {
					return nil
				}
				if data, _ := os.ReadFile(p); strings.Contains(string(data), elsewhere) {
					t.Errorf("%s in the cache holds the link target's content", p)
				}
				return nil
			})
		})
	}
}
