package seal

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// An app's code often lies above its docroot: a Laravel or Symfony app
// served from /srv/app/public keeps its code, vendor/ and .env in
// /srv/app, and WordPress finds wp-config.php one directory up. The seal
// then overlays the app's root (Spec.AppRoot), the directory that holds
// both, in place of the docroot alone. An app root is a directory of the
// site, never one of the system's: overlaying /srv or /var/www would show
// the lab every other site there, and a home directory everything of its
// account.

// systemDirs are directories that hold more than one site or the
// system's own files: never an app's root.
var systemDirs = []string{
	"/", "/srv", "/var", "/var/www", "/home", "/opt", "/usr",
	"/srv/www", "/srv/http", "/var/lib", "/var/cache", "/var/log", "/var/spool", "/var/tmp",
	"/var/mail", "/var/opt", "/var/backups", "/var/local",
	"/usr/lib", "/usr/share", "/usr/local", "/usr/local/lib", "/usr/local/share",
}

// passwdFile is where the host's accounts are read (their home
// directories are no app root).
var passwdFile = "/etc/passwd"

// CheckAppRoot says why dir cannot be overlaid as an app's root: a
// system directory (systemDirs), one with fewer than two path elements
// (/srv), one directly in /home (a user's home), or an account's home
// directory as the host's /etc/passwd names it. nil means it may be.
func CheckAppRoot(dir string) error {
	if err := checkPath("the app's root", dir); err != nil {
		return err
	}
	for _, d := range systemDirs {
		if dir == d {
			return fmt.Errorf("%s is a system directory, not an app's own", dir)
		}
	}
	if depth(dir) < 2 {
		return fmt.Errorf("%s is a top-level directory, not an app's own", dir)
	}
	if filepath.Dir(dir) == "/home" {
		return fmt.Errorf("%s is a user's home directory, not an app's own", dir)
	}
	if name := homeOf(dir); name != "" {
		return fmt.Errorf("%s is the home directory of the account %s, not an app's own", dir, name)
	}
	if under(dir, "/proc", "/sys", "/dev", "/etc", "/boot") {
		return fmt.Errorf("%s is in the system's %s, not an app's own", dir, "/"+strings.Split(dir, "/")[1])
	}
	return nil
}

// homeOf is the account whose home directory is dir, "" for none (or
// when the host's passwd cannot be read).
func homeOf(dir string) string {
	f, err := os.Open(passwdFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 6 && fields[5] != "" && filepath.Clean(fields[5]) == dir {
			return fields[0]
		}
	}
	return ""
}
