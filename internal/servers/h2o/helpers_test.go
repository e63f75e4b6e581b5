package h2o

import "os"

// Functions only this package's tests use.

// Installed reports whether Debian's h2o binary is present (tests skip
// without it).
func Installed() bool {
	_, err := os.Stat("/usr/bin/h2o")
	return err == nil
}
