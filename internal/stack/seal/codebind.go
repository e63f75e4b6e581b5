package seal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// A site's code does not always lie in its app's root: php.ini or the
// pool can name include_path directories (a PEAR tree in /opt, a shared
// library of a hosting company) and auto_prepend_file / auto_append_file
// files elsewhere. Inside the seal such paths would not exist, and the
// site would fail or silently differ. A site lab binds each read-only at
// its own path — what production runs, no copy to go stale, no write
// possible — when CheckCodeSource allows it, and refuses otherwise.
//
// A read-only bind does not stop connect() on a unix socket inside it
// (nor open() of a FIFO for writing): a bound directory must hold
// neither, and since a production process could make one there later,
// every directory in it must be root's and writable by no one else.

// codeRefused are the directories a code bind may neither lie in nor
// hold: what the seal replaces (/run, /tmp, /dev/shm) or generates
// (/etc), the kernel's file systems, production's MariaDB datadir and
// root's home.
var codeRefused = []string{"/run", "/var/run", "/tmp", "/dev/shm", "/proc", "/sys", "/dev", "/etc", "/boot", "/root", "/var/lib/mysql"}

// CheckCodeSource says why path, a file or directory of the site's code
// outside its app's root, cannot be bound read-only into a seal; refuse
// are more directories it must neither lie in nor hold (phptune's home,
// which holds every lab). nil means it may be bound. It refuses:
//
//   - a path in or above codeRefused or refuse (binding /var/lib would
//     show production's datadir);
//   - a source another account could swap (CheckBindSource) or a link;
//   - a directory that is a system directory or a home (CheckAppRoot:
//     /usr/local, /opt, /home/alice show far more than code);
//   - a directory holding a unix socket, a FIFO or a device, one of more
//     than socketScanLimit entries, or one with a directory in it that is
//     not root's or that others can write (a socket could be made there
//     after the check);
//   - anything but a regular file or a directory.
func CheckCodeSource(path string, refuse ...string) error {
	return checkCode(path, append(append([]string{}, codeRefused...), refuse...))
}

func checkCode(path string, refused []string) error {
	if err := checkPath("a file of the site's code", path); err != nil {
		return err
	}
	for _, r := range refused {
		if under(path, r) {
			return fmt.Errorf("%s lies in %s, which the lab must not see", path, r)
		}
		if under(r, path) {
			return fmt.Errorf("%s holds %s, which the lab must not see", path, r)
		}
	}
	if err := CheckBindSource(path); err != nil {
		return err
	}
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	switch {
	case st.Mode().IsRegular():
		return nil
	case !st.IsDir():
		return fmt.Errorf("%s is a %v, not a file or directory of code", path, st.Mode().Type())
	}
	if err := CheckAppRoot(path); err != nil {
		return fmt.Errorf("%s is not a directory of the site's own code: %v", path, err)
	}
	n := 0
	errStop := errors.New("stop")
	var found error
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n++
		if n > socketScanLimit {
			found = fmt.Errorf("%s holds more than %d entries: too many to check for sockets", path, socketScanLimit)
			return errStop
		}
		t := d.Type()
		switch {
		case t&fs.ModeSocket != 0:
			found = fmt.Errorf("%s holds a unix socket, %s: a read-only bind does not stop connect() to it", path, p)
		case t&fs.ModeNamedPipe != 0:
			found = fmt.Errorf("%s holds a FIFO, %s: a read-only bind does not stop a write to it", path, p)
		case t&fs.ModeDevice != 0:
			found = fmt.Errorf("%s holds a device, %s", path, p)
		case t.IsDir():
			info, err := d.Info()
			if err != nil {
				return err
			}
			sys, ok := info.Sys().(*syscall.Stat_t)
			if !ok {
				return fmt.Errorf("%s: no owner to check", p)
			}
			if sys.Uid != 0 || info.Mode().Perm()&0o022 != 0 {
				found = fmt.Errorf("%s holds the directory %s, which an account other than root can write (owner uid %d, mode %v): a socket could be made there after this check", path, p, sys.Uid, info.Mode().Perm())
			}
		}
		if found != nil {
			return errStop
		}
		return nil
	})
	if found != nil {
		return found
	}
	if err != nil {
		return fmt.Errorf("checking %s for sockets: %v", path, err)
	}
	return nil
}
