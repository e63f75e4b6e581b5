package phproot

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"debian-8.4", "8.4", true}, {"8.4", "8.4", true}, {" Debian-8.4 ", "8.4", true},
		{"debian-8.3", "", false}, {"distro", "", false}, {"0123456789ab", "", false}, {"debian-", "", false},
	} {
		got, ok := BuildVersion(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("BuildVersion(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestExtensionLines(t *testing.T) {
	text := "; priority=10\nextension=mysqli.so\nzend_extension = opcache.so\nopcache.jit=off\nextension=\"../../evil.so\"\nextension=/abs/x.so\nextension=gd\n"
	want := []string{"extension=mysqli.so", "zend_extension=opcache.so", "extension=gd"}
	if got := extensionLines([]byte(text)); !reflect.DeepEqual(got, want) {
		t.Errorf("extensionLines = %q, want %q", got, want)
	}
}

// TestRootExtensions: a root's conf.d (links into its own /etc/php,
// dangling on this host) is read by name from mods-available, each
// extension loaded by absolute path in the root's extension directory; a
// module whose .so is missing is named in the notes, not loaded.
func TestRootExtensions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a PHP root's files are root's")
	}
	dir := t.TempDir()
	r := newRoot(dir, Manifest{Version: "8.4"})
	mk := func(p, text string) {
		t.Helper()
		full := r.Host(p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("/etc/php/8.4/mods-available/opcache.ini", "zend_extension=opcache.so\n")
	mk("/etc/php/8.4/mods-available/mysqli.ini", "extension=mysqli.so\n")
	mk("/etc/php/8.4/mods-available/gd.ini", "extension=gd.so\n")
	mk(r.ExtDir+"/opcache.so", "")
	mk(r.ExtDir+"/mysqli.so", "")
	confd := r.Host(r.FPMConfD)
	if err := os.MkdirAll(confd, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"10-opcache", "20-mysqli", "20-gd"} {
		if err := os.Symlink("/etc/php/8.4/mods-available/"+n[3:]+".ini", filepath.Join(confd, n+".ini")); err != nil {
			t.Fatal(err)
		}
	}
	lines, notes, err := rootExtensions(r)
	if err != nil {
		t.Fatal(err)
	}
	ext := r.Host(r.ExtDir)
	want := []string{"extension_dir=" + ext, "zend_extension=" + ext + "/opcache.so", "extension=" + ext + "/mysqli.so"}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %q\nwant  %q", lines, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "gd.so") {
		t.Errorf("notes %q, want one naming gd.so", notes)
	}
}
