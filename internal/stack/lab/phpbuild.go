package lab

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/phpfpm"
)

// A lab runs the distro's php-fpm, or a PHP phptune built (knob php.build,
// package phpbuild). A build reads the distro's php.ini (it was configured
// with Debian's paths) but not the distro's conf.d: the distro's shared
// extensions only load into the PHP release they were built for, so the
// lab renders php/00-build.ini with the build's own extensions (and the
// distro's that load into it), and points PHP_INI_SCAN_DIR at php/ alone.

// PHPBuild is a PHP built by phptune as a lab runs it.
type PHPBuild struct {
	ID string
	// FPM is the build's php-fpm: root-owned, in a root-owned directory,
	// run as the lab's account (root never runs it).
	FPM string
	// Ini are the extension= and zend_extension= lines (absolute paths)
	// that replace the distro's conf.d, in Debian's load order.
	Ini []string
	// Summary names the build (id, PHP version, variant, training, older
	// source); Notes are said when the lab starts on it (an older source's
	// security warning, extensions of the distro it runs without).
	Summary string
	Notes   []string
	// IniFile, when set, is the php.ini the build's php-fpm is given (-c)
	// instead of its compiled-in path: a build of another PHP release than
	// the installed one (8.4 on Debian 12) reads the installed one's.
	IniFile string
	// Args, when set, are FPM's arguments before php-fpm's own: FPM is
	// then another Debian release's dynamic loader, which runs that
	// release's php-fpm with its libraries (a PHP root of phptune php
	// add). Version is the PHP release ("8.4") when it is not the
	// installed one's.
	Args    []string
	Version string
}

// PHPBuilds resolves a php.build id for a lab. Package phpbuild provides it
// (it imports this package, so the CLI wires the two together); nil means
// this program cannot run builds and every id but "distro" is refused.
var PHPBuilds func(id string) (*PHPBuild, error)

// buildID is cfg's php.build, "" for the distro's PHP.
func buildID(cfg knob.Config) string {
	if v := cfg[knob.BuildKnob]; v != "" && v != "distro" {
		return v
	}
	return ""
}

// phpFor returns the php-fpm a lab with cfg runs and, for a build, the
// build. The CLI (WordPress's installer) stays the distro's either way:
// installing is not measured.
func phpFor(cfg knob.Config) (*phpfpm.Binary, *PHPBuild, error) {
	distro, err := phpfpm.Find()
	if err != nil {
		return nil, nil, err
	}
	id := buildID(cfg)
	if id == "" {
		return distro, nil, nil
	}
	if PHPBuilds == nil {
		return nil, nil, fmt.Errorf("php.build=%s: this program cannot run PHP builds; use php.build=distro", id)
	}
	b, err := PHPBuilds(id)
	if err != nil {
		return nil, nil, fmt.Errorf("php.build=%s: %w", id, err)
	}
	bin := *distro
	bin.Path, bin.Prefix = b.FPM, b.Args
	if b.IniFile != "" {
		bin.IniFile, bin.PinIni = b.IniFile, true
	}
	if b.Version != "" {
		bin.Version = b.Version
	}
	return &bin, b, nil
}

// fpmEnv is php-fpm's environment for the lab's configuration: the
// distro's conf.d then php/ for the distro's PHP, php/ alone for a build.
func (l *Lab) fpmEnv() []string {
	dir := layout{l.Dir}.p("php")
	if buildID(l.Config) == "" {
		return phpfpm.Env(dir)
	}
	return []string{"PHP_INI_SCAN_DIR=" + dir, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
}

// buildIni is php/00-build.ini: the build's extension lines, or a comment
// for the distro's PHP (its conf.d loads the extensions).
func buildIni(b *PHPBuild) string {
	if b == nil {
		return "; php.build=distro: the distro's conf.d loads the extensions.\n"
	}
	var s strings.Builder
	fmt.Fprintf(&s, "; php.build=%s (%s): its own extensions, in place of the distro's conf.d.\n", b.ID, b.Summary)
	for _, line := range b.Ini {
		s.WriteString(line + "\n")
	}
	return s.String()
}
