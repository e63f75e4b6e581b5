package lab

import (
	"fmt"
	"path/filepath"
)

// BuildUser is phptune's build account (phpbuild creates it), named here
// so that --user can refuse it.
const BuildUser = "phptune-build"

// WebServerUser is Debian's web server account: the system nginx, Apache
// and php-fpm pools run the site's PHP as it, and Debian's packaged apps'
// writable files (WordPress's wp-content) belong to it.
const WebServerUser = "www-data"

// ordinaryUIDMin is the first uid of an ordinary (human) account on
// Debian (UID_MIN in /etc/login.defs); nobodyUID is the account shared by
// unrelated daemons.
const (
	ordinaryUIDMin = 1000
	nobodyUID      = 65534
)

// AccountFacts is what the --user rule looks at, gathered by
// gatherAccountFacts.
type AccountFacts struct {
	Name     string
	UID, GID uint32
	// ServiceData is a file or directory directly under /var/lib,
	// /var/spool, /var/cache, /var/log, /etc or /run that the
	// account owns ("" when none): the mark of an account a system
	// service keeps its data as.
	ServiceData string
	// Docroot is the --docroot given ("" for a built-in app) and
	// OwnsDocroot whether the account owns that directory.
	Docroot     string
	OwnsDocroot bool
}

// CheckAccount is the --user rule: a lab runs the app's code with the
// account's rights, so the account must be one whose rights the app may
// have. In order:
//
//   - phptune's build account never (its files become root's cached
//     builds), nor its account for site labs' MariaDB (DBUser: it owns
//     their datadirs), whether or not they exist yet (checkAccountName);
//   - root (uid or gid 0) never;
//   - www-data, Debian's web server account, always: the site's PHP runs
//     as it already;
//   - an account that owns a system service's data (/var/lib/mysql, a
//     spool, a cache, a log, something in /etc or /run) never: lab code
//     would own that service's data;
//   - an ordinary account (uid 1000 and up, not nobody) yes;
//   - any other system account (a daemon's, nobody) only when it owns the
//     --docroot: it is then the site's own account.
func CheckAccount(f AccountFacts) error {
	if err := checkAccountName(f.Name); err != nil {
		return err
	}
	switch {
	case f.UID == 0 || f.GID == 0:
		return fmt.Errorf("--user %s: a lab never runs as root (uid %d, gid %d): PHP code in it could then act as root; %s", f.Name, f.UID, f.GID, pickAccount)
	case f.Name == WebServerUser:
		return nil
	case f.ServiceData != "":
		return fmt.Errorf("--user %s: owns %s (%s); a lab would run its code as that account — %s", f.Name, serviceOf(f.ServiceData), f.ServiceData, pickAccount)
	case f.UID >= ordinaryUIDMin && f.UID != nobodyUID:
		return nil
	case f.Docroot != "" && f.OwnsDocroot:
		return nil
	case f.Docroot != "":
		return fmt.Errorf("--user %s: a system account (uid %d) that does not own the docroot %s; a lab would run its code with a service's rights — %s, or the account that owns %s", f.Name, f.UID, f.Docroot, pickAccount, f.Docroot)
	default:
		return fmt.Errorf("--user %s: a system account (uid %d), and a built-in app has no docroot it could own; a lab would run its code with a service's rights — %s, or give --docroot a directory that account owns", f.Name, f.UID, pickAccount)
	}
}

// pickAccount ends every refusal: the account to give instead.
const pickAccount = "pick the account that owns the site's files, e.g. " + WebServerUser

// checkAccountName refuses phptune's own build account by name, before
// the account is looked up (it is created by the first build).
func checkAccountName(name string) error {
	if name == DBUser {
		return fmt.Errorf("--user %s: phptune's account for site labs' MariaDB, which owns their datadirs; a lab would run its code as that account — %s", name, pickAccount)
	}
	if name == BuildUser {
		return fmt.Errorf("--user %s: phptune's build account, whose files become the PHP builds root caches and runs; a lab would run its code as that account — %s", name, pickAccount)
	}
	return nil
}

// serviceOf names the service whose data a path is, for the message.
func serviceOf(path string) string {
	switch filepath.Base(path) {
	case "mysql", "mysqld":
		return "MariaDB's data"
	case "postgresql":
		return "PostgreSQL's data"
	case "redis":
		return "Redis's data"
	case "memcached":
		return "memcached's data"
	}
	return "a system service's files"
}
