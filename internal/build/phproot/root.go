package phproot

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/saferead"
)

// Dir is where the roots are: home/php-roots, one directory a release.
func Dir(home string) string { return filepath.Join(home, "php-roots") }

// PkgVersion is one package dpkg lists as installed in a root.
type PkgVersion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Manifest is a complete root's record (manifest.json beside its tree).
type Manifest struct {
	Version    string       `json:"version"`    // the PHP release: "8.4"
	PHP        string       `json:"php"`        // php-fpm -v's first line
	Debian     string       `json:"debian"`     // "13"
	Suite      string       `json:"suite"`      // "trixie"
	Archive    string       `json:"archive"`    // the mirror it came from
	Security   string       `json:"security"`   // its security suite's mirror, or ""
	Keyring    string       `json:"keyring"`    // what checked the archive's signature
	MadeAt     time.Time    `json:"made_at"`    // when it was renamed into place
	Seconds    float64      `json:"seconds"`    // how long making it took
	DiskBytes  int64        `json:"disk_bytes"` // its tree's blocks on disk
	Requested  []string     `json:"requested"`  // the packages asked of mmdebstrap
	Extensions []Ext        `json:"extensions"` // the modules checked in it
	Skipped    []string     `json:"skipped"`    // modules left out (--skip-ext)
	Packages   []PkgVersion `json:"packages"`   // dpkg-query -W inside it
	Mmdebstrap string       `json:"mmdebstrap"` // mmdebstrap --version
	// Directives are the php.ini settings its PHP knows (ini_get_all's
	// keys, its extensions loaded): a lab carries no other setting of
	// the installed PHP onto it.
	Directives []string `json:"directives,omitempty"`
}

// Root is a complete PHP root as a lab runs it. Paths named "inside" are
// paths within FS (as a chroot or a mount namespace sees them); Host gives
// one as the host sees it.
type Root struct {
	Version  string
	Dir      string // home/php-roots/VERSION: manifest.json, make.log, root/
	FS       string // the Debian tree: Dir/root
	FPM      string // inside: /usr/sbin/php-fpmVERSION
	CLI      string // inside: /usr/bin/phpVERSION
	FPMIni   string // inside: /etc/php/VERSION/fpm/php.ini
	FPMConfD string // inside: /etc/php/VERSION/fpm/conf.d (the extensions' .ini links)
	ExtDir   string // inside: the directory the extensions' .so files are in
	Manifest Manifest
}

// Host is inside's path on the host: below FS.
func (r *Root) Host(inside string) string { return filepath.Join(r.FS, inside) }

// ErrNotMade is wrapped by Find when the release has no complete root.
var ErrNotMade = errors.New("no PHP root")

// Find returns the complete root of version under home, or an error
// wrapping ErrNotMade that says how to make it. The root's directory must
// be a real directory of the user running phptune, and its manifest name
// the same release.
func Find(home, version string) (*Root, error) {
	if _, err := CheckVersion(version); err != nil {
		return nil, err
	}
	dir := filepath.Join(Dir(home), version)
	st, err := os.Lstat(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%w of PHP %s: not made yet: run phptune php add %s", ErrNotMade, version, version)
		}
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: refused (remove it, then phptune php add %s)", dir, version)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s belongs to uid %d, not to the user running phptune (uid %d): refused", dir, sys.Uid, os.Geteuid())
	}
	data, err := saferead.Whole(filepath.Join(dir, "manifest.json"), 4<<20, saferead.MineAlone)
	if err != nil {
		return nil, fmt.Errorf("PHP root %s: %v (remove it with phptune php remove %s and make it again)", dir, err, version)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("PHP root %s: manifest.json: %v", dir, err)
	}
	if m.Version != version {
		return nil, fmt.Errorf("PHP root %s: its manifest names PHP %q", dir, m.Version)
	}
	return newRoot(dir, m), nil
}

// newRoot is the Root of the tree in dir with manifest m.
func newRoot(dir string, m Manifest) *Root {
	v := m.Version
	return &Root{
		Version:  v,
		Dir:      dir,
		FS:       filepath.Join(dir, "root"),
		FPM:      "/usr/sbin/php-fpm" + v,
		CLI:      "/usr/bin/php" + v,
		FPMIni:   "/etc/php/" + v + "/fpm/php.ini",
		FPMConfD: "/etc/php/" + v + "/fpm/conf.d",
		ExtDir:   extDir(m),
		Manifest: m,
	}
}

// extDir is PHP's extension directory for the module API of the
// manifest's release (Debian's /usr/lib/php/API).
func extDir(m Manifest) string {
	if api, ok := moduleAPI[m.Version]; ok {
		return "/usr/lib/php/" + api
	}
	return ""
}

// moduleAPI is each release's PHP module API number, the name of
// Debian's extension directory.
var moduleAPI = map[string]string{"8.4": "20240924"}

// List returns every complete root under home, by release.
func List(home string) ([]*Root, error) {
	ents, err := os.ReadDir(Dir(home))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []*Root
	for _, e := range ents {
		if _, ok := Releases[e.Name()]; !ok {
			continue // work in progress (.work-*), logs and the lock
		}
		r, err := Find(home, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}
