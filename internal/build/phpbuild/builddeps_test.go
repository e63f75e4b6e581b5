package phpbuild

import (
	"reflect"
	"strings"
	"testing"
)

const showsrc84 = `Package: php8.4
Version: 8.4.27-1~deb13u1
Build-Depends: apache2-dev (>= 2.4), debhelper (>= 9.20160709~),
 default-libmysqlclient-dev | libmysqlclient-dev, dh-apache2,
 firebird-dev [!hurd-any !m68k !hppa !ppc64] | firebird2.5-dev [!hurd-any !m68k !hppa !ppc64],
 libapparmor-dev [linux-any], libpcre2-dev (>= 10.30), libnew-dev (>= 9.0)

Package: php8.4
Version: 8.4.28-1~deb13u1
Build-Depends: libpcre2-dev (>= 10.30), libxml2-dev:any (>= 2.9.4) <!nocheck>
`

func TestBuildDepends(t *testing.T) {
	f, ok := BuildDepends(showsrc84, "8.4.28-1~deb13u1")
	if !ok || f != "libpcre2-dev (>= 10.30), libxml2-dev:any (>= 2.9.4) <!nocheck>" {
		t.Errorf("8.4.28: %q %v", f, ok)
	}
	f, ok = BuildDepends(showsrc84, "8.4.27-1~deb13u1")
	if !ok || !strings.HasPrefix(f, "apache2-dev (>= 2.4), debhelper") || !strings.HasSuffix(f, "libnew-dev (>= 9.0)") {
		t.Errorf("8.4.27 (continuation lines): %q %v", f, ok)
	}
	if _, ok := BuildDepends(showsrc84, "8.4.1-1"); ok {
		t.Error("a version not listed: want ok false")
	}
}

func TestParseRelations(t *testing.T) {
	rels, err := ParseRelations("libpcre2-dev (>= 10.30), default-libmysqlclient-dev | libmysqlclient-dev, libapparmor-dev [linux-any], libxml2-dev:any (>=2.9.4) <!nocheck>")
	if err != nil {
		t.Fatal(err)
	}
	want := []Relation{
		{{Name: "libpcre2-dev", Op: ">=", Version: "10.30"}},
		{{Name: "default-libmysqlclient-dev"}, {Name: "libmysqlclient-dev"}},
		{{Name: "libapparmor-dev", Arch: []string{"linux-any"}}},
		{{Name: "libxml2-dev", Op: ">=", Version: "2.9.4"}},
	}
	for i := range want {
		for j := range want[i] {
			if want[i][j].Arch == nil {
				want[i][j].Arch = []string{}
			}
		}
	}
	if !reflect.DeepEqual(rels, want) {
		t.Errorf("got  %#v\nwant %#v", rels, want)
	}
	for _, bad := range []string{"-o Dir::Etc=x", "libfoo (>= 1.0", "libfoo (~ 1)", "lib foo", "libfoo (>= $(rm))"} {
		if _, err := ParseRelations(bad); err == nil {
			t.Errorf("ParseRelations(%q): want an error", bad)
		}
	}
}

// fakeArchive is Debian 12 as far as the tests need it; versions compare
// as dotted numbers.
type fakeArchive struct {
	versions map[string][]string
	provided map[string]bool
}

func (f fakeArchive) Versions(n string) []string { return f.versions[n] }
func (f fakeArchive) Provided(n string) bool     { return f.provided[n] }
func (f fakeArchive) Satisfies(have, op, want string) bool {
	lt, gt := versionLess(have, want), versionLess(want, have)
	switch op {
	case ">=":
		return !lt
	case ">>":
		return gt
	case "<=":
		return !gt
	case "<<":
		return lt
	case "=":
		return !lt && !gt
	}
	return false
}

func TestUnsatisfied(t *testing.T) {
	field, _ := BuildDepends(showsrc84, "8.4.27-1~deb13u1")
	rels, err := ParseRelations(field)
	if err != nil {
		t.Fatal(err)
	}
	bookworm := fakeArchive{
		versions: map[string][]string{
			"apache2-dev": {"2.4.62-1~deb12u2"}, "debhelper": {"13.11.4"}, "default-libmysqlclient-dev": {"1.1.0"},
			"firebird-dev": {"3.0.11"}, "libapparmor-dev": {"3.0.8-3"}, "libpcre2-dev": {"10.42-1"}, "libnew-dev": {"8.1"},
		},
		provided: map[string]bool{"dh-apache2": true},
	}
	var got []string
	for _, r := range Unsatisfied(rels, bookworm, "amd64") {
		got = append(got, r.String())
	}
	if want := []string{"libnew-dev (>= 9.0)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("on amd64: %v, want %v", got, want)
	}
	// On ppc64 no firebird alternative applies (the relation is met);
	// apparmor's [linux-any] does.
	delete(bookworm.versions, "firebird-dev")
	delete(bookworm.versions, "libapparmor-dev")
	got = nil
	for _, r := range Unsatisfied(rels, bookworm, "ppc64") {
		got = append(got, r.String())
	}
	if want := []string{"libapparmor-dev", "libnew-dev (>= 9.0)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("on ppc64: %v, want %v", got, want)
	}
}

func TestArchApplies(t *testing.T) {
	for _, tc := range []struct {
		arch []string
		want bool
	}{
		{nil, true},
		{[]string{"linux-any"}, true},
		{[]string{"amd64"}, true},
		{[]string{"arm64"}, false},
		{[]string{"!hurd-any", "!m68k"}, true},
		{[]string{"!amd64"}, false},
	} {
		if got := archApplies(tc.arch, "amd64"); got != tc.want {
			t.Errorf("archApplies(%v, amd64) = %v, want %v", tc.arch, got, tc.want)
		}
	}
}

func TestParsePolicyAndProvides(t *testing.T) {
	out := "libgd-dev:\n  Installed: (none)\n  Candidate: 2.3.3-9+deb12u1\n  Version table:\n     2.3.3-9+deb12u1 500\n" +
		"dh-apache2:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n" +
		"libpcre2-dev:\n  Installed: 10.42-1\n  Candidate: 10.42-1\n"
	got := ParsePolicy(out)
	want := map[string][]string{"libgd-dev": {"2.3.3-9+deb12u1"}, "libpcre2-dev": {"10.42-1", "10.42-1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParsePolicy = %v, want %v", got, want)
	}
	showpkg := "Package: dh-apache2\nVersions: \n\nReverse Depends: \n  php8.2,dh-apache2\nDependencies: \nProvides: \nReverse Provides: \napache2-dev 2.4.62-1~deb12u2 (= )\n"
	if !ParseReverseProvides(showpkg) {
		t.Error("dh-apache2 is provided by apache2-dev")
	}
	if ParseReverseProvides("Package: x\nReverse Provides: \n") {
		t.Error("no reverse provides: want false")
	}
}

func FuzzParseRelations(f *testing.F) {
	f.Add("libpcre2-dev (>= 10.30), a | b [linux-any], c:any <!nocheck>")
	f.Add("firebird-dev [!hurd-any !m68k] | x (<< 1:2.0~)")
	f.Fuzz(func(t *testing.T, field string) {
		rels, err := ParseRelations(field)
		if err != nil {
			return
		}
		for _, r := range rels {
			for _, a := range r {
				if !debPkgNameRE.MatchString(a.Name) || strings.HasPrefix(a.Name, "-") {
					t.Fatalf("name %q passed", a.Name)
				}
				if a.Version != "" && !debVersionRE.MatchString(a.Version) {
					t.Fatalf("version %q passed", a.Version)
				}
			}
		}
		_, _ = BuildDepends("Version: 1\nBuild-Depends: "+field+"\n", "1")
	})
}
