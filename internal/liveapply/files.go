package liveapply

import (
	"os"
	"path/filepath"

	"github.com/phptune/phptune/internal/saferead"
	"github.com/phptune/phptune/internal/safewrite"
)

// writeFileAtomic writes data to path with package safewrite (temporary
// file refusing links, mode and owner, fsync, rename, directory fsync),
// making its directory first. uid/gid -1 keep this process's.
func writeFileAtomic(path string, data []byte, mode os.FileMode, uid, gid int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return safewrite.Write(path, data, mode, uid, gid)
}

// readRegular reads a regular file without following a link at its last
// component, up to limit bytes (more is an error).
func readRegular(path string, limit int64) ([]byte, error) {
	return saferead.Whole(path, limit, saferead.AnyOwner)
}
