package tune

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/model/knob"
)

// A challenge is written either as the name of a known one
// (search.KnownChallenges: "pm=ondemand", "jit=tracing,64M") or as a set of
// knob assignments separated by ";" ("opcache.jit=tracing;
// opcache.jit_buffer_size=64M"). Options.Challenges holds them as written,
// so runs stored before free-form challenges existed (known names only)
// read the same.

// SplitChallengeFlag turns one --challenges value into challenge specs:
// "grid" is the exhaustive grid's challenges; a known name is itself;
// comma-separated known names are each one (the old syntax); any other
// value with "=" is one set of assignments (checked by ParseChallenge).
func SplitChallengeFlag(value string) ([]string, error) {
	v := strings.TrimSpace(value)
	if v == "grid" {
		var out []string
		for _, c := range search.GridChallenges {
			out = append(out, c.Name)
		}
		return out, nil
	}
	if known(v) {
		return []string{v}, nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	if names, ok := knownList(parts); ok {
		return names, nil
	}
	if !strings.Contains(v, "=") {
		for _, p := range parts {
			if !known(p) {
				return nil, fmt.Errorf("unknown challenge %q: give a known name (%s), grid, or knob assignments such as 'opcache.jit=tracing;opcache.jit_buffer_size=64M'", p, knownNames())
			}
		}
	}
	if _, err := ParseChallenge(v); err != nil {
		if len(parts) > 1 && !strings.Contains(v, ";") {
			return nil, fmt.Errorf("%w (a value with commas lists known challenge names, %s; knob assignments are separated by ';')", err, knownNames())
		}
		return nil, err
	}
	return []string{v}, nil
}

// knownList reads comma-separated parts as known challenge names, a name
// that holds a comma itself ("jit=tracing,64M") taken whole: the default
// list as --help prints it reads back. ok is false when a part is no
// known name.
func knownList(parts []string) ([]string, bool) {
	var out []string
	for i := 0; i < len(parts); i++ {
		if i+1 < len(parts) && known(parts[i]+","+parts[i+1]) {
			out = append(out, parts[i]+","+parts[i+1])
			i++
			continue
		}
		if !known(parts[i]) {
			return nil, false
		}
		out = append(out, parts[i])
	}
	return out, true
}

func known(name string) bool {
	return slices.ContainsFunc(search.KnownChallenges(), func(c search.Challenge) bool { return c.Name == name })
}

func knownNames() string {
	var n []string
	for _, c := range search.KnownChallenges() {
		n = append(n, c.Name)
	}
	return strings.Join(n, ", ")
}

// ParseChallenge reads a challenge spec: a known name, or knob
// assignments separated by ";", each checked against the knob model (name,
// value, range). The result's Group is the knobs it sets, sorted and
// joined by "+"; Challenges merges groups that share a knob.
func ParseChallenge(spec string) (search.Challenge, error) {
	spec = strings.TrimSpace(spec)
	for _, c := range search.KnownChallenges() {
		if c.Name == spec {
			return c, nil
		}
	}
	if spec == "" {
		return search.Challenge{}, fmt.Errorf("empty challenge: give a known name (%s) or knob assignments such as pm=ondemand", knownNames())
	}
	ch := search.Challenge{Name: spec}
	var knobs []string
	cfg := knob.Config{}
	for _, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return search.Challenge{}, fmt.Errorf("challenge %q: %q is not KNOB=VALUE (assignments are separated by ';', e.g. opcache.jit=tracing;opcache.jit_buffer_size=64M)", spec, part)
		}
		if _, dup := cfg[name]; dup {
			return search.Challenge{}, fmt.Errorf("challenge %q: %s is set twice", spec, name)
		}
		if err := cfg.Set(name, value); err != nil {
			return search.Challenge{}, fmt.Errorf("challenge %q: %q: %w", spec, part, err)
		}
		knobs = append(knobs, name)
		ch.Set = append(ch.Set, name+"="+cfg[name])
	}
	if len(ch.Set) == 0 {
		return search.Challenge{}, fmt.Errorf("challenge %q sets no knob", spec)
	}
	sort.Strings(knobs)
	ch.Group = strings.Join(knobs, "+")
	return ch, nil
}

// Challenges resolves specs (as Options.Challenges holds them) into the
// search's challenges. Challenges that set a common knob share a group, so
// the search adopts at most one of them: a known challenge keeps its group
// name and lends it to the free-form ones it overlaps.
func Challenges(specs []string) ([]search.Challenge, error) {
	out := make([]search.Challenge, 0, len(specs))
	for _, s := range specs {
		c, err := ParseChallenge(s)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o search.Challenge) bool { return o.Name == c.Name }) {
			continue
		}
		out = append(out, c)
	}
	// Union-find over knobs: parent[i] is challenge i's representative.
	parent := make([]int, len(out))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	byKnob := map[string]int{}
	for i, c := range out {
		for _, a := range c.Set {
			k, _, _ := strings.Cut(a, "=")
			if j, ok := byKnob[k]; ok {
				ri, rj := find(i), find(j)
				if ri != rj {
					parent[max(ri, rj)] = min(ri, rj) // the earliest leads
				}
			} else {
				byKnob[k] = i
			}
		}
	}
	groups := make([]string, len(out))
	for i := range out {
		r := find(i)
		if groups[r] == "" {
			// The component's name: the first known challenge's group, else
			// the first challenge's.
			groups[r] = out[r].Group
			for j := range out {
				if find(j) == r && known(out[j].Name) {
					groups[r] = out[j].Group
					break
				}
			}
		}
	}
	for i := range out {
		out[i].Group = groups[find(i)]
	}
	return out, nil
}
