package setup

import (
	"context"
	"errors"
	"io"
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
		{WebServers, true},
		{[]string{"h2o"}, true},
		{Profilers, true},
		{[]string{"php-excimer"}, true},
		{Seal, true},
		{[]string{"nftables"}, true},
		{Caches, true},
		{[]string{"redis-server"}, true},
		{RealServer, true},
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

// TestDisableServices: the services of the web server packages just
// installed are disabled (units with deb-systemd-helper, init scripts that
// exist with update-rc.d); other packages' are not touched.
func TestDisableServices(t *testing.T) {
	origRun, origInit := run, InitDir
	t.Cleanup(func() { run, InitDir = origRun, origInit })
	cases := []struct {
		name      string
		installed []string
		scripts   []string // init scripts present
		fail      string   // a command that fails
		want      []string // commands run
		wantErr   string
	}{
		{"all three", []string{"lighttpd", "caddy", "h2o"}, []string{"lighttpd", "h2o"}, "",
			[]string{"DPKG_MAINTSCRIPT_PACKAGE=lighttpd deb-systemd-helper disable lighttpd.service", "update-rc.d lighttpd disable",
				"DPKG_MAINTSCRIPT_PACKAGE=caddy deb-systemd-helper disable caddy.service",
				"DPKG_MAINTSCRIPT_PACKAGE=h2o deb-systemd-helper disable h2o.service", "update-rc.d h2o disable"}, ""},
		{"the caches", []string{"redis-server", "memcached"}, []string{"redis-server", "memcached"}, "",
			[]string{"DPKG_MAINTSCRIPT_PACKAGE=redis-server deb-systemd-helper disable redis-server.service", "update-rc.d redis-server disable",
				"DPKG_MAINTSCRIPT_PACKAGE=memcached deb-systemd-helper disable memcached.service", "update-rc.d memcached disable"}, ""},
		{"the real-server tier's apache2", []string{"apache2"}, []string{"apache2"}, "",
			[]string{"DPKG_MAINTSCRIPT_PACKAGE=apache2 deb-systemd-helper disable apache2.service", "update-rc.d apache2 disable"}, ""},
		{"no init scripts", []string{"lighttpd"}, nil, "", []string{"DPKG_MAINTSCRIPT_PACKAGE=lighttpd deb-systemd-helper disable lighttpd.service"}, ""},
		{"only the newly installed", []string{"caddy"}, []string{"lighttpd", "h2o"}, "", []string{"DPKG_MAINTSCRIPT_PACKAGE=caddy deb-systemd-helper disable caddy.service"}, ""},
		{"packages without a service", []string{"apache2-bin", "nginx"}, []string{"nginx"}, "", nil, ""},
		{"a failure is reported, the rest done", []string{"lighttpd", "h2o"}, []string{"lighttpd"}, "update-rc.d lighttpd disable",
			[]string{"DPKG_MAINTSCRIPT_PACKAGE=lighttpd deb-systemd-helper disable lighttpd.service", "update-rc.d lighttpd disable",
				"DPKG_MAINTSCRIPT_PACKAGE=h2o deb-systemd-helper disable h2o.service"},
			"update-rc.d lighttpd disable: exit status 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			InitDir = t.TempDir()
			for _, s := range c.scripts {
				if err := os.WriteFile(filepath.Join(InitDir, s), []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var ran []string
			run = func(_ context.Context, _ io.Writer, env []string, name string, args ...string) error {
				line := strings.Join(append(append(env, name), args...), " ")
				ran = append(ran, line)
				if line == c.fail {
					return errors.New("exit status 1")
				}
				return nil
			}
			done, err := DisableServices(context.Background(), io.Discard, c.installed)
			if strings.Join(ran, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("ran %q, want %q", ran, c.want)
			}
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("error %v, want %q", err, c.wantErr)
			}
			if want := len(c.want); c.fail != "" && len(done) != want-1 || c.fail == "" && len(done) != want {
				t.Errorf("reported disabled %q", done)
			}
		})
	}
}
