package site

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// NameMatch says how a server name matches a host, in nginx's order of
// preference: an exact name, the longest wildcard starting with "*" (or
// a ".example.com"), the longest wildcard ending with "*", then the first
// regular expression.
type NameMatch int

const (
	NoMatch NameMatch = iota
	RegexMatch
	TrailingWildcard
	LeadingWildcard
	ExactMatch
)

// normalizeHost is a Host as nginx compares it: lower case, without a
// port or a trailing dot.
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	return strings.TrimSuffix(h, ".")
}

// matchName says how the server name pattern matches host (normalized)
// and, for wildcards, the pattern's length (longer wins).
func matchName(pattern, host string) (NameMatch, int) {
	switch {
	case pattern == "" || pattern == "_":
		return NoMatch, 0
	case strings.HasPrefix(pattern, "~"):
		re, err := regexp.Compile(pattern[1:])
		if err != nil || !re.MatchString(host) {
			return NoMatch, 0
		}
		return RegexMatch, 0
	case strings.HasPrefix(pattern, "*."):
		if strings.HasSuffix(host, pattern[1:]) && len(host) > len(pattern)-1 {
			return LeadingWildcard, len(pattern)
		}
	case strings.HasPrefix(pattern, "."):
		if host == pattern[1:] || strings.HasSuffix(host, pattern) {
			return LeadingWildcard, len(pattern)
		}
	case strings.HasSuffix(pattern, ".*"):
		if strings.HasPrefix(host, pattern[:len(pattern)-1]) && len(host) > len(pattern)-1 {
			return TrailingWildcard, len(pattern)
		}
	case pattern == host:
		return ExactMatch, len(pattern)
	}
	return NoMatch, 0
}

// MatchName returns the indexes of the vhosts nginx would choose for a
// request with Host name: those with the best kind of match (every
// listen's, so a port-80 server and a port-443 server of one name are
// both returned), in order.
func MatchName(vs []Vhost, name string) []int {
	host := normalizeHost(name)
	best, bestLen := NoMatch, 0
	var out []int
	for i, v := range vs {
		kind, n := NoMatch, 0
		for _, p := range v.Names {
			k, l := matchName(p, host)
			if k > kind || k == kind && l > n {
				kind, n = k, l
			}
		}
		switch {
		case kind == NoMatch:
		case kind > best || kind == best && (kind == LeadingWildcard || kind == TrailingWildcard) && n > bestLen:
			best, bestLen, out = kind, n, []int{i}
		case kind == best && (kind != LeadingWildcard && kind != TrailingWildcard || n == bestLen):
			out = append(out, i)
		}
	}
	if best == RegexMatch && len(out) > 1 {
		// nginx takes the first regular expression that matches.
		out = out[:1]
	}
	return out
}

// MatchDir returns the indexes of the vhosts whose document root is dir
// (both cleaned).
func MatchDir(vs []Vhost, dir string) []int {
	dir = filepath.Clean(dir)
	var out []int
	for i, v := range vs {
		if v.Root != "" && v.Root == dir {
			out = append(out, i)
		}
	}
	return out
}

// NoMatchError is a NAME or DIR no vhost serves.
type NoMatchError struct {
	Query string
	// Vhosts are every vhost of the host, for the message.
	Vhosts []Vhost
	// Suggest is a name that would match (the www. form added or
	// removed), "" when none.
	Suggest string
}

func (e *NoMatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no vhost serves %q", e.Query)
	if e.Suggest != "" {
		fmt.Fprintf(&b, " (%q does: give that name)", e.Suggest)
	}
	b.WriteString(": give one of the server names or document roots of ")
	if len(e.Vhosts) == 0 {
		b.WriteString("the web server's configuration, which has none")
		return b.String()
	}
	b.WriteString("these: ")
	var ls []string
	for i, v := range e.Vhosts {
		if i == 20 {
			ls = append(ls, fmt.Sprintf("and %d more", len(e.Vhosts)-20))
			break
		}
		ls = append(ls, v.label())
	}
	b.WriteString(strings.Join(ls, "; "))
	return b.String()
}

// AmbiguousError is a NAME or DIR that several different sites match.
type AmbiguousError struct {
	Query      string
	Candidates []Vhost
}

func (e *AmbiguousError) Error() string {
	var ls []string
	for _, v := range e.Candidates {
		ls = append(ls, v.label())
	}
	return fmt.Sprintf("%q matches %d vhosts that serve different sites: %s; name one by a server name that only it has (phptune site NAME), or by its document root if that is its own",
		e.Query, len(e.Candidates), strings.Join(ls, "; "))
}

// Choose picks the vhost of a site among the matches of query (indexes
// into vs): those that run PHP (fastcgi_pass; Apache's proxy_fcgi or
// mod_php, so nginx in front of Apache with proxy_pass only yields to
// it) when any does, and among them, when they all serve one document
// root (a port-80 server and its TLS twin), the one that serves TLS.
// Matches serving different roots, or (for a directory) with different
// server names, are ambiguous. It returns the chosen one and the others of the same site.
func Choose(vs []Vhost, matches []int, query string, byDir bool) (chosen int, same []int, err error) {
	if len(matches) == 0 {
		return -1, nil, &NoMatchError{Query: query, Vhosts: vs, Suggest: suggest(vs, query, byDir)}
	}
	cands := matches
	var php []int
	for _, i := range matches {
		if vs[i].runsPHP() {
			php = append(php, i)
		}
	}
	if len(php) > 0 {
		cands = php
	}
	key := func(v Vhost) string {
		if byDir {
			ns := append([]string(nil), v.Names...)
			sort.Strings(ns)
			return strings.Join(ns, " ")
		}
		return v.Root
	}
	first := key(vs[cands[0]])
	for _, i := range cands[1:] {
		if key(vs[i]) != first {
			var list []Vhost
			for _, j := range cands {
				list = append(list, vs[j])
			}
			return -1, nil, &AmbiguousError{Query: query, Candidates: list}
		}
	}
	chosen = cands[0]
	for _, i := range cands {
		if vs[i].TLS() && !vs[chosen].TLS() {
			chosen = i
		}
	}
	for _, i := range matches {
		if i != chosen {
			same = append(same, i)
		}
	}
	return chosen, same, nil
}

// suggest is the www. form of a name (added or removed) that a vhost
// serves, when the name itself matches none.
func suggest(vs []Vhost, query string, byDir bool) string {
	if byDir {
		return ""
	}
	h := normalizeHost(query)
	alt := "www." + h
	if s, ok := strings.CutPrefix(h, "www."); ok {
		alt = s
	}
	if len(matchNames(vs, alt)) > 0 {
		return alt
	}
	return ""
}
