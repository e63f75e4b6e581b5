package phproot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// ErrParse is wrapped by the parsers' errors.
var ErrParse = errors.New("malformed input")

// maxLine bounds one line of an archive index (a long Description or
// Provides line is a few kilobytes).
const maxLine = 1 << 20

// Package is one binary package of an archive's Packages index.
type Package struct {
	Name     string
	Version  string
	Provides []string // virtual package names, versions dropped
}

// Index is a Packages index read by ParsePackages: the real packages by
// name, and for each virtual name the real packages that provide it.
type Index struct {
	Packages map[string]Package
	Provided map[string][]string
}

// Resolve returns the real package that installs name: name itself when
// it is a real package, else the first (by name) of those that provide
// it; ok is false when neither.
func (ix *Index) Resolve(name string) (pkg string, ok bool) {
	if _, ok := ix.Packages[name]; ok {
		return name, true
	}
	if ps := ix.Provided[name]; len(ps) > 0 {
		return ps[0], true
	}
	return "", false
}

// ParsePackages reads a Debian Packages index (deb822 stanzas; only
// Package, Version and Provides are kept). A stanza without Package is
// skipped; a line longer than maxLine is an error.
func ParsePackages(r io.Reader) (*Index, error) {
	ix := &Index{Packages: map[string]Package{}, Provided: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var cur Package
	flush := func() {
		if cur.Name != "" {
			ix.Packages[cur.Name] = cur
			for _, v := range cur.Provides {
				ix.Provided[v] = append(ix.Provided[v], cur.Name)
			}
		}
		cur = Package{}
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // a continuation: only Description's, here
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Package":
			cur.Name = v
		case "Version":
			cur.Version = v
		case "Provides":
			cur.Provides = parseProvides(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("Packages index: %w: %v", ErrParse, err)
	}
	flush()
	for v := range ix.Provided {
		sort.Strings(ix.Provided[v])
	}
	return ix, nil
}

// parseProvides reads "a (= 1), b, c" into its names.
func parseProvides(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if f := strings.Fields(p); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// FileHash is one file a Release lists under SHA256.
type FileHash struct {
	SHA256 string
	Size   int64
}

// Release is what phptune reads of a suite's (signature-checked) Release
// text.
type Release struct {
	Origin   string
	Codename string
	Suite    string
	Files    map[string]FileHash // by path under the suite's directory
}

// ParseRelease reads a Release file's Origin, Codename, Suite and its
// SHA256 list ("HASH SIZE PATH" lines, each one space-indented).
func ParseRelease(text []byte) (*Release, error) {
	rel := &Release{Files: map[string]FileHash{}}
	inSHA := false
	for _, line := range bytes.Split(text, []byte("\n")) {
		l := strings.TrimRight(string(line), "\r")
		if l == "" {
			continue
		}
		if l[0] == ' ' {
			if inSHA {
				if err := rel.addFile(l); err != nil {
					return nil, err
				}
			}
			continue
		}
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		inSHA = k == "SHA256"
		switch k {
		case "Origin":
			rel.Origin = v
		case "Codename":
			rel.Codename = v
		case "Suite":
			rel.Suite = v
		}
	}
	return rel, nil
}

// addFile adds one "HASH SIZE PATH" line of the SHA256 list.
func (rel *Release) addFile(l string) error {
	f := strings.Fields(l)
	if len(f) != 3 || len(f[0]) != 64 || strings.Trim(f[0], "0123456789abcdef") != "" {
		return fmt.Errorf("Release: %w: SHA256 line %q", ErrParse, l)
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("Release: %w: size in %q", ErrParse, l)
	}
	rel.Files[f[2]] = FileHash{SHA256: f[0], Size: n}
	return nil
}

// ParseModules reads `php -m`: one module a line under "[PHP Modules]"
// and "[Zend Modules]", returned lower-case ("Zend OPcache" becomes
// "zend opcache"), sorted, each once. Other lines (a warning printed
// before the list) are left out.
func ParseModules(out string) []string {
	seen := map[string]bool{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			in = l == "[PHP Modules]" || l == "[Zend Modules]"
		case in && validModule(l):
			seen[strings.ToLower(l)] = true
		}
	}
	out2 := make([]string, 0, len(seen))
	for m := range seen {
		out2 = append(out2, m)
	}
	sort.Strings(out2)
	return out2
}

// validModule is a module name as PHP prints it: letters, digits, '_'
// and the space of "Zend OPcache", at most 64 bytes.
func validModule(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == ' ') {
			return false
		}
	}
	return true
}
