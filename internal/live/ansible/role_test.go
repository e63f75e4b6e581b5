package ansible

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

func recommendation(t *testing.T, assignments ...string) knob.Config {
	t.Helper()
	cfg := knob.Defaults()
	for _, a := range assignments {
		name, value, _ := strings.Cut(a, "=")
		if err := cfg.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRoleGolden pins every file of a role for a typical tune's
// recommendation (pool, PHP and nginx settings).
func TestRoleGolden(t *testing.T) {
	rec := recommendation(t, "pm=static", "pm.max_children=12", "opcache.jit=tracing", "opcache.jit_buffer_size=64M", "nginx.worker_connections=2048",
		"nginx.access_log=off", "mariadb.max_connections=200", "mariadb.innodb_buffer_pool_size=256M")
	files, err := Role(rec, Options{Pool: "www", PHPVersion: "8.2", Source: "phptune-tune-20261126"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var all strings.Builder
	for _, n := range names {
		all.WriteString("==> " + n + " <==\n")
		all.Write(files[n])
	}
	golden := filepath.Join("testdata", "role.golden")
	goldentest.CheckString(t, golden, all.String())
	if !strings.Contains(string(files["README.md"]), "nginx.worker_connections=2048") {
		t.Error("the README does not list the nginx setting the role leaves to the user")
	}
}

func TestRoleRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		rec  []string
		o    Options
		want string
	}{
		{"another server", []string{"server=unit"}, Options{Pool: "www", PHPVersion: "8.2"}, "runs no php-fpm"},
		{"several pools", []string{"pm=static", "pm.max_children=8", "fpm.pools=2"}, Options{Pool: "www", PHPVersion: "8.2"}, "does not split"},
		{"socket moved", []string{"listen=tcp"}, Options{Pool: "www", PHPVersion: "8.2"}, "does not move"},
		{"nothing the role writes", []string{"nginx.worker_connections=2048"}, Options{Pool: "www", PHPVersion: "8.2"}, "nothing for the role"},
		{"pool name with a newline", []string{"pm.max_children=8"}, Options{Pool: "www]\n[x", PHPVersion: "8.2"}, "pool name"},
		{"version", []string{"pm.max_children=8"}, Options{Pool: "www", PHPVersion: "8.2; rm"}, "PHP branch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Role(recommendation(t, tt.rec...), tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}
