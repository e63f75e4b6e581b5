package phpbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The distro's shared extensions are built for the exact PHP release
// installed; when the archive only serves an older source (8.2.32 while
// 8.2.36 is installed), most of them need core symbols the build lacks and
// do not load (see checkExtensions). So a full build compiles, from its own
// source and with Debian's own flags for each (debian/rules.d/ext-*.mk:
// NAME_config, e.g. mysqli_config = --with-mysqli=shared,mysqlnd), every
// shared extension the installed php-fpm enables, and a lab running the
// build loads those instead of the distro's (ForLab). A --minimal build
// builds none: it is the CI's pipeline check.

// ExtConfigVar is the debian/rules variable with extension name's configure
// flags.
func ExtConfigVar(name string) string { return name + "_config" }

// EnabledModules reads the modules a SAPI's conf.d enables (Debian's
// /etc/php/X.Y/fpm/conf.d: NN-name.ini links into mods-available), in load
// order. Files that load no extension are left out.
func EnabledModules(confd string) ([]Module, error) {
	ents, err := os.ReadDir(confd)
	if err != nil {
		return nil, fmt.Errorf("reading the distro's enabled extensions %s: %v", confd, err)
	}
	var mods []Module
	seen := map[string]bool{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".ini") {
			continue
		}
		data, err := readSmall(filepath.Join(confd, e.Name()), 64<<10)
		if err != nil {
			continue
		}
		if m, ok := ParseModIni(string(data)); ok && !seen[m.Name] {
			seen[m.Name] = true
			mods = append(mods, m)
		}
	}
	SortModules(mods)
	return mods, nil
}

// readSmall reads at most limit bytes of a root-owned system file.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, limit)
	n, err := f.Read(buf)
	if err != nil && n == 0 {
		return nil, err
	}
	return buf[:n], nil
}

// ExtensionArgs appends to args Debian's configure flags for each module in
// mods (vars holds the rules' NAME_config values) and returns the new line
// and the modules it builds. opcache is left out (ConfigureArgs builds it);
// a module whose NAME_config is empty or missing is not built (the lab
// loads the distro's when it loads). Every flag must be a --enable-/--with-
// option and the module's own flag must build it shared: a static
// extension would change the binary being measured. A flag whose option is
// already on the line keeps the first value (--with-zlib-dir=/usr appears
// in several NAME_config).
func ExtensionArgs(args []string, mods []Module, vars map[string]string) ([]string, []string, error) {
	out := append([]string(nil), args...)
	seen := map[string]bool{}
	for _, a := range args {
		seen[optName(a)] = true
	}
	var built []string
	for _, m := range mods {
		if m.Name == "opcache" {
			continue
		}
		words, err := SplitWords(vars[ExtConfigVar(m.Name)])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v", ErrRules, ExtConfigVar(m.Name), err)
		}
		if len(words) == 0 {
			continue
		}
		shared := false
		for _, w := range words {
			if !strings.HasPrefix(w, "--enable-") && !strings.HasPrefix(w, "--with-") {
				return nil, nil, fmt.Errorf("%w: %s has %q: only --enable-/--with- options are taken", ErrRules, ExtConfigVar(m.Name), w)
			}
			if _, v, ok := strings.Cut(w, "="); ok && (v == "shared" || strings.HasPrefix(v, "shared,")) {
				shared = true
			}
		}
		if !shared {
			return nil, nil, fmt.Errorf("%w: %s (%s) does not build %s as a shared extension", ErrRules, ExtConfigVar(m.Name), strings.Join(words, " "), m.Name)
		}
		for _, w := range words {
			if name := optName(w); !seen[name] {
				seen[name] = true
				out = append(out, w)
			}
		}
		built = append(built, m.Name)
	}
	return out, built, nil
}
