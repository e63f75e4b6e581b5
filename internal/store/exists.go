package store

import "os"

// Exists reports whether a results database is at path, so that a
// command that only reads runs need not create an empty one.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
