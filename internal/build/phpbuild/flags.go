package phpbuild

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/build/setup"
)

// Debian's debian/rules for php8.2 configures each SAPI in its own build
// directory (fpm_config, cgi_config, cli_config... each COMMON_CONFIG plus
// the SAPI's own flags) and builds the extensions it ships as shared objects
// in yet another (ext_config). phptune builds fpm, cgi and cli in one tree
// from fpm_config — the binary a lab runs — with cgi turned on, so that
// every choice that decides whether the distro's shared extensions load
// (the PHP API, ZTS off, debug off, --with-layout=GNU and --libdir, which
// make the extension directory /usr/lib/php/API) is the fpm package's.
//
// The rules are evaluated by make itself (as the build account: they run
// dpkg-parsechangelog and sed), which prints the variables on lines of the
// form NAME=VALUE; the values are shell words as the rules pass them to
// configure. ParseRulesOutput and SplitWords read that; ConfigureArgs keeps
// what phptune wants.

// RulesVars are the variables phptune asks debian/rules for.
var RulesVars = []string{"fpm_config", "cgi_config", "opcache_config", "DEB_CFLAGS_MAINT_APPEND", "DEB_LDFLAGS_MAINT_APPEND",
	"DEB_BUILD_MAINT_OPTIONS", "PHP_ZEND_VERSION", "PHP_NAME_VERSION"}

// RulesEval is the make fragment that prints RulesVars and extra (each
// extension's NAME_config, see ExtensionArgs), one per line, with make's
// $(info) (no shell: the values keep their quoting).
func RulesEval(extra ...string) string {
	var b strings.Builder
	b.WriteString("phptune-print-vars: ;")
	for _, v := range append(slices.Clone(RulesVars), extra...) {
		fmt.Fprintf(&b, " $(info PHPTUNE %s=$(%s))", v, v)
	}
	return b.String()
}

// ErrRules wraps every problem with the output of debian/rules.
var ErrRules = errors.New("debian/rules")

// ParseRulesOutput reads the lines RulesEval prints. Other lines (make's
// own chatter, warnings of the rules) are ignored; every one of RulesVars
// must appear.
func ParseRulesOutput(out string) (map[string]string, error) {
	vars := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "PHPTUNE ")
		if !ok {
			continue
		}
		name, value, ok := strings.Cut(rest, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: malformed line %q", ErrRules, line)
		}
		vars[name] = strings.TrimSpace(value)
	}
	var missing []string
	for _, v := range RulesVars {
		if _, ok := vars[v]; !ok {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: make printed no value for %s (is this a Debian php source package?)", ErrRules, strings.Join(missing, ", "))
	}
	if vars["fpm_config"] == "" {
		return nil, fmt.Errorf("%w: fpm_config is empty", ErrRules)
	}
	return vars, nil
}

// SplitWords splits s into words as a POSIX shell does for a plain command
// line: blanks separate words, single quotes keep everything, double quotes
// keep everything but \\, \", \$ and \`, a backslash outside quotes keeps
// the next character. Expansions ($x, `x`, globs) are refused: a configure
// line from the rules has none left after make has run.
func SplitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("trailing backslash in %q", s)
			}
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
				inWord = true
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				} else if s[i] == '$' || s[i] == '`' {
					return nil, fmt.Errorf("shell expansion %q in %q", s[i:], s)
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote in %q", s)
			}
			inWord = true
		case c == '$' || c == '`' || c == '*' || c == '?' || c == '[' || c == ';' || c == '|' || c == '&' || c == '<' || c == '>' || c == '(' || c == ')':
			return nil, fmt.Errorf("shell syntax %q in %q: not a plain list of words", string(c), s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// dropped are Debian's flags phptune leaves out, with why.
var dropped = map[string]string{
	"--config-cache":              "a cache shared between Debian's SAPI builds",
	"--cache-file":                "a cache shared between Debian's SAPI builds",
	"--disable-cgi":               "phptune builds php-cgi too (training, checks)",
	"--with-libevent-dir":         "obsolete, ignored by configure",
	"--enable-fastcgi":            "obsolete, ignored by configure",
	"--enable-force-cgi-redirect": "obsolete, ignored by configure",
	"--enable-opcache-file":       "obsolete, ignored by configure",
}

// minimalKeep are the flags a --minimal build keeps of Debian's: where
// things are (so the extension directory and ini paths are the distro's),
// and the choices that make the ABI the distro's (no debug, no ZTS).
var minimalKeep = map[string]bool{
	"--prefix": true, "--libdir": true, "--libexecdir": true, "--datadir": true, "--sysconfdir": true,
	"--localstatedir": true, "--mandir": true, "--program-suffix": true, "--with-layout": true,
	"--with-config-file-path": true, "--with-config-file-scan-dir": true, "--build": true, "--host": true,
	"--disable-debug": true, "--disable-rpath": true, "--disable-static": true, "--with-pic": true,
	"--without-pear": true, "--disable-phpdbg": true, "--enable-fpm": true, "--enable-cli": true,
	"--with-fpm-user": true, "--with-fpm-group": true, "--disable-all": true,
}

// optName is a configure option's name: "--with-zlib=/usr" → "--with-zlib".
func optName(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	return name
}

// ConfigureArgs turns Debian's fpm_config (words) into phptune's configure
// line: Debian's flags without those in dropped, cgi enabled, and for a
// minimal build only the flags of minimalKeep (--disable-all stays, so the
// build has fpm, cgi and cli and no optional extension). Debian's
// opcache_config is added: opcache is always built (shared, as Debian
// builds it) because the distro's opcache.so only loads into the exact
// PHP release it was built with (8.2.36's needs core symbols 8.2.32 lacks),
// and a PHP without opcache is not what a lab runs. A ZTS or debug build is
// refused: the distro's extensions would not load into it.
func ConfigureArgs(fpmConfig, opcacheConfig []string, minimal bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range fpmConfig {
		name := optName(a)
		switch name {
		case "--enable-maintainer-zts", "--enable-zts", "--enable-debug":
			return nil, fmt.Errorf("%w: %s: the distro's extensions would not load into such a build", ErrRules, a)
		}
		if _, ok := dropped[name]; ok {
			continue
		}
		if minimal && !minimalKeep[name] {
			continue
		}
		out = append(out, a)
		seen[name] = true
	}
	for _, need := range []string{"--enable-fpm", "--enable-cli", "--disable-all", "--with-layout"} {
		if !seen[need] {
			return nil, fmt.Errorf("%w: fpm_config has no %s; phptune only builds from Debian's php rules", ErrRules, need)
		}
	}
	out = append(out, "--enable-cgi")
	for _, a := range opcacheConfig {
		if name := optName(a); strings.HasPrefix(name, "--enable-") && !seen[name] && dropped[name] == "" {
			out = append(out, a)
			seen[name] = true
		}
	}
	if !seen["--enable-opcache"] {
		out = append(out, "--enable-opcache")
	}
	return out, nil
}

// depByFlag names the Debian package a configure option needs beyond the
// compiler (from debian/control's Build-Depends).
var depByFlag = map[string]string{
	"--with-openssl":         "libssl-dev",
	"--with-password-argon2": "libargon2-dev",
	"--with-external-pcre":   "libpcre2-dev",
	"--with-libxml":          "libxml2-dev",
	"--with-sodium":          "libsodium-dev",
	"--with-zlib":            "zlib1g-dev",
	"--with-fpm-acl":         "libacl1-dev",
	"--with-fpm-systemd":     "libsystemd-dev",
	"--with-fpm-apparmor":    "libapparmor-dev",
	"--enable-dtrace":        "systemtap-sdt-dev",
	"--with-system-tzdata":   "tzdata",
	// The shared extensions Debian's ext_config builds (ExtensionArgs).
	"--with-curl":        "libcurl4-openssl-dev",
	"--enable-mbstring":  "libonig-dev",
	"--with-xsl":         "libxslt1-dev",
	"--with-ffi":         "libffi-dev",
	"--with-external-gd": "libgd-dev",
	"--with-libedit":     "libedit-dev",
	"--with-gmp":         "libgmp-dev",
	"--with-bz2":         "libbz2-dev",
	"--enable-intl":      "libicu-dev",
	"--with-zip":         "libzip-dev",
	"--with-sqlite3":     "libsqlite3-dev",
	"--with-pdo-sqlite":  "libsqlite3-dev",
	"--with-pgsql":       "libpq-dev",
	"--with-pdo-pgsql":   "libpq-dev",
	"--with-ldap":        "libldap2-dev",
	"--with-tidy":        "libtidy-dev",
}

// BaseDeps are what every build needs (setup.BuildDeps): the compiler and
// make, autoconf for buildconf (Debian's patches change configure.ac),
// pkg-config, dpkg-dev (dpkg-buildflags, the makefiles debian/rules
// includes, dpkg-source).
var BaseDeps = setup.BuildDeps

// Deps lists the packages a configure line needs, sorted.
func Deps(args []string) []string {
	set := map[string]bool{}
	for _, d := range BaseDeps {
		set[d] = true
	}
	for _, a := range args {
		if d, ok := depByFlag[optName(a)]; ok {
			set[d] = true
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// BuildFlagsEnv is the environment dpkg-buildflags needs to print Debian's
// CFLAGS, CPPFLAGS and LDFLAGS for these rules (hardening, the maintainer's
// additions such as -O2 -fno-strict-aliasing).
func BuildFlagsEnv(vars map[string]string) []string {
	return []string{
		"DEB_BUILD_MAINT_OPTIONS=" + vars["DEB_BUILD_MAINT_OPTIONS"],
		"DEB_CFLAGS_MAINT_APPEND=" + vars["DEB_CFLAGS_MAINT_APPEND"],
		"DEB_LDFLAGS_MAINT_APPEND=" + vars["DEB_LDFLAGS_MAINT_APPEND"],
	}
}

// CheckExtraCFLAGS checks the compiler flags a user adds to Debian's
// (--cflags): optimisation (-O…), code generation and tuning (-f…, -m…),
// debug info (-g…), warnings (-W… but not -Wl,/-Wa,/-Wp,, which hand words
// to other programs) and macros (-D…, -U…). Anything else (an output file,
// a linker option, a word that is not a flag) would break or change the
// build in ways its record could not tell, so it is refused with the word.
func CheckExtraCFLAGS(s string) ([]string, error) {
	words := strings.Fields(s)
	for _, w := range words {
		ok := extraCFLAGRE.MatchString(w)
		for _, p := range []string{"-Wl,", "-Wa,", "-Wp,"} {
			if strings.HasPrefix(w, p) {
				ok = false
			}
		}
		if !ok {
			return nil, fmt.Errorf("--cflags %q: %q is not a compiler flag phptune passes on; give optimisation, code-generation or macro flags such as -O3, -fno-semantic-interposition, -march=native, -DNDEBUG", s, w)
		}
		if why := variantOwnedFlag(w); why != "" {
			return nil, fmt.Errorf("--cflags %q: %q %s", s, w, why)
		}
	}
	return words, nil
}

// variantOwnedFlag says why w cannot be added by --cflags ("" when it
// can). Profiles (-fprofile-partial-training aside) and link-time
// optimisation are what --variant does, at the step where each belongs:
// a -fprofile-use in every compile would read profiles that do not exist
// yet, and -flto in a plain build would hit the global register variables
// docs/build.md describes. Sanitizers and coverage need their runtime
// linked into php-fpm and every extension.
func variantOwnedFlag(w string) string {
	if w == "-fprofile-partial-training" {
		// How -fprofile-use treats code the training never ran (optimised
		// for speed, not size): a choice about the profile, not a profile.
		return ""
	}
	for _, p := range []string{"-fprofile", "-fauto-profile", "-fbranch-probabilities", "-flto", "-fno-lto", "-fwhole-program"} {
		if strings.HasPrefix(w, p) {
			return "is chosen by --variant (pgo trains and uses the profile, pgo-lto adds -flto=auto where it links); drop it and pick the variant"
		}
	}
	for _, p := range []string{"-fsanitize", "-ftest-coverage", "-fcondition-coverage"} {
		if strings.HasPrefix(w, p) {
			return "needs its runtime linked into php-fpm and every extension, which a build does not do; build PHP by hand for that"
		}
	}
	return ""
}

var extraCFLAGRE = regexp.MustCompile(`^-(O[0-3sgz]?|O(fast)|f[a-z0-9][a-z0-9_=,.+-]*|m[a-z0-9][a-z0-9_=,.+-]*|g[a-z0-9]*|W[a-z][a-z0-9_=-]*|[DU][A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.]*)?)$`)
