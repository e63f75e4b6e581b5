package phproot

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/build/phpbuild"
)

// fakeArchive serves testdata's InRelease and Packages.gz (or packages,
// when set) as Debian's archive's trixie suite.
func fakeArchive(t *testing.T, packages []byte) string {
	t.Helper()
	in, err := os.ReadFile("testdata/InRelease")
	if err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile("testdata/Packages.gz")
	if err != nil {
		t.Fatal(err)
	}
	if packages != nil {
		gz = packages
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/debian/dists/trixie/InRelease":
			w.Write(in)
		case strings.HasPrefix(r.URL.Path, "/debian/dists/trixie/main/binary-") && strings.HasSuffix(r.URL.Path, "/Packages.gz"):
			w.Write(gz)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/debian"
}

// fakeTools makes a PATH of the tools Prepare looks for: gpgv (the real
// one) and, unless left out, mmdebstrap and chroot (never run here).
func fakeTools(t *testing.T, leave ...string) string {
	t.Helper()
	gpgv, err := exec.LookPath("gpgv")
	if err != nil {
		t.Skip("gpgv is not installed (Debian's apt depends on it)")
	}
	dir := t.TempDir()
	if err := os.Symlink(gpgv, filepath.Join(dir, "gpgv")); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"mmdebstrap", "chroot"} {
		if !strings.Contains(strings.Join(leave, " "), tool) {
			if err := os.WriteFile(filepath.Join(dir, tool), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestPrepareRefusals: each bad input is refused, before anything is made,
// with its reason and fix; the good ones give the plan. No network: the
// archive is a local server of testdata's fixtures.
func TestPrepareRefusals(t *testing.T) {
	origEuid, origFree := geteuid, MinFree
	t.Cleanup(func() { geteuid, MinFree = origEuid, origFree })
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	host := []string{"core", "ctype", "mysqli", "pdo_mysql", "zend opcache", "xsl", "date"}
	cases := []struct {
		name     string
		version  string
		euid     int
		leave    string // a tool left off PATH
		minFree  uint64
		keyring  string
		archive  string // "" for the fixture archive; "bad-index" serves another Packages.gz
		host     []string
		ext      []string
		skip     []string
		want     string // in the error; "" for none
		packages []string
	}{
		{name: "an unknown release", version: "8.3", want: "makes PHP roots of 8.4 (Debian 13, trixie) only"},
		{name: "not root", euid: 1000, want: "run it as root"},
		{name: "no mmdebstrap", leave: "mmdebstrap", want: "mmdebstrap is not installed (it makes the Debian root); install it: make setup"},
		{name: "no chroot", leave: "chroot", want: "chroot is not on PATH"},
		{name: "too little disk", minFree: 1 << 62, want: "a PHP root needs at least"},
		{name: "no keyring", keyring: "testdata/none.gpg", want: "keyring testdata/none.gpg"},
		{name: "no route to the archive", archive: "http://127.0.0.1:1/debian", want: "no route to Debian's archive for trixie"},
		{name: "a keyring without the release's key", keyring: "testdata/other.gpg", want: "holds no key of Debian 13 (trixie) that signs"},
		{name: "a keyring with Debian 12's key alone", keyring: "testdata/bookworm.gpg", want: "holds no key of Debian 13 (trixie)"},
		{name: "an index that is not the signed one", archive: "bad-index", want: "does not match its signed Release's SHA256"},
		{name: "a module without a package", host: append(host, "sourceguardian", "ioncube loader"), want: "no PHP 8.4 package for ioncube loader, sourceguardian (the host's php -m or --ext asks for them); leave them out with --skip-ext ioncube loader,sourceguardian"},
		{name: "--ext without a package", ext: []string{"imap"}, want: "--skip-ext imap"},
		{name: "the host's modules", host: host,
			packages: []string{"php8.4-cli", "php8.4-common", "php8.4-fpm", "php8.4-mysql", "php8.4-opcache", "php8.4-xml"}},
		{name: "--ext and --skip-ext", host: append(host, "sourceguardian"), ext: []string{"apcu", "redis"}, skip: []string{"sourceguardian", "xsl"},
			packages: []string{"php8.4-apcu", "php8.4-cli", "php8.4-common", "php8.4-fpm", "php8.4-mysql", "php8.4-opcache", "php8.4-redis"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PATH", fakeTools(t, c.leave))
			geteuid = func() int { return c.euid }
			MinFree = 1 << 20
			if c.minFree != 0 {
				MinFree = c.minFree
			}
			o := Options{Version: "8.4", Home: t.TempDir(), HostModules: c.host, Ext: c.ext, SkipExt: c.skip, Keyring: abs("testdata/trixie.gpg")}
			if o.HostModules == nil {
				o.HostModules = host
			}
			if c.version != "" {
				o.Version = c.version
			}
			if c.keyring != "" {
				o.Keyring = c.keyring
			}
			switch c.archive {
			case "":
				o.Mirrors.Archive = fakeArchive(t, nil)
			case "bad-index":
				o.Mirrors.Archive = fakeArchive(t, []byte("not the index"))
			default:
				o.Mirrors.Archive = c.archive
			}
			p, err := Prepare(context.Background(), o)
			if c.want != "" {
				var r *Refusal
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want one with %q", err, c.want)
				}
				if !errors.As(err, &r) && !errors.Is(err, ErrUnknownVersion) {
					t.Errorf("error %T is not a Refusal", err)
				}
				if ents, _ := os.ReadDir(o.Home); len(ents) > 0 {
					t.Errorf("a refusal wrote %d entries in the home", len(ents))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Plan.Packages, c.packages) {
				t.Errorf("packages %q, want %q", p.Plan.Packages, c.packages)
			}
			if p.Versions["php8.4-fpm"] != "8.4.27-1~deb13u1" {
				t.Errorf("versions %v", p.Versions)
			}
		})
	}
}

func TestGoodSigBy(t *testing.T) {
	ri := Releases["8.4"]
	for _, c := range []struct {
		status string
		want   bool
	}{
		{"[GNUPG:] GOODSIG 78DBA3BC47EF2265 Debian Archive Automatic Signing Key (13/trixie)\n", true},
		{"[GNUPG:] GOODSIG 1 Debian Archive Automatic Signing Key (12/bookworm)\n[GNUPG:] NO_PUBKEY 2\n", false},
		{"[GNUPG:] BADSIG 1 Debian Archive Automatic Signing Key (13/trixie)\n", false},
		{"", false},
	} {
		if got := goodSigBy(c.status, ri); got != c.want {
			t.Errorf("goodSigBy(%q) = %v", c.status, got)
		}
	}
}

func TestMirrorsFrom(t *testing.T) {
	sys := []struct{ uri, suite, comps string }{
		{"http://a/debian", "bookworm", "main contrib"},
		{"http://a/debian", "bookworm-updates", "main"},
		{"http://a/debian-security", "bookworm-security", "main"},
		{"http://b/debian", "bookworm", "main"},
		{"http://a/debian", "bookworm", "main"},
		{"http://flat/", "./", "main"},
		{"http://c/debian", "bookworm", "contrib"},
	}
	var in []phpbuild.AptSource
	for _, s := range sys {
		in = append(in, phpbuild.AptSource{URI: s.uri, Suite: s.suite, Components: strings.Fields(s.comps)})
	}
	a, s := MirrorsFrom(in)
	if !reflect.DeepEqual(a, []string{"http://a/debian", "http://b/debian"}) || !reflect.DeepEqual(s, []string{"http://a/debian-security"}) {
		t.Errorf("archives %q, security %q", a, s)
	}
}

func TestNormalizeExt(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
		err  bool
	}{
		{[]string{"apcu,Redis", " Zend OPcache "}, []string{"apcu", "redis", "zend opcache"}, false},
		{[]string{",,"}, nil, false},
		{[]string{"../x"}, nil, true},
	} {
		got, err := NormalizeExt("--ext", c.in)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
			t.Errorf("NormalizeExt(%q) = %q, %v", c.in, got, err)
		}
	}
}
