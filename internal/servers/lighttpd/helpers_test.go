package lighttpd

import "os"

// Functions only this package's tests use.

// Installed reports whether Debian's lighttpd binary is present (tests
// skip without it).
func Installed() bool {
	_, err := os.Stat("/usr/sbin/lighttpd")
	return err == nil
}
