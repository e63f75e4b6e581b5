package phpbuild

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A build is of the installed PHP (8.2 on Debian 12) unless --php names
// another release. A newer release comes from the Debian suite that carries
// it as a source package (NewerSuites): phptune's private sources list gets a
// deb-src line for that suite, never the system's. Its binary is built here
// against Debian 12's libraries; the distro's shared extensions are built for
// the installed release's module API and cannot load into it, so the build
// compiles from its own source every extension the installed php-fpm enables
// that the source has, and lists the others (the PECL ones: APCu, redis,
// imagick...) as unavailable (ForeignUnavailable).

// NewerSuites maps a PHP release phptune builds besides the installed one
// to the Debian suite whose archive serves its source package.
var NewerSuites = map[string]string{
	"8.4": "trixie",
}

var phpMinorRE = regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,2}$`)

// CheckPHP checks --php against the installed release: "" or the installed
// one builds the installed PHP; another must be one NewerSuites names.
func CheckPHP(php, installed string) error {
	if php == "" || php == installed {
		return nil
	}
	if !phpMinorRE.MatchString(php) {
		return fmt.Errorf("--php %q: give a PHP release as MAJOR.MINOR, e.g. --php 8.4", php)
	}
	if _, ok := NewerSuites[php]; !ok {
		return fmt.Errorf("--php %s: phptune builds the installed PHP %s or %s; choose one of them", php, installed, strings.Join(PHPReleases(), ", "))
	}
	return nil
}

// PHPReleases are the releases --php takes besides the installed one,
// sorted.
func PHPReleases() []string {
	out := make([]string, 0, len(NewerSuites))
	for v := range NewerSuites {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// SourcesFor are the repositories phptune's private sources list names to
// fetch PHP release php's source: the system's, plus for a newer release
// its suite on each Debian archive the system uses for a release (bookworm
// → trixie) and its security suite (bookworm-security → trixie-security;
// bookworm-updates and the like are left out), with the same keyring (Debian signs a release's archive
// with the previous release's key too).
func SourcesFor(php, installed string, system []AptSource) ([]AptSource, error) {
	if php == "" || php == installed {
		return system, nil
	}
	suite, ok := NewerSuites[php]
	if !ok {
		return nil, CheckPHP(php, installed)
	}
	out := append([]AptSource(nil), system...)
	seen := map[string]bool{}
	for _, s := range system {
		if strings.HasSuffix(s.Suite, "/") || !slices.Contains(s.Components, "main") {
			continue
		}
		// The release itself and its security suite (where a stable
		// release's PHP updates are published first).
		newer := suite
		if _, tail, ok := strings.Cut(s.Suite, "-"); ok {
			if tail != "security" {
				continue
			}
			newer += "-security"
		}
		if seen[s.URI+" "+newer] {
			continue
		}
		seen[s.URI+" "+newer] = true
		out = append(out, AptSource{URI: s.URI, Suite: newer, Components: []string{"main"}, SignedBy: s.SignedBy})
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no Debian release repository (a suite such as bookworm with component main) in the system's apt sources to find %s's archive for PHP %s; give the php%s source with --source DIR|TARBALL", suite, php, php)
	}
	return out, nil
}

// ForeignUnavailable are the modules the installed php-fpm enables that a
// build of another release cannot load: neither compiled from its source
// (built) nor its own opcache. The distro builds them (from PECL source
// packages: APCu, redis, imagick...) for the installed release only.
func ForeignUnavailable(enabled []Module, built []string) []string {
	var out []string
	for _, m := range enabled {
		if m.Name != "opcache" && !slices.Contains(built, m.Name) {
			out = append(out, m.Name)
		}
	}
	return out
}

// UnavailableReason is the extension check's reason for a module of
// ForeignUnavailable.
func UnavailableReason(php, installed string) string {
	return fmt.Sprintf("not in PHP %s's source; Debian ships it for PHP %s only, so this build cannot load it", php, installed)
}
