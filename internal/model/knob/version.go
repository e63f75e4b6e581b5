package knob

import (
	"fmt"
	"strconv"
	"strings"
)

// VersionError is a knob the PHP version at hand does not have.
type VersionError struct {
	Knob    string
	Value   string
	Version string // the host's PHP version
	MinPHP  string
	MaxPHP  string
}

func (e *VersionError) Error() string {
	switch {
	case e.MinPHP != "" && e.MaxPHP != "":
		return fmt.Sprintf("%s=%s: %s exists in PHP %s to %s; this host runs PHP %s", e.Knob, e.Value, e.Knob, e.MinPHP, e.MaxPHP, e.Version)
	case e.MinPHP != "":
		return fmt.Sprintf("%s=%s: %s needs PHP %s or newer; this host runs PHP %s", e.Knob, e.Value, e.Knob, e.MinPHP, e.Version)
	}
	return fmt.Sprintf("%s=%s: %s was removed after PHP %s; this host runs PHP %s", e.Knob, e.Value, e.Knob, e.MaxPHP, e.Version)
}

// Available reports whether PHP version ("8.2" or "8.2.36") has knob k:
// version is at least k.MinPHP and, by its branch, at most k.MaxPHP. A
// version it cannot read is taken to have every knob (nothing to refuse
// on).
func (k Knob) Available(version string) bool {
	v, ok := branch(version)
	if !ok {
		return true
	}
	if lo, ok := branch(k.MinPHP); ok && v.less(lo) {
		return false
	}
	if hi, ok := branch(k.MaxPHP); ok && hi.less(v) {
		return false
	}
	return true
}

// Versions says which PHP versions have k, for a listing: " (PHP 8.0
// and later)"; "" for every version.
func (k Knob) Versions() string {
	switch {
	case k.MinPHP != "" && k.MaxPHP != "":
		return " (PHP " + k.MinPHP + " to " + k.MaxPHP + ")"
	case k.MinPHP != "":
		return " (PHP " + k.MinPHP + " and later)"
	case k.MaxPHP != "":
		return " (PHP up to " + k.MaxPHP + ")"
	}
	return ""
}

// Unavailable lists the knobs c sets away from the defaults (what apply
// writes: Overrides) that PHP version does not have, in registry order.
func (c Config) Unavailable(version string) []*VersionError {
	set := map[string]string{}
	for _, o := range c.Overrides() {
		name, value, _ := strings.Cut(o, "=")
		set[name] = value
	}
	var out []*VersionError
	for _, k := range registry {
		value, ok := set[k.Name]
		if !ok || k.Available(version) {
			continue
		}
		out = append(out, &VersionError{Knob: k.Name, Value: value, Version: version, MinPHP: k.MinPHP, MaxPHP: k.MaxPHP})
	}
	return out
}

// phpBranch is a PHP major.minor; hasMinor says the version gave the
// minor ("8" alone is every 8.x to Available, and no one branch to
// SameBranch).
type phpBranch struct {
	major, minor int
	hasMinor     bool
}

func (a phpBranch) less(b phpBranch) bool {
	return a.major < b.major || a.major == b.major && a.minor < b.minor
}

// branch reads the major.minor of "8", "8.2" or "8.2.36" ("8.2.36-1+deb12"
// too: what follows the minor's digits is ignored). It is phptune's one
// reader of a PHP version's branch.
func branch(v string) (phpBranch, bool) {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	major, err := strconv.Atoi(parts[0])
	if err != nil || major < 0 {
		return phpBranch{}, false
	}
	b := phpBranch{major: major}
	if len(parts) > 1 {
		minor := parts[1]
		if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
			minor = minor[:i]
		}
		if b.minor, err = strconv.Atoi(minor); err != nil || b.minor < 0 {
			return phpBranch{}, false
		}
		b.hasMinor = true
	}
	return b, true
}

// Branch is v's major.minor ("8.2.36-1+deb12" -> "8.2"), "" when v
// names none.
func Branch(v string) string {
	b, ok := branch(v)
	if !ok || !b.hasMinor {
		return ""
	}
	return strconv.Itoa(b.major) + "." + strconv.Itoa(b.minor)
}

// SameBranch reports whether two PHP versions are of one major.minor
// ("8.2.36" and "8.2"); a version without its minor is of no one branch.
func SameBranch(a, b string) bool {
	ba, okA := branch(a)
	bb, okB := branch(b)
	return okA && okB && ba.hasMinor && bb.hasMinor && ba.major == bb.major && ba.minor == bb.minor
}
