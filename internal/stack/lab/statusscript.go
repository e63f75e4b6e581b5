package lab

import (
	"path/filepath"

	"github.com/phptune/phptune/internal/servers/status/phpstatus"
)

// The runtime status script (phpstatus.Script): a PHP file phptune writes
// (root-owned, in the root-owned status/ directory the pool can read but
// not write, outside the docroot so nginx never serves it) and requests
// over FastCGI straight from php-fpm. It prints the counters the tuner
// sizes the caches from: opcache_get_status() (memory, interned strings,
// cached scripts, restarts, the JIT buffer), opcache's directives, and the
// worker's realpath cache. What it prints comes from a process that runs
// the lab's app, so readers treat it as untrusted input (bounded size,
// numbers checked).

// statusDir is the root-owned directory of the status script.
const statusDir = "status"

// statusScriptName is the script's file name in statusDir.
const statusScriptName = "phptune-status.php"

// writeStatusScript writes the status script into the root-owned status/
// directory, readable by the lab's account.
func (l *Lab) writeStatusScript(acct *account) error {
	y := layout{l.Dir}
	if err := mkdirOwned(y.p(statusDir), -1, acct.group(), acct.readDirMode()); err != nil {
		return err
	}
	return writeOwned(y.p(statusDir, statusScriptName), []byte(phpstatus.Script), acct.readFileMode(), acct.group())
}

// StatusScript is the path of the lab's runtime status script, for a
// FastCGI request's SCRIPT_FILENAME (see the tuner's runtime reader).
func (l *Lab) StatusScript() string {
	return filepath.Join(l.Dir, statusDir, statusScriptName)
}
