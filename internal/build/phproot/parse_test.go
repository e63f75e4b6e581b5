package phproot

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParsePackages(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		versions map[string]string
		provided map[string][]string
	}{
		{"empty", "", map[string]string{}, map[string][]string{}},
		{"two stanzas, a continuation, CRLF-free", "Package: a\nVersion: 1\nDescription: x\n long text: with colon\n\nPackage: b\nVersion: 2:3-1\n",
			map[string]string{"a": "1", "b": "2:3-1"}, map[string][]string{}},
		{"provides with versions, two providers sorted", "Package: z\nVersion: 1\nProvides: v (= 1), w\n\nPackage: y\nProvides: v\n",
			map[string]string{"z": "1", "y": ""}, map[string][]string{"v": {"y", "z"}, "w": {"z"}}},
		{"a stanza without Package is skipped", "Version: 1\n\nPackage: a\n", map[string]string{"a": ""}, map[string][]string{}},
		{"blank lines of spaces end a stanza", "Package: a\n   \nPackage: b\n", map[string]string{"a": "", "b": ""}, map[string][]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ix, err := ParsePackages(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for n, p := range ix.Packages {
				got[n] = p.Version
			}
			if !reflect.DeepEqual(got, c.versions) {
				t.Errorf("versions %v, want %v", got, c.versions)
			}
			if !reflect.DeepEqual(ix.Provided, c.provided) {
				t.Errorf("provided %v, want %v", ix.Provided, c.provided)
			}
		})
	}
}

func TestParsePackagesLongLine(t *testing.T) {
	_, err := ParsePackages(strings.NewReader("Package: a\nDescription: " + strings.Repeat("x", maxLine+1) + "\n"))
	if !errors.Is(err, ErrParse) {
		t.Fatalf("error %v, want ErrParse", err)
	}
}

func TestIndexResolve(t *testing.T) {
	ix, _ := ParsePackages(strings.NewReader("Package: php8.4-common\nProvides: php8.4-ctype\n\nPackage: php8.4-xml\n"))
	for _, c := range []struct {
		name, want string
		ok         bool
	}{
		{"php8.4-xml", "php8.4-xml", true},
		{"php8.4-ctype", "php8.4-common", true},
		{"php8.4-nothing", "", false},
	} {
		if got, ok := ix.Resolve(c.name); got != c.want || ok != c.ok {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParsePackages(f *testing.F) {
	data, _ := os.ReadFile("testdata/Packages")
	f.Add(string(data))
	f.Add("Package: a\nProvides: ,, (=\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		ix, err := ParsePackages(strings.NewReader(in))
		if err != nil {
			return
		}
		for v, ps := range ix.Provided {
			for _, p := range ps {
				if _, ok := ix.Packages[p]; !ok {
					t.Fatalf("%q provided by %q, which is no package", v, p)
				}
			}
		}
	})
}

const sum = "3e1e77060b27ae6e703842d1eda2969efc51ddec44f0cf161068350a3aefc1a2"

func TestParseRelease(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		codename string
		files    map[string]FileHash
		err      bool
	}{
		{"fields and SHA256", "Origin: Debian\nCodename: trixie\nMD5Sum:\n abc 1 main/x\nSHA256:\n " + sum + " 275 main/binary-amd64/Packages.gz\nAcquire-By-Hash: yes\n",
			"trixie", map[string]FileHash{"main/binary-amd64/Packages.gz": {sum, 275}}, false},
		{"CRLF", "Codename: trixie\r\nSHA256:\r\n " + sum + " 1 a\r\n", "trixie", map[string]FileHash{"a": {sum, 1}}, false},
		{"a short hash", "SHA256:\n abc 1 a\n", "", nil, true},
		{"a negative size", "SHA256:\n " + sum + " -1 a\n", "", nil, true},
		{"upper-case hex", "SHA256:\n " + strings.ToUpper(sum) + " 1 a\n", "", nil, true},
		{"MD5 lines are not read", "MD5Sum:\n abc 1 a\n", "", map[string]FileHash{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rel, err := ParseRelease([]byte(c.in))
			if c.err {
				if !errors.Is(err, ErrParse) {
					t.Fatalf("error %v, want ErrParse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rel.Codename != c.codename || !reflect.DeepEqual(rel.Files, c.files) {
				t.Errorf("got %q %v, want %q %v", rel.Codename, rel.Files, c.codename, c.files)
			}
		})
	}
}

func FuzzParseRelease(f *testing.F) {
	f.Add([]byte("Codename: trixie\nSHA256:\n " + sum + " 275 main/binary-amd64/Packages.gz\n"))
	f.Add([]byte("SHA256:\n \n  x\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rel, err := ParseRelease(in)
		if err != nil {
			return
		}
		for p, h := range rel.Files {
			if len(h.SHA256) != 64 || h.Size < 0 || p == "" {
				t.Fatalf("bad entry %q %+v", p, h)
			}
		}
	})
}

func TestParseModules(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"Debian 12's php -m", "[PHP Modules]\nCore\nctype\nmysqli\nPDO\nZend OPcache\n\n[Zend Modules]\nZend OPcache\n\n", []string{"core", "ctype", "mysqli", "pdo", "zend opcache"}},
		{"a warning before the list is not a module", "PHP Warning:  Module \"x\" is already loaded in Unknown on line 0\n[PHP Modules]\ndate\n", []string{"date"}},
		{"odd characters are dropped", "[PHP Modules]\nfoo;rm\n../x\ngd\n", []string{"gd"}},
		{"another section ends the list", "[PHP Modules]\ngd\n[Other]\nintl\n", []string{"gd"}},
		{"nothing", "", []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ParseModules(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func FuzzParseModules(f *testing.F) {
	f.Add("[PHP Modules]\nCore\nZend OPcache\n[Zend Modules]\nZend OPcache\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, m := range ParseModules(in) {
			if !validModule(m) || m != strings.ToLower(m) || strings.TrimSpace(m) != m || m == "" {
				t.Fatalf("module %q", m)
			}
		}
	})
}

func TestParseDpkgQuery(t *testing.T) {
	got := ParseDpkgQuery("libc6\t2.41-12\nphp8.4-fpm\t8.4.27-1~deb13u1\nbroken\n\tnoname\n")
	want := []PkgVersion{{"libc6", "2.41-12"}, {"php8.4-fpm", "8.4.27-1~deb13u1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestMountsUnder(t *testing.T) {
	info := `22 1 0:21 / /proc rw - proc proc rw
90 22 0:5 / /var/lib/phptune/php-roots/.work-8.4-1/root/dev rw - devtmpfs udev rw
91 90 0:5 / /var/lib/phptune/php-roots/.work-8.4-1/root/dev/pts rw - devpts devpts rw
92 22 0:5 / /var/lib/phptune/php-roots/.work-8.4-10/root/proc rw - proc proc rw
93 22 0:5 / /tmp/a\040b/root/proc rw - proc proc rw
`
	got := mountsUnder(strings.NewReader(info), "/var/lib/phptune/php-roots/.work-8.4-1")
	want := []string{"/var/lib/phptune/php-roots/.work-8.4-1/root/dev/pts", "/var/lib/phptune/php-roots/.work-8.4-1/root/dev"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := mountsUnder(strings.NewReader(info), "/tmp/a b"); len(got) != 1 || got[0] != "/tmp/a b/root/proc" {
		t.Errorf("escaped space: got %q", got)
	}
}
