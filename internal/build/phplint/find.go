package phplint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// Find lists the *.php files under dir (absolute, clean), in lexical order,
// at most limit of them; symbolic links, to files or directories, are
// counted and never followed, and the walk never leaves dir. A path PHP's output could not name on one
// line (a control character in it) is skipped. Directories that cannot
// be read are skipped.
func Find(dir string, limit int) (files []string, links int, err error) {
	if !filepath.IsAbs(dir) {
		return nil, 0, fmt.Errorf("%s: give an absolute directory", dir)
	}
	dir = filepath.Clean(dir)
	st, err := os.Lstat(dir)
	if err != nil {
		return nil, 0, err
	}
	if !st.IsDir() {
		return nil, 0, fmt.Errorf("%s is not a directory (a link is not followed: give the directory it points to)", dir)
	}
	// Walked inside an os.Root: a directory the site's account swaps for
	// a link while the walk runs cannot lead it (root) out of dir.
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	if rst, err := r.Stat("."); err != nil || !os.SameFile(st, rst) {
		return nil, 0, fmt.Errorf("%s changed while it was read (swapped for a link?): give the directory again", dir)
	}
	errStop := fmt.Errorf("limit")
	err = fs.WalkDir(r.FS(), ".", func(rel string, d fs.DirEntry, werr error) error {
		p := filepath.Join(dir, rel)
		if werr != nil {
			if d != nil && d.IsDir() && rel != "." {
				return fs.SkipDir
			}
			return werr
		}
		if d.Type()&fs.ModeSymlink != 0 {
			links++
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(strings.ToLower(d.Name()), ".php") {
			return nil
		}
		if strings.IndexFunc(p, unicode.IsControl) >= 0 {
			return nil
		}
		if len(files) >= limit {
			return errStop
		}
		files = append(files, p)
		return nil
	})
	if err == errStop {
		err = nil
	}
	return files, links, err
}
