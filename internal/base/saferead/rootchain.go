package saferead

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxHops bounds the links RootConfig follows.
const maxHops = 8

// RootConfig reads a server's configuration file as root may trust it:
// when the caller is root, only a file of root's that no one else can
// write, in directories only root can write; a link (a conf.d entry into
// mods-available) is followed one hop at a time, each hop a link of
// root's in such directories, at most 8. Following a whole chain at once
// would let an account owning one link of it pick the file root reads.
// Another caller reads what it can, following the same hops unchecked.
// Errors name the path asked for and the hop that failed.
func RootConfig(path string, limit int64) ([]byte, error) {
	b, err := rootConfig(path, limit)
	if err != nil && !strings.HasPrefix(err.Error(), path) && !strings.HasPrefix(err.Error(), "open "+path+":") {
		err = fmt.Errorf("%s, through its links: %w", path, err)
	}
	return b, err
}

func rootConfig(path string, limit int64) ([]byte, error) {
	root := os.Geteuid() == 0
	for hops := 0; ; hops++ {
		if root {
			if u := RootOnlyParents(path); u != nil {
				return nil, fmt.Errorf("%s: %w", path, u)
			}
		}
		st, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			break
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); root && (!ok || sys.Uid != 0) {
			return nil, fmt.Errorf("%s is a link not of root's: not followed", path)
		}
		if hops == maxHops {
			return nil, fmt.Errorf("%s: more than %d links", path, maxHops)
		}
		target, err := os.Readlink(path)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = filepath.Clean(target)
	}
	rule := AnyOwner
	if root {
		rule = MineAlone
	}
	return Whole(path, limit, rule)
}
