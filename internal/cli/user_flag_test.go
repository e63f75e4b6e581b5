package cli

import (
	"os"
	"os/user"
	"strings"
	"testing"
)

// TestUserServiceAccountRefused gives --user mysql (mariadb-server's
// account, owner of /var/lib/mysql) to every command that starts a lab of
// its own: each refuses it with the reason before anything starts — no lab
// directory, no process.
func TestUserServiceAccountRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--user is root only: run as root")
	}
	if _, err := user.Lookup("mysql"); err != nil {
		t.Skipf("no mysql account on this machine (apt-get install mariadb-server): %v", err)
	}
	if _, err := os.Stat("/var/lib/mysql"); err != nil {
		t.Skipf("no /var/lib/mysql (apt-get install mariadb-server): %v", err)
	}
	docroot := t.TempDir()
	os.WriteFile(docroot+"/index.php", []byte("<?php echo 'ok';"), 0o644)
	for _, args := range [][]string{
		{"lab", "up", "--app", "hello", "--user", "mysql"},
		{"lab", "up", "--docroot", docroot, "--user", "mysql"},
		{"tune", "--app", "hello", "--user", "mysql"},
		{"compare", "--app", "hello", "--user", "mysql", "default"},
		{"profile", "--app", "hello", "--user", "mysql"},
		{"lab", "up", "--app", "hello", "--user", "phptune-build"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("PHPTUNE_HOME", home)
			_, stderr, code := runCLI(t, args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (usage)\n%s", code, stderr)
			}
			want := "owns MariaDB's data (/var/lib/mysql); a lab would run its code as that account — pick the account that owns the site's files, e.g. www-data"
			if args[len(args)-1] == "phptune-build" {
				want = "phptune's build account"
			}
			if !strings.Contains(stderr, want) {
				t.Fatalf("stderr:\n%s\nwant %q", stderr, want)
			}
			if ents, _ := os.ReadDir(home); len(ents) != 0 {
				t.Fatalf("phptune made %d entries in its home before refusing --user", len(ents))
			}
		})
	}
}
