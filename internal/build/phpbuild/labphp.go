package phpbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/stack/lab"
)

// ForLab resolves build id for a lab (it is lab.PHPBuilds): the build's
// php-fpm and the extension lines that replace the distro's conf.d. Every
// module the installed php-fpm enables (its conf.d, in Debian's order) is
// loaded from the build's own ext/ when the build compiled it, else from
// the distro's extension directory when the build's check found that it
// loads, else left out with PHP's reason in the notes. opcache is always the
// build's own. A build of another release (Record.DistroPHP) reads the
// installed release's php.ini and conf.d list.
func ForLab(id string) (*lab.PHPBuild, error) {
	f, err := BuildFiles(id)
	if err != nil {
		return nil, err
	}
	r := f.Record
	minor := r.SourceVersion
	if parts := strings.SplitN(minor, ".", 3); len(parts) >= 2 {
		minor = parts[0] + "." + parts[1]
	}
	if r.DistroPHP != "" {
		// Another release than the installed one: its compiled-in
		// /etc/php/X.Y has no php.ini; the lab gives it the installed
		// release's, whose enabled extensions it loads where it has them.
		minor = r.DistroPHP
	}
	enabled, err := EnabledModules(filepath.Join("/etc/php", minor, "fpm", "conf.d"))
	if err != nil {
		return nil, err
	}
	checked := map[string]ExtResult{}
	for _, e := range r.Extensions {
		checked[e.Name] = e
	}
	b := &lab.PHPBuild{ID: r.ID, FPM: f.FPM, Summary: r.Summary()}
	if r.DistroPHP != "" {
		b.IniFile = filepath.Join("/etc/php", r.DistroPHP, "fpm", "php.ini")
	}
	if note := r.SecurityNote(); note != "" {
		b.Notes = append(b.Notes, note)
	}
	var missing []string
	for _, m := range enabled {
		key := "extension"
		if m.Zend {
			key = "zend_extension"
		}
		c, wasChecked := checked[m.Name]
		switch {
		case m.Name == "opcache":
			b.Ini = append(b.Ini, "zend_extension="+f.Opcache)
		case slices.Contains(r.Built, m.Name):
			path := filepath.Join(Dir(), r.ID, "ext", m.Name+".so")
			if err := checkOwnedFile(path); err != nil {
				return nil, fmt.Errorf("build %s: %v; remove it with: phptune build rm %s", id, err, id)
			}
			if wasChecked && !c.Loaded {
				missing = append(missing, fmt.Sprintf("%s (%s)", m.Name, c.Reason))
				continue
			}
			b.Ini = append(b.Ini, key+"="+path)
		case wasChecked && c.Loaded:
			b.Ini = append(b.Ini, key+"="+filepath.Join(r.ExtDir, m.Name+".so"))
		default:
			reason := "not checked"
			if wasChecked {
				reason = c.Reason
			}
			missing = append(missing, fmt.Sprintf("%s (%s)", m.Name, reason))
		}
	}
	if len(missing) > 0 {
		b.Notes = append(b.Notes, fmt.Sprintf("the build runs without %d of the distro's %d enabled extensions: %s", len(missing), len(enabled), strings.Join(missing, "; ")))
	}
	return b, nil
}

// checkOwnedFile refuses anything but a regular file owned by the user
// running phptune and writable by it alone (as BuildFiles checks the
// binaries): a lab's php-fpm loads it.
func checkOwnedFile(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("it is incomplete (%v)", err)
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || sys == nil || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is not a regular file owned by uid %d and writable by it alone: refused", path, os.Geteuid())
	}
	return nil
}
