package phproot

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Builtin are the modules Debian compiles into PHP itself (the SAPIs'
// binaries and php8.4-common's core): no package to install, and each is
// checked after making like any other.
var Builtin = []string{
	"core", "date", "filter", "hash", "json", "libxml", "openssl", "pcntl",
	"pcre", "random", "reflection", "session", "sodium", "spl", "standard", "zlib",
}

// grouped maps a module that Debian ships inside another extension's
// package to that package's suffix (php8.4-SUFFIX). Any other module NAME
// is installed by php8.4-NAME, or by the package that provides that name
// (php8.4-common provides ctype, fileinfo, tokenizer...).
var grouped = map[string]string{
	"mysqli": "mysql", "pdo_mysql": "mysql", "mysqlnd": "mysql",
	"dom": "xml", "simplexml": "xml", "xml": "xml", "xmlreader": "xml", "xmlwriter": "xml", "xsl": "xml",
	"zend opcache": "opcache", "opcache": "opcache",
	"pdo_pgsql": "pgsql", "pdo_sqlite": "sqlite3", "pdo_odbc": "odbc", "pdo_dblib": "sybase",
}

// Base are the packages every root holds: php-fpm, the CLI (the checks
// and `php -m` run it) and OPcache.
func Base(version string) []string {
	return []string{"php" + version + "-fpm", "php" + version + "-cli", "php" + version + "-opcache"}
}

// Ext is one wanted module and what installs it.
type Ext struct {
	Module  string `json:"module"`            // lower-case, as ParseModules gives it
	Package string `json:"package,omitempty"` // "" for a Builtin module
}

// Plan is the package list a root of one release is made from.
type Plan struct {
	Exts     []Ext    // the modules the root will have, sorted
	Packages []string // Base and every Ext's package, sorted, each once
	Missing  []string // wanted modules the release has no package for
	Skipped  []string // modules left out by --skip-ext
}

// PlanExtensions maps the wanted modules (the host's `php -m` and --ext)
// to the release's packages in ix. A module of skip is left out even when
// it has a package.
func PlanExtensions(version string, wanted, skip []string, ix *Index) Plan {
	var p Plan
	pkgs := map[string]bool{}
	for _, b := range Base(version) {
		pkgs[b] = true
	}
	seen := map[string]bool{}
	for _, w := range wanted {
		m := strings.ToLower(strings.TrimSpace(w))
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		if slices.Contains(skip, m) {
			p.Skipped = append(p.Skipped, m)
			continue
		}
		if slices.Contains(Builtin, m) {
			p.Exts = append(p.Exts, Ext{Module: m})
			continue
		}
		suffix := m
		if g, ok := grouped[m]; ok {
			suffix = g
		}
		pkg, ok := ix.Resolve("php" + version + "-" + suffix)
		if !ok {
			p.Missing = append(p.Missing, m)
			continue
		}
		pkgs[pkg] = true
		p.Exts = append(p.Exts, Ext{Module: m, Package: pkg})
	}
	for k := range pkgs {
		p.Packages = append(p.Packages, k)
	}
	sort.Strings(p.Packages)
	sort.Slice(p.Exts, func(i, j int) bool { return p.Exts[i].Module < p.Exts[j].Module })
	sort.Strings(p.Missing)
	sort.Strings(p.Skipped)
	return p
}

// NormalizeExt reads --ext and --skip-ext values ("apcu,redis" and
// "Zend OPcache") into lower-case module names; a name with other than
// letters, digits, '_' or a space is refused.
func NormalizeExt(flag string, vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		for _, m := range strings.Split(v, ",") {
			m = strings.ToLower(strings.TrimSpace(m))
			if m == "" {
				continue
			}
			if !validModule(m) {
				return nil, fmt.Errorf("%s %q: a PHP module name is letters, digits and '_' (as php -m prints it)", flag, m)
			}
			out = append(out, m)
		}
	}
	return out, nil
}
