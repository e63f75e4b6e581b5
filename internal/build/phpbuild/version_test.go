package phpbuild

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheckPHP(t *testing.T) {
	for _, tc := range []struct {
		php, installed, err string
	}{
		{"", "8.2", ""},
		{"8.2", "8.2", ""},
		{"8.4", "8.2", ""},
		{"8.3", "8.2", "choose one of them"},
		{"8", "8.2", "MAJOR.MINOR"},
		{"8.4; rm", "8.2", "MAJOR.MINOR"},
		{"../8.4", "8.2", "MAJOR.MINOR"},
	} {
		err := CheckPHP(tc.php, tc.installed)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckPHP(%q, %q) = %v, want error containing %q", tc.php, tc.installed, err, tc.err)
		}
	}
}

func TestSourcesFor(t *testing.T) {
	key := "/usr/share/keyrings/debian-archive-keyring.gpg"
	system := []AptSource{
		{URI: "http://deb.debian.org/debian", Suite: "bookworm", Components: []string{"main"}, SignedBy: key},
		{URI: "http://deb.debian.org/debian", Suite: "bookworm-updates", Components: []string{"main"}, SignedBy: key},
		{URI: "http://deb.debian.org/debian-security", Suite: "bookworm-security", Components: []string{"main"}, SignedBy: key},
		{URI: "http://example.org/other", Suite: "stable/", SignedBy: ""},
	}
	got, err := SourcesFor("8.2", "8.2", system)
	if err != nil || !reflect.DeepEqual(got, system) {
		t.Fatalf("installed release: %v %v, want the system's sources unchanged", got, err)
	}
	got, err = SourcesFor("8.4", "8.2", system)
	if err != nil {
		t.Fatal(err)
	}
	list, err := DebSrcList(got)
	if err != nil {
		t.Fatal(err)
	}
	want := "deb-src [signed-by=" + key + "] http://deb.debian.org/debian bookworm main\n" +
		"deb-src [signed-by=" + key + "] http://deb.debian.org/debian bookworm-updates main\n" +
		"deb-src [signed-by=" + key + "] http://deb.debian.org/debian trixie main\n" +
		"deb-src [signed-by=" + key + "] http://deb.debian.org/debian-security bookworm-security main\n" +
		"deb-src [signed-by=" + key + "] http://deb.debian.org/debian-security trixie-security main\n" +
		"deb-src http://example.org/other stable/\n"
	if list != want {
		t.Errorf("private sources list for 8.4:\n%s\nwant:\n%s", list, want)
	}
	if _, err := SourcesFor("8.4", "8.2", system[3:]); err == nil {
		t.Error("no Debian release repository: want an error")
	}
	if _, err := SourcesFor("7.4", "8.2", system); err == nil {
		t.Error("an unknown release: want an error")
	}
}

func TestForeignUnavailable(t *testing.T) {
	enabled := []Module{{Name: "mysqlnd"}, {Name: "opcache", Zend: true}, {Name: "apcu"}, {Name: "mysqli"}, {Name: "redis"}, {Name: "imagick"}}
	got := ForeignUnavailable(enabled, []string{"mysqlnd", "mysqli"})
	if want := []string{"apcu", "redis", "imagick"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ForeignUnavailable = %v, want %v", got, want)
	}
	if got := ForeignUnavailable(enabled[:2], []string{"mysqlnd"}); got != nil {
		t.Errorf("all built: %v, want none", got)
	}
}

func TestForeignBuildKeyDiffers(t *testing.T) {
	parts := KeyParts{SourceVersion: "8.2.29 8.2.29-1~deb12u1", SourceDigest: "apt-get source php8.2", Variant: VariantPlain, Configure: []string{"--enable-fpm"}}
	other := parts
	other.SourceVersion, other.SourceDigest = "8.4.27 8.4.27-1~deb13u1", "apt-get source php8.4"
	if Key(parts) == Key(other) {
		t.Error("an 8.4 build has the key of an 8.2 one")
	}
}
