package phpbuild

import (
	"fmt"
	"regexp"
	"strings"
)

// A source package of another Debian release (php8.4 from trixie) names
// its build dependencies for that release. Before downloading it, a
// --php build checks them against this system's archive: every relation
// (one of its alternatives) must be installed or installable here at a
// version it accepts. What only the other release has is listed and the
// build refused; the packages the configure line needs are installed
// afterwards as for the installed PHP (checkDeps).

// Alt is one alternative of a build-dependency relation: "libgd-dev (>=
// 2.1.0) [linux-any]".
type Alt struct {
	Name    string
	Op      string // "", "<<", "<=", "=", ">=", ">>"
	Version string
	Arch    []string // the [...] restriction, "" when none
}

// Relation is one comma-separated build dependency: any of its
// alternatives satisfies it.
type Relation []Alt

func (r Relation) String() string {
	var alts []string
	for _, a := range r {
		s := a.Name
		if a.Op != "" {
			s += " (" + a.Op + " " + a.Version + ")"
		}
		alts = append(alts, s)
	}
	return strings.Join(alts, " | ")
}

var (
	debPkgNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]{0,99}$`)
	debRelRE     = regexp.MustCompile(`^([^\s(\[<:]+)(?::[a-z0-9-]+)?\s*(?:\(\s*(<<|<=|=|>=|>>)\s*([^\s)]+)\s*\))?\s*(?:\[([^\]]*)\])?\s*(?:<[^>]*>\s*)*$`)
)

// BuildDepends returns the Build-Depends field (continuation lines
// joined) of the stanza of apt-cache showsrc's output whose Version is
// version; ok is false when no stanza has it.
func BuildDepends(showsrc, version string) (field string, ok bool) {
	for _, stanza := range splitStanzas(showsrc) {
		f := stanzaFields(stanza)
		if f["version"] == version {
			return f["build-depends"], true
		}
	}
	return "", false
}

// ParseRelations reads a Build-Depends field. A relation or alternative
// that is not well formed is an error: the field is the network's.
func ParseRelations(field string) ([]Relation, error) {
	var out []Relation
	for _, part := range strings.Split(field, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var rel Relation
		for _, alt := range strings.Split(part, "|") {
			m := debRelRE.FindStringSubmatch(strings.TrimSpace(alt))
			if m == nil || !debPkgNameRE.MatchString(m[1]) || (m[3] != "" && !debVersionRE.MatchString(m[3])) {
				return nil, fmt.Errorf("the source's Build-Depends has %q, not a package relation", strings.TrimSpace(alt))
			}
			rel = append(rel, Alt{Name: m[1], Op: m[2], Version: m[3], Arch: strings.Fields(m[4])})
		}
		out = append(out, rel)
	}
	return out, nil
}

// archApplies reports whether an alternative restricted to arch ("[linux-any
// !hurd-any]") applies on a Linux host of architecture host ("amd64").
func archApplies(arch []string, host string) bool {
	if len(arch) == 0 {
		return true
	}
	match := func(a string) bool {
		return a == host || a == "any" || a == "linux-any" || a == "linux-"+host || a == "any-"+host
	}
	negated := strings.HasPrefix(arch[0], "!")
	for _, a := range arch {
		if negated {
			if match(strings.TrimPrefix(a, "!")) {
				return false
			}
		} else if match(a) {
			return true
		}
	}
	return negated
}

// Archive is what the dependency check asks of this system's packages.
type Archive interface {
	// Versions are the versions of name installed or installable here
	// (none for a package this release does not have).
	Versions(name string) []string
	// Provided reports whether an installable package provides name (a
	// virtual package such as dh-apache2).
	Provided(name string) bool
	// Satisfies reports whether version have meets "op want".
	Satisfies(have, op, want string) bool
}

// Unsatisfied are the relations no alternative of which this system's
// archive satisfies on host; alternatives for other architectures are
// skipped, and a relation with none left for host is satisfied.
func Unsatisfied(rels []Relation, a Archive, host string) []Relation {
	var out []Relation
	for _, rel := range rels {
		ok, applies := false, false
		for _, alt := range rel {
			if !archApplies(alt.Arch, host) {
				continue
			}
			applies = true
			for _, v := range a.Versions(alt.Name) {
				if alt.Op == "" || a.Satisfies(v, alt.Op, alt.Version) {
					ok = true
					break
				}
			}
			if !ok && alt.Op == "" && a.Provided(alt.Name) {
				ok = true
			}
			if ok {
				break
			}
		}
		if applies && !ok {
			out = append(out, rel)
		}
	}
	return out
}

// ParsePolicy reads `apt-cache policy NAME...`: each package's installed
// and candidate versions ("(none)" left out).
func ParsePolicy(out string) map[string][]string {
	res := map[string][]string{}
	var cur string
	for _, line := range strings.Split(out, "\n") {
		if line != "" && line[0] != ' ' && strings.HasSuffix(line, ":") {
			cur = strings.TrimSuffix(line, ":")
			if !debPkgNameRE.MatchString(cur) {
				cur = ""
			}
			continue
		}
		t := strings.TrimSpace(line)
		for _, k := range []string{"Installed:", "Candidate:"} {
			if v, ok := strings.CutPrefix(t, k); ok && cur != "" {
				v = strings.TrimSpace(v)
				if v != "(none)" && debVersionRE.MatchString(v) {
					res[cur] = append(res[cur], v)
				}
			}
		}
	}
	return res
}

// ParseReverseProvides reads `apt-cache showpkg NAME`'s "Reverse Provides:"
// section and reports whether it names a package.
func ParseReverseProvides(out string) bool {
	_, after, ok := strings.Cut(out, "\nReverse Provides:")
	if !ok {
		return false
	}
	for _, line := range strings.Split(after, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 && debPkgNameRE.MatchString(f[0]) {
			return true
		}
	}
	return false
}
