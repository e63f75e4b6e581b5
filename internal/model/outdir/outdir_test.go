package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nobody is the account the tests plant files as.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: plants files of another account")
	}
}

// victim is a file of root's the attacks aim at; its content must survive.
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte("root's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, _ := os.ReadFile(p); string(b) != "root's own" {
			t.Errorf("the victim file was overwritten: %q", b)
		}
	})
	return p
}

func TestCreateNewAndWrite(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "a", "b", "out")
	d, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.WriteFile("x.json", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("roles/r/tasks/main.yml", []byte("2")); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("x.json", []byte("3")); err != nil { // replaced
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"x.json": "3", "roles/r/tasks/main.yml": "2"} {
		if b, err := os.ReadFile(filepath.Join(path, rel)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", rel, b, err)
		}
	}
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	for _, bad := range []string{"", "../x", "a/../../x", "/etc/x", "a//b"} {
		if err := d.WriteFile(bad, []byte("x")); err == nil {
			t.Errorf("WriteFile(%q) accepted", bad)
		}
	}
}

func TestCreateRefuses(t *testing.T) {
	needRoot(t)
	v := victim(t)
	cases := []struct {
		name  string
		plant func(t *testing.T, p string)
		want  string
	}{
		{"another account's directory with a link", func(t *testing.T, p string) {
			mkdir(t, p, 0o777, nobody)
			if err := os.Symlink(v, filepath.Join(p, "profile.json")); err != nil {
				t.Fatal(err)
			}
			os.Lchown(filepath.Join(p, "profile.json"), nobody, nobody)
		}, "owned by uid 65534"},
		{"another account's empty directory", func(t *testing.T, p string) { mkdir(t, p, 0o755, nobody) }, "owned by uid 65534"},
		{"a link to a directory of root's", func(t *testing.T, p string) {
			if err := os.Symlink(filepath.Dir(v), p); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"a file", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o644) }, "not a directory"},
		{"a non-empty directory of root's", func(t *testing.T, p string) {
			mkdir(t, p, 0o755, 0)
			os.WriteFile(filepath.Join(p, "result.json"), []byte("{}"), 0o644)
		}, "not empty"},
		{"a world-writable directory of root's", func(t *testing.T, p string) { mkdir(t, p, 0o777, 0) }, "writable by group or others"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			world := t.TempDir()
			os.Chmod(world, os.ModeSticky|0o777)
			p := filepath.Join(world, "phptune-profile-20260101-000000")
			c.plant(t, p)
			if err := Check(p); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check: %v, want %q", err, c.want)
			}
			d, err := Create(p)
			if err == nil {
				d.WriteFile("profile.json", []byte("overwritten"))
				d.Close()
				t.Fatalf("Create accepted it")
			}
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "-o") {
				t.Errorf("Create: %v, want a refusal naming %q and the fix", err, c.want)
			}
		})
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode, uid int) {
	t.Helper()
	if err := os.Mkdir(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func TestCreateTakesEmptyOwnDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Check(p); err != nil {
		t.Fatal(err)
	}
	d, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	// Reopen takes it with files in it.
	os.WriteFile(filepath.Join(p, "old"), nil, 0o644)
	d, err = Reopen(p)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

func TestCloseRemovingIfEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	d, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	d.CloseRemovingIfEmpty()
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty directory left: %v", err)
	}
	d, _ = Create(p)
	d.WriteFile("f", []byte("x"))
	d.CloseRemovingIfEmpty()
	if _, err := os.Stat(filepath.Join(p, "f")); err != nil {
		t.Errorf("a directory with files was removed: %v", err)
	}
}

func TestWriteFileSingle(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.html")
	if err := WriteFile(p, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("b")); err != nil { // our own file is replaced
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "b" {
		t.Errorf("%q", b)
	}
	needRoot(t)
	v := victim(t)
	os.Chmod(dir, os.ModeSticky|0o777)
	link := filepath.Join(dir, "phptune-report-1.html")
	os.Symlink(v, link)
	os.Lchown(link, nobody, nobody)
	if err := WriteFile(link, []byte("x")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a planted link: %v", err)
	}
	theirs := filepath.Join(dir, "theirs.html")
	os.WriteFile(theirs, []byte("theirs"), 0o666)
	os.Chown(theirs, nobody, nobody)
	if err := WriteFile(theirs, []byte("x")); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("another account's file: %v", err)
	}
}

func TestReadTrusted(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	good := filepath.Join(dir, "recommended.knobs")
	os.WriteFile(good, []byte("pm=static\n"), 0o644)
	if b, err := ReadTrusted(good); err != nil || string(b) != "pm=static\n" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadTrusted(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	needRoot(t)
	cases := []struct {
		name  string
		plant func(t *testing.T, d string)
		want  string
	}{
		{"directory of another account", func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "recommended.knobs"), []byte("pm.max_children=1\n"), 0o644)
			os.Chown(d, nobody, nobody)
		}, "owned by uid 65534"},
		{"group-writable directory", func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "recommended.knobs"), []byte("pm.max_children=1\n"), 0o644)
			os.Chmod(d, 0o775)
		}, "writable by group or others"},
		{"file of another account", func(t *testing.T, d string) {
			p := filepath.Join(d, "recommended.knobs")
			os.WriteFile(p, []byte("pm.max_children=1\n"), 0o644)
			os.Chown(p, nobody, nobody)
		}, "owned by uid 65534"},
		{"world-writable file", func(t *testing.T, d string) {
			p := filepath.Join(d, "recommended.knobs")
			os.WriteFile(p, []byte("pm.max_children=1\n"), 0o666)
			os.Chmod(p, 0o666)
		}, "writable by group or others"},
		{"link", func(t *testing.T, d string) {
			os.Symlink(good, filepath.Join(d, "recommended.knobs"))
		}, "symbolic link"},
		{"fifo", func(t *testing.T, d string) {
			if err := mkfifo(filepath.Join(d, "recommended.knobs")); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			os.Chmod(d, 0o755)
			c.plant(t, d)
			_, err := ReadTrusted(filepath.Join(d, "recommended.knobs"))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "chown root") {
				t.Errorf("%v, want a refusal naming %q and the fix", err, c.want)
			}
		})
	}
	// A file of root's in a sticky directory of root's (as /tmp) is read.
	sticky := t.TempDir()
	os.Chmod(sticky, os.ModeSticky|0o777)
	p := filepath.Join(sticky, "k")
	os.WriteFile(p, []byte("x"), 0o644)
	if _, err := ReadTrusted(p); err != nil {
		t.Errorf("root's file in a sticky directory: %v", err)
	}
	// A directory above, of another account's: it swapped its "backups"
	// for a link to a directory of root's holding a file of that name.
	site := t.TempDir()
	os.Chmod(site, 0o755)
	private := filepath.Join(site, "private")
	os.Mkdir(private, 0o700)
	os.WriteFile(filepath.Join(private, "site.sql"), []byte("root's secret"), 0o600)
	deploy := filepath.Join(site, "deploy")
	os.Mkdir(deploy, 0o755)
	os.Symlink(private, filepath.Join(deploy, "backups"))
	os.Lchown(filepath.Join(deploy, "backups"), nobody, nobody)
	os.Chown(deploy, nobody, nobody)
	if b, err := ReadTrusted(filepath.Join(deploy, "backups", "site.sql")); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("a file reached through another account's directory: %q %v", b, err)
	}
	// A directory above that others can write, though root's own is below.
	open := filepath.Join(site, "open")
	os.MkdirAll(filepath.Join(open, "mine"), 0o755)
	os.Chmod(open, 0o777)
	os.WriteFile(filepath.Join(open, "mine", "k"), []byte("x"), 0o644)
	if _, err := ReadTrusted(filepath.Join(open, "mine", "k")); err == nil || !strings.Contains(err.Error(), "is in "+open+", which is writable by group or others") {
		t.Errorf("a file below a world-writable directory: %v", err)
	}
	// Root's link to root's directory is followed.
	os.Symlink(filepath.Join(sticky), filepath.Join(site, "tmp-link"))
	if _, err := ReadTrusted(filepath.Join(site, "tmp-link", "k")); err != nil {
		t.Errorf("root's link: %v", err)
	}
}
