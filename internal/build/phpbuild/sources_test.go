package phpbuild

import (
	"strings"
	"testing"
)

func TestDebSrcList(t *testing.T) {
	deb822 := `Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
Enabled: no
URIs: http://example.invalid/disabled
Suites: x
Components: main

Types: deb-src
URIs: http://example.invalid/src-only
Suites: y
Components: main
`
	oneLine := `# comment
deb [arch=amd64 signed-by=/etc/apt/keyrings/k.gpg] http://mirror.invalid/debian bookworm main contrib # tail
deb-src http://mirror.invalid/debian bookworm main
deb http://weird.invalid/ bad]suite main
deb cdrom:[Debian]/ bookworm main
`
	srcs := append(ParseDeb822(deb822), ParseOneLine(oneLine)...)
	got, err := DebSrcList(srcs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"deb-src [signed-by=/etc/apt/keyrings/k.gpg] http://mirror.invalid/debian bookworm main contrib",
		"deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main",
		"deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main",
		"deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main",
	}
	if strings.Join(want, "\n")+"\n" != got {
		t.Fatalf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if _, err := DebSrcList(nil); err == nil || !strings.Contains(err.Error(), "--source") {
		t.Fatalf("no sources: %v", err)
	}
}

func FuzzDebSrcList(f *testing.F) {
	f.Add("Types: deb\nURIs: http://a/debian\nSuites: s\nComponents: main\n", "deb [signed-by=/k] http://b/ s main\n")
	f.Fuzz(func(t *testing.T, deb822, oneLine string) {
		list, err := DebSrcList(append(ParseDeb822(deb822), ParseOneLine(oneLine)...))
		if err != nil {
			return
		}
		for _, line := range strings.Split(strings.TrimSuffix(list, "\n"), "\n") {
			fs := strings.Fields(line)
			if fs[0] != "deb-src" || strings.ContainsAny(line, "#\r\x00") || len(fs) < 3 {
				t.Fatalf("bad line %q", line)
			}
		}
	})
}

func TestSourceVersions(t *testing.T) {
	showsrc := "Package: php8.2\nVersion: 8.2.36-1~deb12u1\nBinary: x\n\nPackage: php8.2\nVersion: 8.2.32-1~deb12u1\n\nVersion: 8.2.36-1~deb12u1\nVersion: bad version\nVersion: 8.2.9-1\n"
	cases := []struct {
		installed string
		want      string
	}{
		{"8.2.36-1~deb12u1", "8.2.36-1~deb12u1 8.2.32-1~deb12u1 8.2.9-1"},
		{"8.2.40-1", "8.2.36-1~deb12u1 8.2.32-1~deb12u1 8.2.9-1"},
		{"8.2.9-1", "8.2.9-1 8.2.36-1~deb12u1 8.2.32-1~deb12u1"},
	}
	for _, c := range cases {
		if got := strings.Join(SourceVersions(showsrc, c.installed), " "); got != c.want {
			t.Errorf("installed %s: %q, want %q", c.installed, got, c.want)
		}
	}
}
