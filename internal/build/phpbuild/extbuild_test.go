package phpbuild

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExtensionArgs(t *testing.T) {
	base := []string{"--prefix=/usr", "--with-zlib-dir=/usr", "--enable-opcache"}
	mods := []Module{{Name: "mysqlnd", Priority: 10}, {Name: "opcache", Zend: true, Priority: 10}, {Name: "mysqli"}, {Name: "ctype"}, {Name: "nodistrorule"}}
	// Debian 8.2.32's rules.d values.
	vars := map[string]string{
		"mysqlnd_config": "--enable-mysqlnd=shared --enable-mysqlnd-compression-support --with-zlib-dir=/usr",
		"mysqli_config":  "--with-mysqli=shared,mysqlnd --with-mysql-sock=/var/run/mysqld/mysqld.sock",
		"ctype_config":   "--enable-ctype=shared",
		"opcache_config": "--enable-opcache=shared-should-not-be-read",
	}
	args, built, err := ExtensionArgs(base, mods, vars)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--prefix=/usr", "--with-zlib-dir=/usr", "--enable-opcache", "--enable-mysqlnd=shared", "--enable-mysqlnd-compression-support",
		"--with-mysqli=shared,mysqlnd", "--with-mysql-sock=/var/run/mysqld/mysqld.sock", "--enable-ctype=shared"}
	if !slices.Equal(args, want) {
		t.Errorf("args\n got %q\nwant %q", args, want)
	}
	if !slices.Equal(built, []string{"mysqlnd", "mysqli", "ctype"}) {
		t.Errorf("built %q", built)
	}
	if !slices.Equal(base, []string{"--prefix=/usr", "--with-zlib-dir=/usr", "--enable-opcache"}) {
		t.Errorf("the caller's line changed: %q", base)
	}

	for name, bad := range map[string]string{
		"static":    "--enable-ctype",
		"not flag":  "--enable-ctype=shared CFLAGS=-O0",
		"shell":     "--enable-ctype=shared;rm",
		"unquoted$": "--with-ctype=$(X)",
	} {
		_, _, err := ExtensionArgs(base, []Module{{Name: "ctype"}}, map[string]string{"ctype_config": bad})
		if err == nil {
			t.Errorf("%s: %q accepted", name, bad)
		}
	}
}

func TestEnabledModules(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"20-mysqli.ini":  "; configuration for php mysql module\n; priority=20\nextension=mysqli.so\n",
		"10-mysqlnd.ini": "; priority=10\nextension=mysqlnd.so\n",
		"10-opcache.ini": "; priority=10\nzend_extension=opcache.so\n",
		"99-local.ini":   "memory_limit=1G\n",
		"README":         "extension=nope.so\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mods, err := EnabledModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range mods {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "mysqlnd opcache mysqli" {
		t.Errorf("modules %q, want mysqlnd opcache mysqli (Debian's order)", got)
	}
	if _, err := EnabledModules(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "enabled extensions") {
		t.Errorf("a missing conf.d: %v", err)
	}
}

func TestParseTrain(t *testing.T) {
	for _, c := range []struct {
		in, app, workload, err string
	}{
		{"strings", "strings", "front", ""},
		{"hello:front", "hello", "front", ""},
		{"wordpress", "wordpress", "front", ""},
		{"wordpress:mix", "wordpress", "mix", ""},
		{"wordpress:comment", "wordpress", "comment", ""},
		{"io", "io", "front", ""},
		{"io:mix", "", "", "trains on front"},
		{"strings:comment", "", "", "trains on front"},
		{"wordpress:/about", "", "", "front, mix or comment"},
		{"nosuchapp", "", "", "--train nosuchapp"},
	} {
		app, wl, err := ParseTrain(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseTrain(%q) err %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || app != c.app || wl != c.workload {
			t.Errorf("ParseTrain(%q) = %q, %q, %v", c.in, app, wl, err)
		}
	}
}

// The build account is the machine's: a second build, in any build cache,
// must wait rather than reap the first one's processes.
func TestAccountLockIsMachineWide(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the account lock is root's (/run)")
	}
	unlock, err := lockAccount()
	if err != nil {
		t.Skipf("a build is running on this machine: %v", err)
	}
	defer unlock()
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	if _, err := lockAccount(); err == nil || !strings.Contains(err.Error(), "another phptune build is running on this machine") {
		t.Fatalf("a second lock: %v", err)
	}
}

// A build step runs in a session of its own whose scheduler autogroup has
// the lowest weight, so it cannot take a session's fair share of the CPU
// from a tune started elsewhere.
func TestStepAutogroupIsLowest(t *testing.T) {
	// The file is absent without autogroups, and empty for a task in a
	// cpu cgroup other than the root one (a container, a systemd slice
	// with CPU accounting): autogroups do not apply to it.
	mine, err := os.ReadFile("/proc/self/autogroup")
	if err != nil || len(strings.Fields(string(mine))) == 0 {
		t.Skip("scheduler autogroups do not apply to this test's process")
	}
	var out strings.Builder
	s := step{acct: &Account{}, out: &out}
	if err := s.run(context.Background(), "cat", "/proc/self/autogroup"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.TrimSpace(out.String()), "nice 19") || strings.Fields(out.String())[0] == strings.Fields(string(mine))[0] {
		t.Fatalf("the step's autogroup %q (the test's %q): want a group of its own at nice 19", out.String(), mine)
	}
}

func TestCompileProgress(t *testing.T) {
	src := t.TempDir()
	mk := "all: x\n# a.lo: comment\nZend/a.lo: Zend/a.c\n\tcc\next/b/b.lo: ext/b/b.c\nmain/c.lo: main/c.c\n\tcc\nsapi/d.lo: sapi/d.c\nPHP_OBJS = Zend/a.lo ext/b/b.lo\n"
	if err := os.WriteFile(filepath.Join(src, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &builder{build: &Account{}, src: src}
	if got := b.compileProgress(); got != "0% (0 of 4 objects), " {
		t.Errorf("before make: %q", got)
	}
	os.MkdirAll(filepath.Join(src, "Zend"), 0o755)
	os.WriteFile(filepath.Join(src, "Zend", "a.lo"), nil, 0o644)
	if got := b.compileProgress(); got != "25% (1 of 4 objects), " {
		t.Errorf("one object: %q", got)
	}
	if got := (&builder{build: &Account{}, src: t.TempDir()}).compileProgress(); got != "" {
		t.Errorf("no Makefile: %q", got)
	}
}
