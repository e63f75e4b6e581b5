package phpbuild

import (
	"fmt"
	"sort"
	"strings"
)

// AptSource is one repository the system installs packages from.
type AptSource struct {
	URI        string
	Suite      string
	Components []string
	SignedBy   string // a keyring path, or "" for apt's default keyrings
}

// stanzaFields reads a deb822 stanza's fields by lower-case name, a
// continuation line (starting with a space or tab) joined to its field
// with a space.
func stanzaFields(stanza []string) map[string]string {
	f := map[string]string{}
	var last string
	for _, line := range stanza {
		if (line[0] == ' ' || line[0] == '\t') && last != "" {
			f[last] += " " + strings.TrimSpace(line)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			last = ""
			continue
		}
		last = strings.ToLower(strings.TrimSpace(k))
		f[last] = strings.TrimSpace(v)
	}
	return f
}

// ParseDeb822 reads a deb822 .sources file (Types:, URIs:, Suites:,
// Components:, Signed-By:; "Enabled: no" stanzas skipped) and returns the
// binary ("deb") repositories it lists, one per URI and suite.
func ParseDeb822(text string) []AptSource {
	var out []AptSource
	for _, stanza := range splitStanzas(text) {
		f := stanzaFields(stanza)
		if strings.EqualFold(f["enabled"], "no") || !hasWord(f["types"], "deb") {
			continue
		}
		signed := strings.TrimSpace(f["signed-by"])
		if strings.Contains(signed, "BEGIN PGP") || strings.ContainsAny(signed, " \t") {
			signed = "" // an inline key or several: let apt use its default keyrings
		}
		for _, uri := range strings.Fields(f["uris"]) {
			for _, suite := range strings.Fields(f["suites"]) {
				out = append(out, AptSource{URI: uri, Suite: suite, Components: strings.Fields(f["components"]), SignedBy: signed})
			}
		}
	}
	return out
}

func splitStanzas(text string) [][]string {
	var out [][]string
	var cur []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// ParseOneLine reads a one-line-style sources.list ("deb [opts] URI suite
// component...") and returns its "deb" repositories.
func ParseOneLine(text string) []AptSource {
	var out []AptSource
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fs := strings.Fields(line)
		if len(fs) < 3 || fs[0] != "deb" {
			continue
		}
		fs = fs[1:]
		var signed string
		if strings.HasPrefix(fs[0], "[") {
			var opts []string
			for len(fs) > 0 {
				opts = append(opts, fs[0])
				done := strings.HasSuffix(fs[0], "]")
				fs = fs[1:]
				if done {
					break
				}
			}
			for _, o := range strings.Fields(strings.Trim(strings.Join(opts, " "), "[]")) {
				if v, ok := strings.CutPrefix(o, "signed-by="); ok && !strings.Contains(v, ",") {
					signed = v
				}
			}
		}
		if len(fs) < 2 {
			continue
		}
		out = append(out, AptSource{URI: fs[0], Suite: fs[1], Components: fs[2:], SignedBy: signed})
	}
	return out
}

// DebSrcList writes phptune's private sources list: a deb-src line for each
// of the system's repositories (deduplicated, in a stable order). Values
// that would break the one-line format are left out.
func DebSrcList(srcs []AptSource) (string, error) {
	seen := map[string]bool{}
	var lines []string
	for _, s := range srcs {
		if !safeAptWord(s.URI) || !safeAptWord(s.Suite) || (s.SignedBy != "" && !safeAptWord(s.SignedBy)) {
			continue
		}
		comps := []string{}
		for _, c := range s.Components {
			if safeAptWord(c) {
				comps = append(comps, c)
			}
		}
		if len(comps) == 0 && !strings.HasSuffix(s.Suite, "/") {
			continue
		}
		line := "deb-src "
		if s.SignedBy != "" {
			line += "[signed-by=" + s.SignedBy + "] "
		}
		line += s.URI + " " + s.Suite
		if len(comps) > 0 {
			line += " " + strings.Join(comps, " ")
		}
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return "", fmt.Errorf("no Debian repository found in the system's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d) to fetch the PHP source from; give one with --source DIR|TARBALL")
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

func safeAptWord(s string) bool {
	if s == "" || len(s) > 512 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c == '[' || c == ']' || c == '#' || c == 0x7f {
			return false
		}
	}
	return true
}
