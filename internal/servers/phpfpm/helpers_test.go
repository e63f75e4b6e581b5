package phpfpm

import "os"

// Functions only this package's tests use.

// Exists reports whether path exists (used to wait for sockets).
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
