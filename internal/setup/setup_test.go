package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDenyServiceStarts(t *testing.T) {
	orig := PolicyRC
	t.Cleanup(func() { PolicyRC = orig })
	cases := []struct {
		name     string
		existing string // "" for none
		wantNote string
	}{
		{"none: a temporary one", "", "a temporary"},
		{"the administrator's is kept", "#!/bin/sh\nexit 0\n", "already exists"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			PolicyRC = filepath.Join(t.TempDir(), "policy-rc.d")
			if c.existing != "" {
				if err := os.WriteFile(PolicyRC, []byte(c.existing), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			restore, note, err := DenyServiceStarts()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(note, c.wantNote) {
				t.Errorf("note %q lacks %q", note, c.wantNote)
			}
			data, err := os.ReadFile(PolicyRC)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(PolicyRC)
			if c.existing == "" && (!strings.HasSuffix(string(data), "exit 101\n") || fi.Mode().Perm()&0o100 == 0) {
				t.Errorf("temporary policy-rc.d is %v %q, want an executable that exits 101", fi.Mode(), data)
			}
			if c.existing != "" && string(data) != c.existing {
				t.Errorf("the existing policy-rc.d was changed: %q", data)
			}
			restore()
			_, err = os.Stat(PolicyRC)
			if c.existing == "" && !os.IsNotExist(err) {
				t.Errorf("the temporary policy-rc.d was not removed (%v)", err)
			}
			if c.existing != "" && err != nil {
				t.Errorf("the existing policy-rc.d was removed: %v", err)
			}
		})
	}
}

func TestApacheIsInstalledQuietly(t *testing.T) {
	for _, c := range []struct {
		group []string
		want  bool
	}{
		{Apache, true},
		{[]string{"libapache2-mod-php"}, true},
		{Packages[0], false},
		{TestTools, false},
	} {
		if got := quiet(c.group); got != c.want {
			t.Errorf("quiet(%v) = %v, want %v", c.group, got, c.want)
		}
	}
	for _, g := range Packages {
		for _, p := range g {
			if p == "apache2" {
				t.Error("setup installs Debian's apache2 service package; labs need only apache2-bin")
			}
		}
	}
}
