package liveapply

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SaveBeside writes data as name into transaction j's private directory
// under the apply home (a patch printed for the user, say) and returns
// its path. name is a plain file name.
func SaveBeside(opt Options, j *Journal, name string, data []byte) (string, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." || name == "journal.json" || strings.HasPrefix(name, "saved-") {
		return "", fmt.Errorf("liveapply: %q is not a file name for a transaction's directory", name)
	}
	path := filepath.Join(store{opt.Home}.journalDir(j.ID), name)
	if err := writeFileAtomic(path, data, 0o600, -1, -1); err != nil {
		return "", err
	}
	return path, nil
}
