package lab

import (
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/phptune/phptune/internal/stack/seal"
)

// phpRootsDir is where phptune php add keeps PHP roots (package phproot:
// HOME/php-roots/VERSION/root, Debian 13's tree holding its php-fpm).
func phpRootsDir() string { return filepath.Join(Home(), "php-roots") }

// phpRootBinds are the PHP roots a sealed lab sees, read-only at their own
// paths, so that php.build=debian-8.4 runs inside the seal as outside it
// (the root's loader, libraries and extensions by absolute path), whenever
// a trial switches to it. Only complete roots are bound: a directory
// VERSION/root of root's, writable by root alone, not a link (a
// half-made one is a .work- directory and is never seen).
func phpRootBinds() []seal.Bind {
	dirs, _ := filepath.Glob(filepath.Join(phpRootsDir(), "*", "root"))
	sort.Strings(dirs)
	var out []seal.Bind
	for _, d := range dirs {
		if filepath.Base(filepath.Dir(d))[0] == '.' || !rootOwnedDir(d) || !rootOwnedDir(filepath.Dir(d)) {
			continue
		}
		out = append(out, seal.Bind{Source: d, Target: d, ReadOnly: true})
	}
	return out
}

// rootOwnedDir says whether p is a directory (not a link) of root's that
// no one else may write.
func rootOwnedDir(p string) bool {
	st, err := os.Lstat(p)
	if err != nil || !st.IsDir() || st.Mode().Perm()&0o022 != 0 {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && sys.Uid == 0
}
