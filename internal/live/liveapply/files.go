package liveapply

import (
	"os"
	"path/filepath"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/base/safewrite"
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

// readOwn reads a regular file of this user's (a journal or a saved
// copy: undo trusts what they say), as readRegular.
func readOwn(path string, limit int64) ([]byte, error) {
	return saferead.Whole(path, limit, saferead.Mine)
}
