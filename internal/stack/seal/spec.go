package seal

import (
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
)

// Spec is what a seal is made of. Every path is absolute and clean.
type Spec struct {
	// Dir is the seal's directory: created root-owned, mode 0711, if it
	// does not exist; it holds the namespace files, the private hosts file
	// and the overlay's layers. It must not be under /run, /tmp or
	// /dev/shm, which are replaced inside, so that what the lab keeps
	// beside it (a unix socket its web server listens on) is the same file
	// on both sides.
	Dir string
	// Hosts are names that resolve to 127.0.0.1 inside, beside
	// localhost: the site's own names, so its calls to itself (WP-cron,
	// REST) reach the lab's web server.
	Hosts []string
	// Binds are mounted inside after the seal's own root is built (its
	// allowlist: root.go), parents before what lies below them: they are
	// the only places of the host's file system, beside the allowlist,
	// that a lab sees (its own directory, read-only), can write to (its
	// data directory, logs and sockets: bind each at its own path) or
	// reach at another path (the lab's MariaDB socket directory at
	// /run/mysqld).
	Binds []Bind
	// Links are symbolic links made inside, after the binds: a path the
	// app's configuration names for a server (a MariaDB socket outside
	// /run/mysqld) leading to the lab's own (/run/mysqld/mysqld.sock).
	// A link's path lies in the seal's own root (not in /proc, /dev,
	// /etc, /usr, the links to it, /var/run, a bind, the overlaid
	// directory or the seal's directory), so it is made in the seal's
	// tmpfs and never on the host.
	Links []Link
	// Hide are further directories covered inside with an empty,
	// read-only tmpfs, when they exist there (a directory inside a
	// bind that holds what the lab must not reach).
	Hide []string
	// Accounts exist inside: the seal's /etc/passwd and /etc/group name
	// them (beside root and nobody). A lab's own account belongs here.
	Accounts []Account
	// Start, when set, starts the seal's init in place of cmd.Start: the
	// caller's way to put it in the lab's cgroup. The init is the seal's
	// pid namespace: it must live as long as the lab.
	Start func(*exec.Cmd) error
	// Docroot, when set, is a directory mounted inside at its own path as
	// an overlay: itself as the read-only lower layer, Dir/overlay/upper
	// as the upper one.
	Docroot string
	// AppRoot, when set, is overlaid in Docroot's place, the same way:
	// the app's root, a directory that holds Docroot (the code and
	// configuration above a public/ docroot: approot.go). It must pass
	// CheckAppRoot.
	AppRoot string
	// Own are the lab's own listeners: connections to them are not
	// counted as attempts to leave. Each is on a loopback address or on
	// one of Served's.
	Own []netip.AddrPort
	// Served are the addresses of other machines the seal answers at
	// (served.go): the lab's servers listen there in their place.
	Served []Served
	// Refuse are directories a Code bind may neither lie in nor hold,
	// beside codeRefused's: a lab passes phptune's home (every lab).
	Refuse []string
}

// Bind mounts Source (a file or directory of the host) at Target inside,
// writable unless ReadOnly (and as far as its permissions let). The
// target is created in the seal's root, unless it lies under a read-only
// bind, in which it must exist.
type Bind struct {
	Source, Target string
	ReadOnly       bool
	// Code marks the site's own code outside its overlaid app root (an
	// include_path directory, a prepend file): it must be ReadOnly, at
	// its own path, and pass CheckCodeSource (with Spec.Refuse) when
	// the seal is made — a read-only bind does not stop connect() to a
	// socket inside it.
	Code bool
}

// Link is a symbolic link at Path inside the seal, to Target (a path as
// seen inside).
type Link struct {
	Path, Target string
}

// linkRefused are the places a Spec.Links path must not lie in: the
// seal's read-only allowlist, and the links of its root (a directory made
// under one would be made through it, on the host).
var linkRefused = []string{"/proc", "/dev", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var/run"}

// overlaid is the directory the seal mounts as an overlay: the app's
// root when set, else the docroot ("" for none).
func (s Spec) overlaid() string {
	if s.AppRoot != "" {
		return s.AppRoot
	}
	return s.Docroot
}

// covered are the directories replaced by a fresh, writable tmpfs
// inside: where the host keeps its sockets (/run, /tmp) and its POSIX
// shared memory (/dev/shm).
var covered = []string{"/run", "/tmp", "/dev/shm"}

// coveredMode is each covered directory's mode.
var coveredMode = map[string]string{"/run": "mode=0755", "/tmp": "mode=1777", "/dev/shm": "mode=1777"}

// check validates a spec without touching the file system: absolute, clean
// paths without characters mount options would split on, a docroot and a
// directory outside /run and /tmp, host names that are names.
func (s Spec) check() error {
	if err := checkPath("the seal's directory", s.Dir); err != nil {
		return err
	}
	if under(s.Dir, covered...) {
		return fmt.Errorf("the seal's directory %s is under /run, /tmp or /dev/shm, which the seal replaces inside; put it elsewhere (a lab's directory under /var/lib/phptune)", s.Dir)
	}
	if s.Docroot != "" {
		if err := checkPath("the docroot", s.Docroot); err != nil {
			return err
		}
		if s.Docroot == "/" || under(s.Docroot, covered...) || under(s.Docroot, s.Dir) || under(s.Dir, s.Docroot) {
			return fmt.Errorf("the docroot %s cannot be sealed: it must not be /, under /run, /tmp or /dev/shm, nor hold or be inside the seal's directory %s; name the site's own directory", s.Docroot, s.Dir)
		}
	}
	if s.AppRoot != "" {
		if s.Docroot == "" || !under(s.Docroot, s.AppRoot) {
			return fmt.Errorf("the app's root %s does not hold the docroot %q; an app's root is the directory above its docroot that holds its code", s.AppRoot, s.Docroot)
		}
		if err := CheckAppRoot(s.AppRoot); err != nil {
			return fmt.Errorf("the app's root cannot be sealed: %v; seal the docroot alone", err)
		}
		if under(s.AppRoot, s.Dir) || under(s.Dir, s.AppRoot) {
			return fmt.Errorf("the app's root %s cannot be sealed: it must neither hold nor be inside the seal's directory %s", s.AppRoot, s.Dir)
		}
	}
	for _, b := range s.Binds {
		if err := checkPath("a bind mount's source", b.Source); err != nil {
			return err
		}
		if err := checkPath("a bind mount's target", b.Target); err != nil {
			return err
		}
		if under(b.Source, covered...) {
			return fmt.Errorf("the bind mount source %s is under /run, /tmp or /dev/shm, which the seal replaces before it binds; keep what the lab shares in its own directory", b.Source)
		}
		if b.Target == "/" {
			return fmt.Errorf("a bind mount onto / would replace the whole file system; name a directory or file to cover")
		}
		if under(b.Target, "/proc", "/dev", "/etc", "/usr") {
			return fmt.Errorf("the bind mount target %s is in the seal's own /proc, /dev, /etc or /usr; bind the lab's files at their own paths", b.Target)
		}
		if b.Code && (!b.ReadOnly || b.Source != b.Target) {
			return fmt.Errorf("the site's code %s must be bound read-only at its own path (bound at %s, read-only %v): the app finds it where production has it, and must not change it", b.Source, b.Target, b.ReadOnly)
		}
		if o := s.overlaid(); b.Code && o != "" && (under(b.Source, o) || under(o, b.Source)) {
			return fmt.Errorf("the site's code %s and the overlaid %s overlap: code inside the app's root is in its overlay already, and a bind holding it would show the rest of that directory", b.Source, o)
		}
	}
	for _, l := range s.Links {
		if err := checkPath("a link's path", l.Path); err != nil {
			return err
		}
		if err := checkPath("a link's target", l.Target); err != nil {
			return err
		}
		if l.Path == "/" || under(l.Path, linkRefused...) {
			return fmt.Errorf("the link %s would lie in the seal's /proc, /dev, /etc, /usr, /bin, /sbin, /lib* or /var/run; a link is made in the seal's own root", l.Path)
		}
		if o := s.overlaid(); under(l.Path, s.Dir) || (o != "" && under(l.Path, o)) {
			return fmt.Errorf("the link %s would lie in the seal's directory or the overlaid %s; a link is made in the seal's own root", l.Path, o)
		}
		for _, b := range s.Binds {
			if under(l.Path, b.Target) || under(b.Target, l.Path) {
				return fmt.Errorf("the link %s and the bind mount at %s overlap; a link is made in the seal's own root, never in a directory of the host", l.Path, b.Target)
			}
		}
	}
	for _, a := range s.Accounts {
		if !validName(a.Name) || a.UID <= 0 || a.GID <= 0 {
			return fmt.Errorf("the account %q (uid %d, gid %d) cannot be written into the seal's /etc/passwd: a name without ':' or '/', and ids other than root's", a.Name, a.UID, a.GID)
		}
	}
	for _, h := range s.Hide {
		if err := checkPath("a hidden directory", h); err != nil {
			return err
		}
		if h == "/" {
			return fmt.Errorf("hiding / would hide the whole file system; name the directory that holds the host's sockets")
		}
	}
	for _, h := range s.Hosts {
		if !hostName(h) {
			return fmt.Errorf("%q is not a host name (letters, digits, '-' and '.'); pass the site's name as its server_name has it", h)
		}
	}
	if err := s.checkServed(); err != nil {
		return err
	}
	for _, a := range s.Own {
		if !a.IsValid() || !a.Addr().IsLoopback() && !s.serves(a.Addr()) {
			return fmt.Errorf("%v is not a loopback address and port, nor one the seal answers at for another machine (Served); the lab's own listeners are on 127.0.0.1 or ::1", a)
		}
	}
	return nil
}

// checkPath refuses a relative or unclean path, and one holding a comma,
// colon, backslash, space or control character (mount options and the
// overlay's layer list would split on them).
func checkPath(what, p string) error {
	if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("%s %q is not an absolute, clean path (no .., no trailing /); pass the full path", what, p)
	}
	for _, r := range p {
		if r <= ' ' || r == 0x7f || r == ',' || r == ':' || r == '\\' {
			return fmt.Errorf("%s %q holds %q, which mount options cannot carry; use a path without it", what, p, r)
		}
	}
	return nil
}

// under reports whether p is one of dirs or inside one of them.
func under(p string, dirs ...string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// hostName reports whether h is a DNS name: labels of letters, digits and
// '-', separated by dots.
func hostName(h string) bool {
	if h == "" || len(h) > 253 || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return false
	}
	for _, r := range h {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}
