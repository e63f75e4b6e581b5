package phproot

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPlanExtensions(t *testing.T) {
	ix, err := ParsePackages(strings.NewReader("Package: php8.4-fpm\n\nPackage: php8.4-cli\n\nPackage: php8.4-opcache\n\nPackage: php8.4-common\nProvides: php8.4-ctype, php8.4-fileinfo, php8.4-pdo\n\nPackage: php8.4-mysql\n\nPackage: php8.4-xml\n\nPackage: php8.4-apcu\n\nPackage: php8.4-redis\n\nPackage: php8.4-sqlite3\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"php8.4-cli", "php8.4-fpm", "php8.4-opcache"}
	cases := []struct {
		name     string
		wanted   []string
		skip     []string
		packages []string // besides base
		missing  []string
		skipped  []string
	}{
		{"built-in modules need no package", []string{"core", "date", "pcre", "json", "spl", "standard"}, nil, nil, nil, nil},
		{"mysqli, pdo_mysql and mysqlnd are php8.4-mysql", []string{"mysqli", "pdo_mysql", "mysqlnd"}, nil, []string{"php8.4-mysql"}, nil, nil},
		{"the XML family is php8.4-xml", []string{"dom", "simplexml", "xml", "xmlreader", "xmlwriter", "xsl"}, nil, []string{"php8.4-xml"}, nil, nil},
		{"Zend OPcache is php8.4-opcache", []string{"Zend OPcache"}, nil, nil, nil, nil},
		{"a provided name is its provider", []string{"ctype", "fileinfo", "pdo"}, nil, []string{"php8.4-common"}, nil, nil},
		{"PECL modules by name", []string{"apcu", "redis"}, nil, []string{"php8.4-apcu", "php8.4-redis"}, nil, nil},
		{"pdo_sqlite is php8.4-sqlite3", []string{"pdo_sqlite"}, nil, []string{"php8.4-sqlite3"}, nil, nil},
		{"no package", []string{"sourceguardian", "gd"}, nil, nil, []string{"gd", "sourceguardian"}, nil},
		{"skipped, even with a package", []string{"apcu", "sourceguardian"}, []string{"sourceguardian", "apcu"}, nil, nil, []string{"apcu", "sourceguardian"}},
		{"each once", []string{"mysqli", "MYSQLI", " mysqli "}, nil, []string{"php8.4-mysql"}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := PlanExtensions("8.4", c.wanted, c.skip, ix)
			want := map[string]bool{}
			for _, b := range append(append([]string(nil), base...), c.packages...) {
				want[b] = true
			}
			got := map[string]bool{}
			for _, pk := range p.Packages {
				got[pk] = true
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("packages %q, want %v", p.Packages, want)
			}
			if strings.Join(p.Missing, ",") != strings.Join(c.missing, ",") || strings.Join(p.Skipped, ",") != strings.Join(c.skipped, ",") {
				t.Errorf("missing %q skipped %q, want %q %q", p.Missing, p.Skipped, c.missing, c.skipped)
			}
			for _, e := range p.Exts {
				if e.Package == "" && !strings.Contains(strings.Join(Builtin, " "), e.Module) {
					t.Errorf("%s has no package and is not built in", e.Module)
				}
			}
		})
	}
}

func TestMissingModules(t *testing.T) {
	exts := []Ext{{Module: "zend opcache", Package: "php8.4-opcache"}, {Module: "mysqli", Package: "php8.4-mysql"}, {Module: "date"}}
	loaded := ParseModules("[PHP Modules]\ndate\nmysqli\n[Zend Modules]\n")
	if got := MissingModules(loaded, exts); !reflect.DeepEqual(got, []string{"zend opcache"}) {
		t.Errorf("got %q", got)
	}
}

func TestMmdebstrapArgs(t *testing.T) {
	p := &Prepared{Version: "8.4", Info: Releases["8.4"], Keyring: DefaultKeyring,
		Mirrors: Mirrors{Archive: "http://mirror/debian", Security: "http://mirror/debian-security"},
		Plan:    Plan{Packages: []string{"php8.4-cli", "php8.4-fpm"}}}
	got := strings.Join(MmdebstrapArgs(p, "/x/root"), "|")
	want := "--mode=root|--variant=apt|--keyring=" + DefaultKeyring + "|--include=php8.4-cli,php8.4-fpm|trixie|/x/root|deb http://mirror/debian trixie main|deb http://mirror/debian-security trixie-security main"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p.Mirrors.Security = ""
	if got := MmdebstrapArgs(p, "/x/root"); strings.Contains(strings.Join(got, " "), "security") {
		t.Errorf("no security mirror, got %q", got)
	}
}

// writeRoot makes a root's directory as Make leaves it (a manifest and an
// empty tree) for m under home.
func writeRoot(t *testing.T, home string, m Manifest) string {
	t.Helper()
	dir := filepath.Join(Dir(home), m.Version)
	if err := os.MkdirAll(filepath.Join(dir, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFind(t *testing.T) {
	m := Manifest{Version: "8.4", PHP: "PHP 8.4.27 (fpm-fcgi)", DiskBytes: 1 << 20, MadeAt: time.Unix(0, 0).UTC(),
		Packages: []PkgVersion{{"php8.4-fpm", "8.4.27-1"}}}
	cases := []struct {
		name  string
		setup func(t *testing.T, home string)
		want  string // in the error, "" for a root
	}{
		{"not made", func(*testing.T, string) {}, "not made yet: run phptune php add 8.4"},
		{"made", func(t *testing.T, home string) { writeRoot(t, home, m) }, ""},
		{"a manifest of another release", func(t *testing.T, home string) {
			dir := writeRoot(t, home, m)
			os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"version":"8.3"}`), 0o644)
		}, `its manifest names PHP "8.3"`},
		{"no manifest", func(t *testing.T, home string) {
			os.Remove(filepath.Join(writeRoot(t, home, m), "manifest.json"))
		}, "phptune php remove 8.4"},
		{"a manifest others can write", func(t *testing.T, home string) {
			os.Chmod(filepath.Join(writeRoot(t, home, m), "manifest.json"), 0o666)
		}, "manifest.json"},
		{"a link in the root's place", func(t *testing.T, home string) {
			other := t.TempDir()
			writeRoot(t, other, m)
			os.MkdirAll(Dir(home), 0o755)
			os.Symlink(filepath.Join(Dir(other), "8.4"), filepath.Join(Dir(home), "8.4"))
		}, "is not a directory: refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			c.setup(t, home)
			r, err := Find(home, "8.4")
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fs := filepath.Join(Dir(home), "8.4", "root")
			if r.FS != fs || r.FPM != "/usr/sbin/php-fpm8.4" || r.Host(r.FPM) != fs+"/usr/sbin/php-fpm8.4" ||
				r.FPMIni != "/etc/php/8.4/fpm/php.ini" || r.FPMConfD != "/etc/php/8.4/fpm/conf.d" || r.ExtDir != "/usr/lib/php/20240924" {
				t.Errorf("root %+v", r)
			}
			if !reflect.DeepEqual(r.Manifest, m) {
				t.Errorf("manifest %+v, want %+v", r.Manifest, m)
			}
		})
	}
	if _, err := Find(t.TempDir(), "7.4"); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("Find of 7.4: %v", err)
	}
	if _, err := Find(t.TempDir(), "8.4"); !errors.Is(err, ErrNotMade) {
		t.Errorf("Find of a root not made: %v", err)
	}
}

func TestListAndRemove(t *testing.T) {
	home := t.TempDir()
	if rs, err := List(home); err != nil || len(rs) != 0 {
		t.Fatalf("empty home: %v %v", rs, err)
	}
	writeRoot(t, home, Manifest{Version: "8.4"})
	// What a killed run leaves is not listed.
	os.MkdirAll(filepath.Join(Dir(home), ".work-8.4-123", "root"), 0o755)
	os.WriteFile(filepath.Join(Dir(home), "8.4.failed.log"), nil, 0o644)
	rs, err := List(home)
	if err != nil || len(rs) != 1 || rs[0].Version != "8.4" {
		t.Fatalf("List: %v %v", rs, err)
	}
	if err := Remove(home, "8.4"); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(home, "8.4"); !errors.Is(err, ErrNotMade) {
		t.Errorf("after Remove: %v", err)
	}
	if err := Remove(home, "8.4"); !errors.Is(err, ErrNotMade) {
		t.Errorf("second Remove: %v", err)
	}
	ents, _ := os.ReadDir(Dir(home))
	for _, e := range ents {
		if e.Name() == "8.4" || strings.HasPrefix(e.Name(), ".work-remove-") {
			t.Errorf("Remove left %s", e.Name())
		}
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(dir); err == nil || !strings.Contains(err.Error(), "another phptune php add or remove is running") {
		t.Errorf("second lock: %v", err)
	}
	unlock()
	u2, err := lock(dir)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	u2()
}

func TestDiskBytes(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 256<<10)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	one, err := DiskBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	two, err := DiskBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if one < int64(len(data)) || two != one {
		t.Errorf("one file %d bytes, with a hard link %d; want >= %d and equal", one, two, len(data))
	}
}

// TestMakeRoot makes the real root of 8.4 from an empty cache: mmdebstrap
// from the configured Debian archive, the checks, the manifest. It needs
// root and the archive (a minute or two, ~250 MB), so it runs only in
// the build tier: PHPTUNE_BUILD_TESTS=1 (make test-build).
func TestMakeRoot(t *testing.T) {
	if os.Getenv("PHPTUNE_BUILD_TESTS") != "1" {
		t.Skip("makes a Debian 13 root from the archive (~1-2 min, network): PHPTUNE_BUILD_TESTS=1 (make test-build)")
	}
	if os.Geteuid() != 0 {
		t.Skip("a PHP root is made as root")
	}
	home := t.TempDir()
	start := time.Now()
	r, made, err := Add(context.Background(), Options{Version: "8.4", Home: home, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if !made {
		t.Fatal("an empty cache had a root")
	}
	t.Logf("made in %s: %s, %d MB, %d packages", time.Since(start).Round(time.Second), r.Manifest.PHP, r.Manifest.DiskBytes>>20, len(r.Manifest.Packages))
	if !strings.HasPrefix(r.Manifest.PHP, "PHP 8.4.") {
		t.Errorf("php-fpm -v: %q", r.Manifest.PHP)
	}
	for _, p := range []string{r.FPM, r.CLI, r.FPMIni, r.FPMConfD, r.ExtDir} {
		if _, err := os.Stat(r.Host(p)); err != nil {
			t.Errorf("the root lacks %s: %v", p, err)
		}
	}
	if _, err := Verify(context.Background(), r.FS, "8.4", r.Manifest.Extensions); err != nil {
		t.Error(err)
	}
	if p, err := privileged(r.FS); err != nil || len(p) > 0 {
		t.Errorf("the root keeps setuid/setgid files %v (%v): Debian's su and mount must lose their bits", p, err)
	}
	ents, _ := os.ReadDir(Dir(home))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".work-") {
			t.Errorf("a work directory is left: %s", e.Name())
		}
	}
	again, made, err := Add(context.Background(), Options{Version: "8.4", Home: home})
	if err != nil || made || again.Manifest.MadeAt != r.Manifest.MadeAt {
		t.Errorf("second Add: made %v, %v", made, err)
	}
	if err := Remove(home, "8.4"); err != nil {
		t.Fatal(err)
	}
}

// testWriter writes progress lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestRemoveTreeDetachesMounts: a bind mount a killed mmdebstrap left in
// a work directory (its /sys, /proc, /dev) is detached before the tree is
// removed, so the host's files behind it stay.
func TestRemoveTreeDetachesMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), ".work-8.4-1")
	mp := filepath.Join(work, "root", "sys")
	if err := os.MkdirAll(mp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(host, mp, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mp, syscall.MNT_DETACH) })
	if err := removeTree(work); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(host, "keep")); err != nil {
		t.Errorf("the mounted directory's file was removed: %v", err)
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Errorf("the work directory is left: %v", err)
	}
}
