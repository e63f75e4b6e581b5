package site

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/base/saferead"
)

// maxWalk bounds the entries counted under a document root.
const maxWalk = 2_000_000

// readDocRoot describes a document root: its owner, and its files and
// their bytes (links are counted, never followed, and the walk never
// leaves the docroot).
func readDocRoot(path string) DocRoot {
	d := DocRoot{Path: path}
	real, err := trustedLinks(path)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	if real != path {
		d.Real = real
	}
	st, err := os.Lstat(real)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	if !st.IsDir() {
		d.Error = real + " is not a directory"
		return d
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		d.UID = int(sys.Uid)
		d.Owner = accountName(d.UID)
	}
	// Walked inside an os.Root: a directory the site's account swaps for
	// a link while the walk runs cannot lead it out of the docroot.
	r, err := os.OpenRoot(real)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	defer r.Close()
	// OpenRoot follows a link: the directory opened must be the one
	// looked at (not swapped for a link since).
	if rst, err := r.Stat("."); err != nil || !os.SameFile(st, rst) {
		d.Error = real + " changed while it was read (swapped for a link?): not counted"
		return d
	}
	n := 0
	fs.WalkDir(r.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if n++; n > maxWalk {
			d.Partial = true
			return filepath.SkipAll
		}
		if err != nil || e.IsDir() {
			return nil
		}
		d.Files++
		if e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				d.Bytes += info.Size()
			}
		}
		return nil
	})
	return d
}

// trustedLinks resolves path's links, one hop at a time, refusing a
// link another account could have made or changed: a link is followed
// only when the directory holding it is root's and no one else can
// write it, nor any directory above (a deployment's "current" link in
// root's /var/www is; a link the site's account planted in its own
// docroot is not, nor one its target holds). It returns the path
// reached, with no link left: the caller opens that, links refused, so
// a directory swapped for a link after the check fails rather than
// leading elsewhere.
func trustedLinks(path string) (string, error) {
	return trustedLinksFrom(filepath.Clean(path), 0)
}

// maxLinkHops bounds the links trustedLinks follows (a loop ends).
const maxLinkHops = 40

func trustedLinksFrom(path string, hops int) (string, error) {
	cur := "/"
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := filepath.Join(cur, part)
		st, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			// The link's directory and every one above it root's alone:
			// no other account can swap the link, or a directory on its
			// way, between this check and the Readlink.
			if u := saferead.RootOnlyParents(next); u != nil {
				return "", fmt.Errorf("%s is a link in %s, which another account can write: not followed (give the real directory; %v)", next, cur, u)
			}
			if hops == maxLinkHops {
				return "", fmt.Errorf("%s: more than %d links", path, maxLinkHops)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			return trustedLinksFrom(filepath.Join(append([]string{target}, parts[i+1:]...)...), hops+1)
		}
		cur = next
	}
	return cur, nil
}

// dir is the document root to read files beneath.
func (d DocRoot) dir() string {
	if d.Real != "" {
		return d.Real
	}
	return d.Path
}

// readApp finds the application in the document root by its
// configuration file and reads it: WordPress's wp-config.php (in the
// root, or one directory up when the root holds no wp-settings.php there,
// as WordPress looks), Drupal's sites/default/settings.php, MediaWiki's
// LocalSettings.php, Joomla's configuration.php, Nextcloud's
// config/config.php, Magento's app/etc/env.php (beside pub/ too),
// TYPO3's config/system/settings.php (beside public/ too) or
// typo3conf/LocalConfiguration.php, PrestaShop's
// app/config/parameters.php, Moodle's and phpBB's config.php, and the .env
// beside public/ (or web/) or in the root: Craft's (its craft script
// beside it), Symfony's .env.local.php, .env.local or .env (its
// bin/console beside it),
// else Laravel's. Files are read without following a link and without
// leaving their directory.
func (s *Site) readApp() {
	root := s.DocRoot.dir()
	parent := filepath.Dir(root)
	base := filepath.Base(root)
	type cand struct {
		dir, rel string
		parse    func(string, []byte) (*App, error)
	}
	var cands []cand
	cands = append(cands, cand{root, "wp-config.php", ParseWPConfig})
	if existsBeneath(root, "wp-settings.php") && !existsBeneath(root, "wp-config.php") && !existsBeneath(parent, "wp-settings.php") {
		cands = append(cands, cand{parent, "wp-config.php", ParseWPConfig})
	}
	cands = append(cands,
		cand{root, "sites/default/settings.php", ParseDrupalSettings},
		cand{root, "LocalSettings.php", ParseMediaWiki},
		cand{root, "configuration.php", ParseJoomla},
		cand{root, "config/config.php", ParseNextcloud},
		cand{root, "app/etc/env.php", ParseMagento})
	if base == "pub" {
		cands = append(cands, cand{parent, "app/etc/env.php", ParseMagento})
	}
	if base == "public" {
		cands = append(cands, cand{parent, "config/system/settings.php", ParseTYPO3})
	}
	cands = append(cands,
		cand{root, "typo3conf/system/settings.php", ParseTYPO3},
		cand{root, "typo3conf/LocalConfiguration.php", ParseTYPO3},
		cand{root, "app/config/parameters.php", ParsePrestaShop})
	if existsBeneath(root, "config.php") {
		cands = append(cands, cand{root, "config.php", ParseMoodle}, cand{root, "config.php", ParsePhpBB})
	} else if base == "public" {
		cands = append(cands, cand{parent, "config.php", ParseMoodle}) // Moodle 5's public/
	}
	envDirs := []string{root}
	if base == "public" || base == "web" {
		envDirs = []string{parent, root}
	}
	for _, d := range envDirs {
		switch {
		case existsBeneath(d, "craft") && !existsBeneath(d, "artisan"):
			cands = append(cands, cand{d, ".env", envReader("craft")})
		case existsBeneath(d, "bin/console") && !existsBeneath(d, "artisan"):
			cands = append(cands, cand{d, ".env.local.php", func(file string, src []byte) (*App, error) { return ParseSymfonyEnvPHP("symfony", file, src) }},
				cand{d, ".env.local", envReader("symfony")}, cand{d, ".env", envReader("symfony")})
		case d == root || base == "public":
			cands = append(cands, cand{d, ".env", ParseDotEnv})
		}
	}
	var problems []string
	for _, c := range cands {
		b, err := readBeneath(c.dir, c.rel, maxAppConf)
		if err != nil {
			if !errNotFound(err) {
				problems = append(problems, err.Error())
			}
			continue
		}
		a, err := c.parse(filepath.Join(c.dir, c.rel), b)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		s.App = a
		if a.Kind == "wordpress" && existsBeneath(root, "wp-content/object-cache.php") {
			s.Notes = append(s.Notes, "wp-content/object-cache.php is installed: WordPress uses a persistent object cache")
			if src, err := readBeneath(root, "wp-content/object-cache.php", maxDropIn); err == nil {
				s.dropIn = dropInCache(src)
			}
		}
		return
	}
	if len(problems) > 0 {
		s.AppError = strings.Join(problems, "; ")
		return
	}
	s.AppError = "no configuration file of an application phptune reads (" + strings.Join(appFiles, ", ") + "): an application whose database discovery does not know (the lab will give it none)"
}

// appFiles name the files readApp looks for, for its message.
var appFiles = []string{"wp-config.php", "sites/default/settings.php", "LocalSettings.php", "configuration.php", "config/config.php",
	"app/etc/env.php", "config/system/settings.php", "typo3conf/LocalConfiguration.php", "app/config/parameters.php", "config.php", ".env"}

// envReader is ParseSymfonyEnv for kind.
func envReader(kind string) func(string, []byte) (*App, error) {
	return func(file string, src []byte) (*App, error) { return ParseSymfonyEnv(kind, file, src) }
}
