package lab

import (
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"
)

func TestCheckAccount(t *testing.T) {
	tests := []struct {
		name string
		f    AccountFacts
		want string // "" when allowed, else a part of the refusal
	}{
		{"root", AccountFacts{Name: "root"}, "a lab never runs as root"},
		{"gid 0", AccountFacts{Name: "odd", UID: 1001, GID: 0}, "a lab never runs as root"},
		{"build account", AccountFacts{Name: BuildUser, UID: 996, GID: 996}, "phptune's build account"},
		{"build account owning the docroot", AccountFacts{Name: BuildUser, UID: 996, GID: 996, Docroot: "/srv/app", OwnsDocroot: true}, "phptune's build account"},
		{"site labs' MariaDB account", AccountFacts{Name: DBUser, UID: 995, GID: 995}, "phptune's account for site labs' MariaDB"},
		{"site labs' MariaDB account owning the docroot", AccountFacts{Name: DBUser, UID: 995, GID: 995, Docroot: "/srv/app", OwnsDocroot: true}, "phptune's account for site labs' MariaDB"},
		{"www-data", AccountFacts{Name: "www-data", UID: 33, GID: 33, ServiceData: "/run/php"}, ""},
		{"www-data, built-in app", AccountFacts{Name: "www-data", UID: 33, GID: 33}, ""},
		{"mysql", AccountFacts{Name: "mysql", UID: 102, GID: 105, ServiceData: "/var/lib/mysql"},
			"--user mysql: owns MariaDB's data (/var/lib/mysql); a lab would run its code as that account — pick the account that owns the site's files, e.g. www-data"},
		{"mysql owning the docroot", AccountFacts{Name: "mysql", UID: 102, GID: 105, ServiceData: "/var/lib/mysql", Docroot: "/srv/app", OwnsDocroot: true}, "owns MariaDB's data"},
		{"postgres", AccountFacts{Name: "postgres", UID: 104, GID: 108, ServiceData: "/var/lib/postgresql"}, "owns PostgreSQL's data"},
		{"a daemon's spool", AccountFacts{Name: "Debian-exim", UID: 101, GID: 103, ServiceData: "/var/spool/exim4"}, "owns a system service's files (/var/spool/exim4)"},
		{"an ordinary user owning a log", AccountFacts{Name: "alice", UID: 1000, GID: 1000, ServiceData: "/var/log/app"}, "owns a system service's files"},
		{"ordinary user", AccountFacts{Name: "alice", UID: 1000, GID: 1000}, ""},
		{"ordinary user, docroot of another", AccountFacts{Name: "alice", UID: 1000, GID: 1000, Docroot: "/srv/app"}, ""},
		{"nobody", AccountFacts{Name: "nobody", UID: 65534, GID: 65534}, "a system account (uid 65534)"},
		{"daemon, built-in app", AccountFacts{Name: "daemon", UID: 1, GID: 1}, "a built-in app has no docroot it could own"},
		{"daemon, docroot of another", AccountFacts{Name: "daemon", UID: 1, GID: 1, Docroot: "/srv/app"}, "does not own the docroot /srv/app"},
		{"site account owning the docroot", AccountFacts{Name: "shop", UID: 998, GID: 998, Docroot: "/srv/shop", OwnsDocroot: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckAccount(tt.f)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckAccount(%+v) = %v, want it allowed", tt.f, err)
			case tt.want != "" && err == nil:
				t.Fatalf("CheckAccount(%+v) allowed it, want %q", tt.f, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("CheckAccount(%+v) = %v, want %q in it", tt.f, err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), "e.g. www-data") {
				t.Errorf("refusal %q gives no account to pick", err)
			}
		})
	}
}

// TestGatherAccountFacts reads the facts of this machine's mysql account
// (mariadb-server's) and of a docroot it owns.
func TestGatherAccountFacts(t *testing.T) {
	u, err := user.Lookup("mysql")
	if err != nil {
		t.Skipf("no mysql account (install mariadb-server): %v", err)
	}
	if _, err := os.Stat("/var/lib/mysql"); err != nil {
		t.Skipf("no /var/lib/mysql: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	a := &account{Name: "mysql", UID: uint32(uid), GID: uint32(gid)}
	f := gatherAccountFacts(a, "")
	if f.ServiceData != "/var/lib/mysql" {
		t.Errorf("ServiceData = %q, want /var/lib/mysql", f.ServiceData)
	}
	dir := t.TempDir()
	if f := gatherAccountFacts(a, dir); f.OwnsDocroot {
		t.Errorf("mysql owns %s, made by uid %d", dir, os.Geteuid())
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		if f := gatherAccountFacts(a, dir); !f.OwnsDocroot {
			t.Errorf("mysql does not own %s after chown", dir)
		}
	}
}
