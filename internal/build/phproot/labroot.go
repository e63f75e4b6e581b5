package phproot

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/stack/lab"
)

// A PHP root (package phproot: Debian 13's own php8.4-fpm, made by
// phptune php add 8.4) runs in a lab as php.build=debian-8.4. Its binaries
// need Debian 13's C library, so the lab starts them through the root's
// own dynamic loader with the root's library directories as the only
// search path (for php-fpm and every extension it loads): the process
// runs on this host's file system (the docroot, the lab's sockets and
// logs where they are) with Debian 13's code. It is given Debian 13's
// php.ini (-c), and its extensions — those Debian 13's conf.d enables in
// the root — by absolute path, in place of any conf.d.

// RootBuildPrefix begins the php.build value of a PHP root:
// "debian-8.4".
const RootBuildPrefix = "debian-"

// BuildVersion is the release a php.build value names as a PHP root:
// "debian-8.4" or "8.4" give "8.4"; ok is false for anything else (a
// build of phptune's, "distro").
func BuildVersion(v string) (string, bool) {
	v = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(v)), RootBuildPrefix)
	if _, err := CheckVersion(v); err != nil {
		return "", false
	}
	return v, true
}

// Validate accepts the php.build value of a made PHP root (BuildVersion),
// returning its canonical form ("debian-8.4").
func Validate(v string) (string, error) {
	version, ok := BuildVersion(v)
	if !ok {
		return "", fmt.Errorf("%q names no PHP root", v)
	}
	if _, err := Find(lab.Home(), version); err != nil {
		return "", err
	}
	return RootBuildPrefix + version, nil
}

// ForLab resolves the php.build value of a PHP root for a lab (a
// lab.PHPBuild): the root's loader running its php-fpm, Debian 13's
// php.ini and the extensions its conf.d enables.
func ForLab(id string) (*lab.PHPBuild, error) {
	version, ok := BuildVersion(id)
	if !ok {
		return nil, fmt.Errorf("%q names no PHP root", id)
	}
	r, err := Find(lab.Home(), version)
	if err != nil {
		return nil, err
	}
	// The loader and libraries at their real places (Debian 13 merges
	// /lib into /usr/lib: /lib64 and /lib are links).
	libDir := r.Host("/usr/lib/x86_64-linux-gnu")
	loader := filepath.Join(libDir, "ld-linux-x86-64.so.2")
	fpm := r.Host(r.FPM)
	for _, p := range []string{loader, fpm} {
		if err := checkRootFile(p); err != nil {
			return nil, fmt.Errorf("PHP root %s: %v; make it again: phptune php remove %s && phptune php add %s", r.Dir, err, version, version)
		}
	}
	ini, notes, err := rootExtensions(r)
	if err != nil {
		return nil, err
	}
	carried, carryNotes := carryLive(r)
	ini = append(ini, carried...)
	notes = append(notes, carryNotes...)
	php := strings.TrimSpace(r.Manifest.PHP)
	if i := strings.Index(php, " ("); i > 0 {
		php = php[:i]
	}
	return &lab.PHPBuild{
		ID: RootBuildPrefix + version, FPM: loader, Args: []string{"--library-path", libDir, fpm},
		Ini: ini, IniFile: r.Host(r.FPMIni), Version: version, Notes: notes,
		Summary: fmt.Sprintf("Debian %s's own %s, php-fpm%s from phptune php add %s", r.Manifest.Debian, php, version, version),
	}, nil
}

// rootExtensions are the lines that load the extensions Debian 13's
// conf.d enables in root r — extension_dir set to the root's, then each
// module by absolute path, in conf.d's order — read from the root's
// mods-available (conf.d holds links into /etc/php/VERSION of the root,
// which are read inside it, never followed on this host).
func rootExtensions(r *Root) (lines, notes []string, err error) {
	confd := r.Host(r.FPMConfD)
	ents, err := os.ReadDir(confd)
	if err != nil {
		return nil, nil, fmt.Errorf("PHP root %s: reading its enabled extensions: %v", r.Dir, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".ini") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	ext := r.Host(r.ExtDir)
	lines = []string{"extension_dir=" + ext}
	avail := r.Host(filepath.Join("/etc/php", r.Version, "mods-available"))
	for _, n := range names {
		mod := n
		if i := strings.IndexByte(mod, '-'); i >= 0 {
			mod = mod[i+1:]
		}
		text, err := saferead.Whole(filepath.Join(avail, mod), 64<<10, saferead.AnyOwner)
		if err != nil {
			notes = append(notes, fmt.Sprintf("PHP root %s: %s is not read (%v): its extension is not loaded", r.Dir, n, err))
			continue
		}
		for _, l := range extensionLines(text) {
			key, file, _ := strings.Cut(l, "=")
			if !strings.HasSuffix(file, ".so") {
				file += ".so"
			}
			path := filepath.Join(ext, filepath.Base(file))
			if err := checkRootFile(path); err != nil {
				notes = append(notes, fmt.Sprintf("PHP root %s: %v: not loaded", r.Dir, err))
				continue
			}
			lines = append(lines, key+"="+path)
		}
	}
	return lines, notes, nil
}

// extensionLines are the extension= and zend_extension= lines of a
// mods-available file, as "key=file".
func extensionLines(text []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		key, val, ok := strings.Cut(line, "=")
		key, val = strings.TrimSpace(key), strings.Trim(strings.TrimSpace(val), `"'`)
		if !ok || (key != "extension" && key != "zend_extension") || val == "" || strings.ContainsAny(val, "/\\ \t") {
			continue
		}
		out = append(out, key+"="+val)
	}
	return out
}

// ownedByRoot says whether st is owned by root.
func ownedByRoot(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && sys.Uid == 0
}

// checkRootFile refuses a file of a PHP root that a lab runs or loads
// unless it is a regular file owned by root and writable by root alone.
func checkRootFile(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o022 != 0 || !ownedByRoot(st) {
		return fmt.Errorf("%s is not a regular file of root's writable by root alone", path)
	}
	return nil
}
