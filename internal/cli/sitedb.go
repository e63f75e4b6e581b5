package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// --db, --db-user, --db-host and --db-password-file on lab up --site and
// the stack commands' --site: the site's database named on the command
// line, for an app whose configuration phptune does not read, or whose
// values its code sets.

// The flags' names.
const (
	flagDB, flagDBUser, flagDBHost, flagDBPasswordFile = "db", "db-user", "db-host", "db-password-file"
)

// siteDBHint is the fix that names them.
const siteDBHint = "--db NAME --db-user USER --db-host ADDR --db-password-file FILE"

// maxPasswordFile bounds the password file read.
const maxPasswordFile = 4096

// siteDBFlags are the site's database as the command line names it.
type siteDBFlags struct{ name, user, host, passwordFile string }

func (g *siteDBFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&g.name, flagDB, "", "with --site: the site's database name, when its configuration does not say it (an app phptune does not read, a value set by code)")
	fl.StringVar(&g.user, flagDBUser, "", "with --site: the account the site's app logs in to its database as")
	fl.StringVar(&g.host, flagDBHost, "", "with --site: where the app's database is: localhost (the default socket), 127.0.0.1:3306, or a socket path")
	fl.StringVar(&g.passwordFile, flagDBPasswordFile, "", "with --site: read that account's password from this file (root's, not readable by others) or pipe (<(...)); never from the command line")
}

// given reports whether any of them was given.
func (g siteDBFlags) given() bool {
	return g.name != "" || g.user != "" || g.host != "" || g.passwordFile != ""
}

// names are the flags given, for a refusal.
func (g siteDBFlags) names() []string {
	var out []string
	for _, f := range []struct{ name, v string }{{flagDB, g.name}, {flagDBUser, g.user}, {flagDBHost, g.host}, {flagDBPasswordFile, g.passwordFile}} {
		if f.v != "" {
			out = append(out, "--"+f.name)
		}
	}
	return out
}

// apply puts them in s (site.GiveDB), the password read from its file.
func (g siteDBFlags) apply(s *site.Site) error {
	if !g.given() {
		return nil
	}
	if g.host != "" && strings.ContainsAny(g.host, " \t\r\n\x00") {
		return usageErr("Try: --db-host localhost, --db-host 127.0.0.1:3306 or --db-host /run/mysqld/mysqld.sock", "--db-host %q: not a host", g.host)
	}
	db := site.Database{Name: g.name, User: g.user, Host: g.host}
	if g.passwordFile != "" {
		pw, err := readPasswordFile(g.passwordFile)
		if err != nil {
			return usageErr("Give a file root owns that others cannot read (chown root FILE; chmod 600 FILE), or a pipe: --db-password-file <(cat FILE)", "--db-password-file: %v", err)
		}
		db.Password = site.NewSecret(pw)
	}
	return s.GiveDB(siteHost, db)
}

// readPasswordFile reads a password from path: a pipe the caller handed
// over (<(...): /dev/fd/N, /proc/self/fd/N), or a regular file (or a
// FIFO) that root owns, that only root can write and others cannot read
// (its group may, when that is root's), in directories only root can
// write (root's sticky ones too), reached with no link on the way: a site
// account that can write a directory of the path could otherwise swap in
// a link to another of root's files. The checks are made on the file
// opened. One trailing newline is dropped.
func readPasswordFile(path string) (string, error) {
	f, err := openPasswordFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxPasswordFile {
		return "", fmt.Errorf("%s is longer than %d bytes: not a password", path, maxPasswordFile)
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if pw == "" || strings.ContainsAny(pw, "\n\x00") {
		return "", fmt.Errorf("%s holds no password on one line", path)
	}
	return pw, nil
}

// openPasswordFile opens readPasswordFile's path and checks what it
// opened.
func openPasswordFile(path string) (*os.File, error) {
	if strings.HasPrefix(path, "/dev/fd/") || strings.HasPrefix(path, "/proc/self/fd/") {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			f.Close()
			return nil, fmt.Errorf("%s is not a pipe: give a pipe (<(...)) or a file only root can read", path)
		}
		return f, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if u := saferead.RootOnlyParents(abs); u != nil {
		return nil, fmt.Errorf("%s: %v; keep the password file in a directory only root can write, such as /root", path, u)
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, abs, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	unix.SetNonblock(fd, false)
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	mode := st.Mode()
	switch {
	case !mode.IsRegular() && mode&os.ModeNamedPipe == 0:
		err = fmt.Errorf("%s is neither a regular file nor a pipe", path)
	case !ok || sys.Uid != 0:
		err = fmt.Errorf("%s is not owned by root", path)
	case mode.Perm()&0o026 != 0 || mode.Perm()&0o040 != 0 && sys.Gid != 0:
		err = fmt.Errorf("%s can be read or written by others than root (mode %04o)", path, mode.Perm())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
