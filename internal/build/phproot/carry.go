package phproot

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/phpini"
	"github.com/phptune/phptune/internal/servers/phpfpm"
)

// A lab of a PHP root reads Debian 13's php.ini, and then the settings
// the installed PHP's configuration changed from Debian 12's defaults
// (its fpm php.ini against /usr/lib/php/VERSION/php.ini-production, and
// its conf.d), so the site runs with production's limits and options on
// the newer PHP. A setting the root's PHP does not know is listed and
// left out; one it deprecates is carried and listed. The lab's knobs
// (opcache, JIT, realpath cache...) are set after both, as on the
// installed PHP.

// fpmDirectives are the php.ini settings the FPM SAPI itself registers
// (php-fpm's fpm_main.c, PHP 8.2 to 8.4): the root's CLI, asked for the
// settings it knows, does not list them.
var fpmDirectives = []string{"cgi.rfc2616_headers", "cgi.nph", "cgi.force_redirect", "cgi.redirect_status_env",
	"cgi.fix_pathinfo", "cgi.discard_path", "fastcgi.logging", "fastcgi.error_header", "fpm.config"}

// directiveName is what ini_get_all's keys look like.
var directiveName = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,128}$`)

// iniDirectives are the php.ini settings the PHP of the tree fs knows
// (its CLI, Debian 13's conf.d loaded: the same extensions as its fpm),
// run in the tree as nobody.
func iniDirectives(ctx context.Context, fs, version string) ([]string, error) {
	out, err := inRoot(ctx, fs, "/usr/bin/php"+version, "-r", `echo implode("\n", array_keys(ini_get_all())), "\n";`)
	if err != nil {
		return nil, err
	}
	var ds []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); directiveName.MatchString(l) {
			ds = append(ds, l)
		}
	}
	if len(ds) < 50 {
		return nil, fmt.Errorf("php%s in the root listed %d php.ini settings, not PHP's hundreds", version, len(ds))
	}
	sort.Strings(ds)
	return ds, nil
}

// carryLive are the lines the lab of root r adds after Debian 13's
// php.ini (phpini.Carry over the installed php-fpm's configuration) and
// the notes lab up says about them.
func carryLive(r *Root) (lines, notes []string) {
	distro, err := phpfpm.Find()
	if err != nil {
		return nil, []string{"the installed PHP's php.ini settings are not carried: " + err.Error()}
	}
	return carryFrom(r, distro.Version, distro.IniFile, distro.ScanDir, filepath.Join("/usr/lib/php", distro.Version, "php.ini-production"))
}

// carryFrom is carryLive for the installed PHP release from, whose
// php.ini is iniFile, conf.d scanDir and Debian's php.ini stock.
func carryFrom(r *Root, from, iniFile, scanDir, stock string) (lines, notes []string) {
	var in phpini.CarryInput
	in.To, in.Skip = r.Version, phpKnobs()
	var unread []string
	read := func(path string) []phpini.Entry {
		b, err := saferead.RootConfig(path, 4<<20)
		if err != nil {
			unread = append(unread, err.Error())
			return nil
		}
		return phpini.Parse(b)
	}
	in.Live = append(in.Live, phpini.File{Path: iniFile, Entries: read(iniFile)})
	confd, _ := filepath.Glob(filepath.Join(scanDir, "*.ini"))
	sort.Strings(confd)
	for _, f := range confd {
		in.Live = append(in.Live, phpini.File{Path: f, Entries: read(f)})
	}
	in.LiveStock = read(stock)
	target := r.Host(r.FPMIni)
	if err := checkRootFile(target); err != nil {
		return nil, []string{fmt.Sprintf("the installed PHP's php.ini settings are not carried onto PHP %s: %v", r.Version, err)}
	}
	tb, err := saferead.Whole(target, 4<<20, saferead.AnyOwner)
	if err != nil {
		return nil, []string{fmt.Sprintf("the installed PHP's php.ini settings are not carried onto PHP %s: %v", r.Version, err)}
	}
	in.Target = phpini.Parse(tb)
	known := r.Manifest.Directives
	if len(known) == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		known, err = iniDirectives(ctx, r.FS, r.Version)
		cancel()
		if err != nil {
			notes = append(notes, "which settings PHP "+r.Version+" knows is not known ("+err.Error()+"): every changed setting is carried")
		}
	}
	if len(known) > 0 {
		in.Known = map[string]bool{}
		for _, k := range append(known, fpmDirectives...) {
			in.Known[k] = true
		}
	}
	c := phpini.Carry(in)
	return carriedText(c, from, r, unread, notes)
}

// carriedText is c as ini lines (a comment first) and lab up's notes.
func carriedText(c phpini.Carried, from string, r *Root, unread, notes []string) (lines, out []string) {
	out = notes
	for _, u := range unread {
		out = append(out, "PHP "+from+"'s configuration: not read: "+u)
	}
	if len(c.Lines) > 0 {
		lines = append([]string{fmt.Sprintf("; carried from PHP %s's configuration (changed from Debian's defaults):", from)}, c.Lines...)
		out = append(out, fmt.Sprintf("PHP %s's settings carried onto Debian %s's php.ini: %s", from, r.Manifest.Debian, strings.Join(c.Settings, ", ")))
	} else {
		out = append(out, fmt.Sprintf("PHP %s's configuration changes no setting of Debian's defaults that PHP %s does not already have: Debian %s's php.ini as shipped", from, r.Version, r.Manifest.Debian))
	}
	for _, d := range c.Dropped {
		out = append(out, "not carried: "+d)
	}
	for _, d := range c.Deprecated {
		out = append(out, "carried, but "+d)
	}
	return lines, out
}

// phpKnobs are the php.ini settings the lab's knobs set (after the
// carried ones): not carried.
func phpKnobs() map[string]bool {
	m := map[string]bool{}
	for _, k := range knob.All() {
		if k.Component == knob.PHP {
			m[k.Name] = true
		}
	}
	return m
}
