package site

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxWalk bounds the entries counted under a document root.
const maxWalk = 2_000_000

// readDocRoot describes a document root: its owner, and its files and
// their bytes (links are counted, never followed).
func readDocRoot(path string) DocRoot {
	d := DocRoot{Path: path}
	if err := trustedLinks(path); err != nil {
		d.Error = err.Error()
		return d
	}
	real, err := filepath.EvalSymlinks(path)
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
	n := 0
	filepath.WalkDir(real, func(p string, e fs.DirEntry, err error) error {
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

// trustedLinks refuses a path that leads through a link another account
// could have made or changed: a link is followed only when the directory
// holding it is root's and no one else can write it (a deployment's
// "current" link in root's /var/www is; a link the site's account
// planted in its own docroot is not).
func trustedLinks(path string) error {
	cur := "/"
	for _, part := range strings.Split(strings.Trim(filepath.Clean(path), "/"), "/") {
		if part == "" {
			continue
		}
		next := filepath.Join(cur, part)
		st, err := os.Lstat(next)
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			dir, err := os.Stat(cur)
			if err != nil {
				return err
			}
			sys, ok := dir.Sys().(*syscall.Stat_t)
			if !ok || sys.Uid != 0 || dir.Mode().Perm()&0o022 != 0 {
				return fmt.Errorf("%s is a link in %s, which another account can write: not followed (give the real directory)", next, cur)
			}
			target, err := filepath.EvalSymlinks(next)
			if err != nil {
				return err
			}
			return trustedLinks(filepath.Join(target, strings.TrimPrefix(path, next)))
		}
		cur = next
	}
	return nil
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
// as WordPress looks), Laravel's .env (beside public/), Drupal's
// sites/default/settings.php. Files are read without following a link
// and without leaving their directory.
func (s *Site) readApp() {
	root := s.DocRoot.dir()
	parent := filepath.Dir(root)
	type cand struct {
		dir, rel string
		parse    func(string, []byte) (*App, error)
	}
	var cands []cand
	cands = append(cands, cand{root, "wp-config.php", ParseWPConfig})
	if existsBeneath(root, "wp-settings.php") && !existsBeneath(root, "wp-config.php") && !existsBeneath(parent, "wp-settings.php") {
		cands = append(cands, cand{parent, "wp-config.php", ParseWPConfig})
	}
	cands = append(cands, cand{root, "sites/default/settings.php", ParseDrupalSettings})
	if filepath.Base(root) == "public" {
		cands = append(cands, cand{parent, ".env", ParseDotEnv})
	}
	cands = append(cands, cand{root, ".env", ParseDotEnv})
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
	s.AppError = "no wp-config.php, .env or sites/default/settings.php: an application whose database discovery does not know (the lab will give it none)"
}
