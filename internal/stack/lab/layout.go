package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// layout names the files of a lab below its directory, and says who owns
// each. Run as root, the lab directory and everything root later reads,
// runs or writes (configs, state, secrets, the database snapshot, the
// servers' stdout captures, the app's code) belong to root; the stack
// account only reads them (group phptune, mode 0640/0750). The stack account
// owns just the directories a server must write: run (sockets, pid files),
// log (the servers' own logs), tmp, mysql (MariaDB's datadir) and the app's
// upload directory. Root reads those only through openLabFile.
type layout struct{ dir string }

func (y layout) p(parts ...string) string { return filepath.Join(append([]string{y.dir}, parts...)...) }
func (y layout) fpmSocket() string        { return y.fpmPoolSocket(0) }
func (y layout) dbSocket() string         { return y.p("run", "mariadb.sock") }
func (y layout) snapshot() string         { return y.p("db-snapshot.sql") }
func (y layout) clientConf() string       { return y.p("client.cnf") }

// fpmPoolSocket is pool i's socket (from 0; see knob.PoolsKnob): the
// first pool's is php-fpm.sock, the others' php-fpm-2.sock and on.
func (y layout) fpmPoolSocket(i int) string {
	if i == 0 {
		return y.p(fpmDir, "php-fpm.sock")
	}
	return y.p(fpmDir, fmt.Sprintf("php-fpm-%d.sock", i+1))
}

// fpmDir ("fpm") holds php-fpm's socket, pid file and log.
const fpmDir = "fpm"

// writableDirs are the directories the stack account owns.
var writableDirs = []string{"run", "log", "tmp", unitStateDir}

// readableDirs are root-owned directories the stack reads: php.ini
// overrides, the app's rendered configuration, the built-in app's code, and
// the servers' stdout captures (root only).
var readableDirs = []string{"php", "app", "www"}

const outDir = "out" // root-only: stdout and stderr of every process started

// logFile is one log of a component: in log/ (written by the server itself,
// lab-writable) or out/ (its stdout, captured through a file root opened).
type logFile struct {
	dir, name string
}

func (f logFile) path() string { return filepath.Join(f.dir, f.name) }

// logFiles maps a component to its log files.
func (y layout) logFiles(component string) []logFile {
	lg, out := y.p("log"), y.p(outDir)
	switch component {
	case "nginx":
		return []logFile{{lg, "nginx-error.log"}, {out, "nginx.out"}}
	case "apache":
		return []logFile{{lg, "apache-error.log"}, {out, "apache.out"}}
	case "unit":
		return []logFile{{lg, "unit.log"}, {out, "unit.out"}}
	case "lighttpd":
		return []logFile{{lg, "lighttpd-error.log"}, {out, "lighttpd.out"}}
	case "caddy":
		return []logFile{{lg, "caddy.log"}, {out, "caddy.out"}}
	case "h2o":
		return []logFile{{lg, "h2o-error.log"}, {out, "h2o.out"}}
	case "php-fpm":
		return []logFile{{y.p(fpmDir), "php-fpm.log"}, {out, "php-fpm.out"}}
	case "mariadb":
		return []logFile{{lg, "mariadb.log"}, {out, "mariadb.out"}}
	case "redis", "memcached":
		// A site lab's own caches log to their standard output.
		return []logFile{{out, component + ".out"}}
	case "app":
		return []logFile{{out, "app-install.out"}}
	}
	return nil
}

// outFile is where a component's stdout and stderr go: a root-owned file in
// the root-only out/ directory, opened by root and handed to the child as a
// descriptor, so the child never needs (or gets) the path.
func (y layout) outFile(component string) string {
	return y.p(outDir, component+".out")
}

// makeDirs creates the lab's subdirectories with their owners.
func (y layout) makeDirs(acct *account) error {
	uid, gid := acct.ids()
	for _, d := range append(writableDirs, fpmDir) {
		if err := mkdirOwned(y.p(d), uid, gid, 0o700); err != nil {
			return err
		}
	}
	for _, d := range readableDirs {
		if err := mkdirOwned(y.p(d), -1, acct.group(), acct.readDirMode()); err != nil {
			return err
		}
	}
	return mkdirOwned(y.p(outDir), -1, -1, 0o700)
}

// openOut opens (appending, creating) a component's stdout capture.
func (y layout) openOut(component string) (*os.File, error) {
	return os.OpenFile(y.outFile(component), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_CLOEXEC|noFollow, 0o600)
}
