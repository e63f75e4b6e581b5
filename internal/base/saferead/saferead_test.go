package saferead

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o666)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("x"), 0o644)
	if os.Geteuid() == 0 {
		os.Chown(other, 65534, 65534)
	}
	for _, tc := range []struct {
		name, path string
		limit      int64
		rule       Rule
		whole      bool
		want, err  string
	}{
		{"cut at the bound", file, 4, AnyOwner, false, "0123", ""},
		{"whole within", file, 10, MineAlone, true, "0123456789", ""},
		{"whole over", file, 9, AnyOwner, true, "", "larger than the bound"},
		{"a link", link, 10, AnyOwner, false, "", "symbolic link"},
		{"a fifo", fifo, 10, AnyOwner, false, "", "not a regular file"},
		{"a directory", dir, 10, AnyOwner, false, "", "not a regular file"},
		{"missing", filepath.Join(dir, "none"), 10, AnyOwner, false, "", "no such file"},
		{"writable by others, Mine", open, 10, Mine, false, "x", ""},
		{"writable by others, MineAlone", open, 10, MineAlone, false, "", "writable by group or others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b []byte
			var err error
			if tc.whole {
				b, err = Whole(tc.path, tc.limit, tc.rule)
			} else {
				b, err = Read(tc.path, tc.limit, tc.rule)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", b, err, tc.err)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Fatalf("got %q, %v; want %q", b, err, tc.want)
			}
		})
	}
	if os.Geteuid() == 0 {
		if _, err := Read(other, 10, Mine); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Errorf("another account's file read as Mine: %v", err)
		}
		if b, err := Read(other, 10, AnyOwner); err != nil || string(b) != "x" {
			t.Errorf("AnyOwner: %q %v", b, err)
		}
	}
	if _, err := Whole(file, 3, AnyOwner); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Whole over the bound: %v, want ErrTooLarge", err)
	}
}
