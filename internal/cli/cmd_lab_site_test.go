package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

// TestLabUpDataFlagsNeedSite: --db-from and --db-dump fill a site lab's
// database; without --site they are refused before anything starts.
func TestLabUpDataFlagsNeedSite(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	for _, args := range [][]string{
		{"lab", "up", "--db-from", "wpsite"},
		{"lab", "up", "--docroot", ".", "--db-dump", "/nonexistent.sql"},
	} {
		_, stderr, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "give --site too") {
			t.Errorf("%v: exit %d, %q; want 2 naming --site", args, code, stderr)
		}
	}
}

// TestSiteData: where a site lab's database comes from, and what is
// refused before anything starts.
func TestSiteData(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	wp := &site.App{Kind: "wordpress", File: "/var/www/site/wp-config.php", DB: site.Database{Name: "wpsite", User: "wp", Password: site.NewSecret("pw"), Host: "localhost"}}
	target := &site.DBTarget{Endpoint: site.Endpoint{Network: "unix", Address: "/run/mysqld/mysqld.sock"}, SizeBytes: 10 << 20}
	huge := &site.DBTarget{Endpoint: target.Endpoint, SizeBytes: 1 << 60}
	dump := filepath.Join(t.TempDir(), "site.sql")
	if err := os.WriteFile(dump, []byte("CREATE TABLE t (a INT);\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		s          *site.Site
		from, dump string
		memory     int64
		usage      string // a usage error holding this, or "" for none
		copyFrom   bool
		dumpFile   bool
		warning    string
	}{
		{name: "auto copies the configured database", s: &site.Site{App: wp, DB: target}, from: "auto", copyFrom: true},
		{name: "the configured name copies it", s: &site.Site{App: wp, DB: target}, from: "wpsite", copyFrom: true},
		{name: "another name is refused", s: &site.Site{App: wp, DB: target}, from: "other", usage: "uses the database wpsite"},
		{name: "none leaves it empty, said", s: &site.Site{App: wp, DB: target}, from: "none", warning: "starts empty"},
		{name: "no database found, said", s: &site.Site{AppError: "no wp-config.php"}, from: "auto", warning: "no wp-config.php"},
		{name: "too large for the disk", s: &site.Site{App: wp, DB: huge}, from: "auto", usage: "does not fit the lab"},
		{name: "larger than the memory cap", s: &site.Site{App: wp, DB: target}, from: "auto", memory: 1 << 20, usage: "--memory-max"},
		{name: "a dump file", s: &site.Site{App: wp, DB: target}, from: "auto", dump: dump, dumpFile: true},
		{name: "a missing dump file", s: &site.Site{App: wp, DB: target}, from: "auto", dump: dump + ".none", usage: "--db-dump"},
		{name: "a dump and a source", s: &site.Site{App: wp, DB: target}, from: "wpsite", dump: dump, usage: "both fill"},
		{name: "a dump without an app account", s: &site.Site{}, from: "auto", dump: dump, usage: "names no literal database"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			env := &Env{Ctx: context.Background(), Stdout: &bytes.Buffer{}, Stderr: &stderr}
			d, err := siteData(env, tc.s, tc.from, tc.dump, tc.memory)
			var ue *UsageError
			switch {
			case tc.usage != "":
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("err %v, want a usage error holding %q", err, tc.usage)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got := d != nil && d.From != nil; got != tc.copyFrom {
				t.Errorf("copy from production: %v, want %v", got, tc.copyFrom)
			}
			if got := d != nil && d.DumpFile != ""; got != tc.dumpFile {
				t.Errorf("dump file: %v, want %v", got, tc.dumpFile)
			}
			if tc.copyFrom && (d.From.DB != "wpsite" || d.From.Conn.User != "wp" || d.From.Conn.Address != "/run/mysqld/mysqld.sock") {
				t.Errorf("source %+v", d.From)
			}
			if !strings.Contains(stderr.String(), tc.warning) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.warning)
			}
		})
	}
}
