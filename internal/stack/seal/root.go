package seal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The seal's file system is built from an allowlist, not made from the
// host's: a fresh tmpfs becomes the root of its mount namespace, and only
// what a lab's programs need is bound into it, read-only:
//
//   - /usr, and /bin, /sbin, /lib* as the host has them (links into /usr
//     on a merged-/usr system, binds otherwise);
//   - a generated /etc: passwd and group with root, nobody and the lab's
//     accounts, hosts (the site's names on the loopback address),
//     resolv.conf naming a resolver on the loopback address, where
//     nothing listens, nsswitch.conf, and, read-only from the host, the
//     entries of etcAllow (CA certificates, PHP's and MariaDB's
//     configuration, nginx's mime.types, the dynamic linker's cache,
//     Debian's alternatives, time zone);
//   - a minimal /dev (null, zero, full, random, urandom, tty bound from the
//     host; fd, stdin, stdout, stderr links; a fresh /dev/shm);
//   - fresh /run and /tmp, and a /proc of the seal's own pid namespace;
//   - what Spec.Binds name (the lab's own directory read-only, the
//     directories its servers write writable, files of the site's PHP
//     configuration outside its root read-only), and the overlay of the
//     docroot, or of the app's root that holds it (Spec.AppRoot), at its
//     real path.
//
// Nothing else of the host exists inside: no /home, /srv, /opt, /var/lib,
// /var/www, no other lab and no other part of phptune's home, so a unix
// socket there (a production php-fpm pool under /var/lib or /var/www,
// production's MariaDB socket wherever it lives, another lab's FastCGI
// socket) cannot be named, let alone connected to. A socket file found
// under the bound /usr/local or /etc entries (hosting panels keep php-fpm
// sockets under /usr/local) is covered with /dev/null.
//
// The plan is made here, on the host, and carried out by the seal's init
// inside its namespaces (init.go), which then pivots into the new root:
// with pivot_root the host's tree is detached from the namespace, not
// merely hidden under the new root as chroot would leave it (a chroot is
// escaped by any process that can chroot again, and leaves the old root
// reachable through the mount namespace's root for every process that
// enters it with setns). Every later process entering the mount namespace
// (nsenter --mount) lands in the new root.

// step is one action of the plan, in order; paths are as seen inside.
type step struct {
	Kind string `json:"kind"` // dir, file, link, bind, tmpfs, overlay, proc, mask, hide
	Path string `json:"path"`
	// Source is a bind's host path, a link's target or an overlay's
	// lower layer.
	Source string `json:"source,omitempty"`
	// Upper and Work are an overlay's layers (host paths).
	Upper string `json:"upper,omitempty"`
	Work  string `json:"work,omitempty"`
	// Data is a file's content, or the options of a tmpfs or proc mount.
	Data string      `json:"data,omitempty"`
	Mode fs.FileMode `json:"mode,omitempty"`
	// ReadOnly, Recursive and Dev qualify a bind: read-only, with the
	// mounts below its source, device nodes usable (only /dev's).
	ReadOnly  bool `json:"ro,omitempty"`
	Recursive bool `json:"rec,omitempty"`
	Dev       bool `json:"dev,omitempty"`
	// Dir says a bind's source is a directory (its mount point is one).
	Dir bool `json:"isdir,omitempty"`
}

// rootTops are the top-level entries of the host's tree the seal carries:
// /usr and the directories or links a merged or unmerged /usr keeps at /.
var rootTops = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcAllow are the host's /etc entries bound read-only inside, when they
// exist: what the lab's programs and PHP read (the dynamic linker's
// cache, Debian's alternatives links, the time zone, CA certificates and
// OpenSSL's configuration, PHP's and MariaDB's configuration directories,
// nginx's mime.types, which the lab's nginx.conf includes, libmagic's and
// fontconfig's and ImageMagick's configuration for the PHP extensions
// that use them). No socket is expected there; any found is covered.
var etcAllow = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/timezone", "/etc/os-release",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates",
	"/etc/php", "/etc/mysql", "/etc/nginx/mime.types", "/etc/mime.types",
	"/etc/services", "/etc/protocols", "/etc/magic", "/etc/magic.mime",
	"/etc/fonts", "/etc/ImageMagick-6", "/etc/ImageMagick-7",
}

// devNodes are the host's device nodes bound into the seal's /dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// socketScanLimit bounds the walk of a bound directory for sockets; a
// directory with more entries than this is covered whole instead (an
// empty read-only tmpfs), so a lab's start never waits on a huge tree.
const socketScanLimit = 50000

// Account is an account that exists inside a seal: its passwd and group
// lines are written into the seal's /etc.
type Account struct {
	Name     string
	UID, GID int
}

// plan is the seal's file system, built from spec.
func plan(spec Spec) ([]step, error) {
	steps, err := hostTreeSteps()
	if err != nil {
		return nil, err
	}
	etc, err := etcSteps(spec)
	if err != nil {
		return nil, err
	}
	steps = append(steps, etc...)

	steps = append(steps,
		step{Kind: "tmpfs", Path: "/dev", Data: "mode=0755,nosuid,noexec,size=64k"},
		step{Kind: "tmpfs", Path: "/dev/shm", Data: "mode=1777,nosuid,nodev"},
		step{Kind: "link", Path: "/dev/fd", Source: "/proc/self/fd"},
		step{Kind: "link", Path: "/dev/stdin", Source: "/proc/self/fd/0"},
		step{Kind: "link", Path: "/dev/stdout", Source: "/proc/self/fd/1"},
		step{Kind: "link", Path: "/dev/stderr", Source: "/proc/self/fd/2"},
	)
	for _, n := range devNodes {
		p := "/dev/" + n
		if st, err := os.Stat(p); err == nil && st.Mode()&fs.ModeCharDevice != 0 {
			steps = append(steps, step{Kind: "bind", Path: p, Source: p, Dev: true})
		}
	}
	steps = append(steps,
		// /var/run is /run, as everywhere (PHP's default MariaDB socket
		// is /var/run/mysqld/mysqld.sock on Debian).
		step{Kind: "link", Path: "/var/run", Source: "/run"},
		step{Kind: "tmpfs", Path: "/run", Data: coveredMode["/run"] + ",nosuid,nodev"},
		step{Kind: "tmpfs", Path: "/tmp", Data: coveredMode["/tmp"] + ",nosuid,nodev"},
		step{Kind: "proc", Path: "/proc", Data: "hidepid=invisible"},
	)

	binds := append([]Bind{}, spec.Binds...)
	// A bind below another's target (a writable log/ inside the lab's
	// read-only directory) comes after it, whatever order the caller
	// gave.
	sort.SliceStable(binds, func(i, j int) bool { return depth(binds[i].Target) < depth(binds[j].Target) })
	for _, b := range binds {
		st, err := os.Lstat(b.Source)
		if err != nil {
			return nil, fmt.Errorf("the bind mount source %s: %v; create it before sealing", b.Source, err)
		}
		steps = append(steps, step{Kind: "bind", Path: b.Target, Source: b.Source, ReadOnly: b.ReadOnly, Dir: st.IsDir()})
	}
	for _, h := range spec.Hide {
		steps = append(steps, step{Kind: "hide", Path: h})
	}
	for _, l := range spec.Links {
		steps = append(steps, step{Kind: "link", Path: l.Path, Source: l.Target})
	}
	if o := spec.overlaid(); o != "" {
		s := &Seal{Dir: spec.Dir}
		steps = append(steps, step{Kind: "overlay", Path: o, Source: o, Upper: s.UpperDir(), Work: filepath.Join(s.overlayDir(), "work")})
	}
	return steps, nil
}

// hostTreeSteps carry the host's programs: /usr, and /bin, /sbin, /lib*
// as links or read-only binds as the host has them, with every socket
// under /usr/local covered.
func hostTreeSteps() ([]step, error) {
	var steps []step
	for _, top := range rootTops {
		st, err := os.Lstat(top)
		if err != nil {
			continue
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(top)
			if err != nil {
				return nil, fmt.Errorf("reading the link %s: %v", top, err)
			}
			steps = append(steps, step{Kind: "link", Path: top, Source: target})
		case st.IsDir():
			steps = append(steps, step{Kind: "bind", Path: top, Source: top, ReadOnly: true, Recursive: true, Dir: true})
		}
	}
	if len(steps) == 0 || steps[0].Path != "/usr" {
		return nil, errors.New("this host has no /usr directory; a seal carries the host's programs from /usr")
	}
	masks, err := socketsUnder("/usr/local")
	if err != nil {
		return nil, err
	}
	steps = append(steps, masks...)
	return steps, nil
}

// etcSteps make the seal's /etc: the generated files, the mtab link, and
// the entries of etcAllow the host has, read-only, with every socket in
// them covered.
func etcSteps(spec Spec) ([]step, error) {
	steps := []step{{Kind: "dir", Path: "/etc", Mode: 0o755}}
	etc := generatedEtc(spec)
	names := make([]string, 0, len(etc))
	for name := range etc {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		steps = append(steps, step{Kind: "file", Path: "/etc/" + name, Data: etc[name], Mode: 0o644})
	}
	steps = append(steps, step{Kind: "link", Path: "/etc/mtab", Source: "../proc/self/mounts"})
	for _, p := range etcAllow {
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, fmt.Errorf("reading the link %s: %v", p, err)
			}
			steps = append(steps, step{Kind: "link", Path: p, Source: target})
		case st.IsDir() || st.Mode().IsRegular():
			if err := rootOwnedParents(p); err != nil {
				continue // not root's to give: left out
			}
			steps = append(steps, step{Kind: "bind", Path: p, Source: p, ReadOnly: true, Dir: st.IsDir()})
			if st.IsDir() {
				masks, err := socketsUnder(p)
				if err != nil {
					return nil, err
				}
				steps = append(steps, masks...)
			}
		}
	}
	return steps, nil
}

// depth is the number of elements of a clean absolute path.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// generatedEtc are the files the seal writes into its /etc, by name.
func generatedEtc(spec Spec) map[string]string {
	var passwd, group strings.Builder
	passwd.WriteString("root:x:0:0:root:/root:/usr/sbin/nologin\n")
	group.WriteString("root:x:0:\n")
	seenU, seenG := map[int]bool{0: true}, map[int]bool{0: true}
	for _, a := range spec.Accounts {
		if !seenU[a.UID] {
			seenU[a.UID] = true
			fmt.Fprintf(&passwd, "%s:x:%d:%d::/nonexistent:/usr/sbin/nologin\n", a.Name, a.UID, a.GID)
		}
		if !seenG[a.GID] {
			seenG[a.GID] = true
			fmt.Fprintf(&group, "%s:x:%d:\n", groupName(a), a.GID)
		}
	}
	const nobody = 65534
	if !seenU[nobody] {
		passwd.WriteString("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
	}
	if !seenG[nobody] {
		group.WriteString("nogroup:x:65534:\n")
	}
	return map[string]string{
		"passwd":        passwd.String(),
		"group":         group.String(),
		"hosts":         hostsFile(spec.Hosts, spec.Served),
		"hostname":      "localhost\n",
		"resolv.conf":   "# Written by phptune: a sealed lab resolves no name but its own (hosts);\n# queries go to the loopback address, where nothing answers.\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
		"nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n",
	}
}

// groupName is the name of a's group on the host, else the account's
// own name.
func groupName(a Account) string {
	if g, err := user.LookupGroupId(strconv.Itoa(a.GID)); err == nil && g.Name != "" && validName(g.Name) {
		return g.Name
	}
	return a.Name
}

// validName reports whether n can stand in a passwd or group line.
func validName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, r := range n {
		if r <= ' ' || r == ':' || r == 0x7f || r == '/' {
			return false
		}
	}
	return true
}

// socketsUnder are the steps that cover every unix socket file under dir
// with /dev/null (connect() then fails, the path is not a socket), or
// dir itself with an empty tmpfs when it holds more than socketScanLimit
// entries.
func socketsUnder(dir string) ([]step, error) {
	var out []step
	n := 0
	tooMany := errors.New("too many")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: nothing to see inside either
		}
		n++
		if n > socketScanLimit {
			return tooMany
		}
		if d.Type()&fs.ModeSocket != 0 {
			out = append(out, step{Kind: "mask", Path: p})
		}
		return nil
	})
	if errors.Is(err, tooMany) {
		return []step{{Kind: "hide", Path: dir}}, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("looking for sockets under %s: %v", dir, err)
	}
	return out, nil
}
