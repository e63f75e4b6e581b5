package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
)

// siteCode are the include_path directories and the php.ini's
// auto_prepend_file / auto_append_file (the pool's own are sitePHPFiles')
// of the site that lie outside appRoot and the seal's allowlist (/usr,
// /etc/php): a site lab binds each read-only at its own path, as it binds
// the pool's prepend file. The lab's php-fpm loads the host's php.ini
// (the seal carries /etc/php), so without them the site's code would
// not find what production finds.
//
// Why a read-only bind and not a copy: it is what production runs (a
// copy goes stale and costs a walk of the tree), the lab cannot write
// it, and the only way out a bind could open — connect() to a unix
// socket or a write to a FIFO inside it, which a read-only bind does not
// stop — is closed by seal.CheckCodeSource: nothing of the kind in it,
// no directory in it that another account than root could add one to
// later, and nothing in or above phptune's home, /run, /tmp,
// /var/lib/mysql or /etc. A path it refuses refuses the lab (err): the
// site would run without code production has. known are paths already
// bound (sitePHPFiles'). said are the lines lab up prints, one a bind;
// notes what it cannot resolve (a relative prepend path not found in
// include_path).
func siteCode(s *site.Site, appRoot string, known []string) (paths, said, notes []string, err error) {
	if s.PHP == nil {
		return nil, nil, nil, nil
	}
	if appRoot == "" {
		appRoot = siteDocRoot(s)
	}
	seen := map[string]bool{}
	for _, k := range known {
		seen[k] = true
	}
	inSeal := func(p string) bool {
		return inDir(p, appRoot) || inDir(p, "/usr") || inDir(p, "/etc/php")
	}
	bind := func(what, from, p string) error {
		if seen[p] || inSeal(p) {
			return nil
		}
		seen[p] = true
		if inDir(appRoot, p) {
			return fmt.Errorf("%s (%s) names %s, which holds the app's root %s: the lab cannot bind it without showing the rest of %s; name the directories of code in it instead (%s)", what, from, p, appRoot, p, from)
		}
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			notes = append(notes, fmt.Sprintf("%s (%s) names %s, which does not exist on the host either: the lab runs without it, as production does", what, from, p))
			return nil
		}
		if err := seal.CheckCodeSource(p, Home()); err != nil {
			return fmt.Errorf("%s (%s) names %s, outside the app's root %s: the sealed lab would run without it, and it cannot be bound into the seal read-only: %v; "+
				"move that code to a directory of its own (root's, writable only by root, with no socket or FIFO in it) and name that in %s", what, from, p, appRoot, err, from)
		}
		paths = append(paths, p)
		said = append(said, fmt.Sprintf("%s (%s): %s is outside the app's root: bound read-only into the seal at the same path", what, from, p))
		return nil
	}
	var incDirs []string
	if set, ok := s.PHP.Settings["include_path"]; ok {
		for _, e := range strings.Split(strings.Trim(strings.TrimSpace(set.Value), `"'`), ":") {
			e = strings.TrimSpace(e)
			if e == "" || !filepath.IsAbs(e) {
				continue // "." and relative entries are looked up from the script's directory: in the overlay
			}
			e = filepath.Clean(e)
			incDirs = append(incDirs, e)
			if err := bind("the include_path directory", set.From, e); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	for _, k := range []string{"auto_prepend_file", "auto_append_file"} {
		set, ok := s.PHP.Settings[k]
		if !ok || strings.HasPrefix(set.From, "pool ") {
			continue // the pool's own: sitePHPFiles
		}
		v := strings.Trim(strings.TrimSpace(set.Value), `"'`)
		if v == "" || strings.EqualFold(v, "none") {
			continue
		}
		if !filepath.IsAbs(v) {
			found := false
			for _, d := range incDirs {
				if _, err := os.Stat(filepath.Join(d, v)); err == nil {
					found = true // in a bound include_path directory, or one the seal shows
					break
				}
			}
			if !found {
				notes = append(notes, fmt.Sprintf("%s = %s (%s) is a relative path found in no absolute include_path directory: the lab shows it only if it lies in %s", k, v, set.From, appRoot))
			}
			continue
		}
		if err := bind(k, set.From, filepath.Clean(v)); err != nil {
			return nil, nil, nil, err
		}
	}
	return paths, said, notes, nil
}
