package caddy

import "os"

// Functions only this package's tests use.

// Installed reports whether Debian's caddy binary is present (tests skip
// without it).
func Installed() bool {
	_, err := os.Stat("/usr/bin/caddy")
	return err == nil
}
