package livehost

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
)

// ApacheProxy is one place Apache's configuration hands requests to a
// FastCGI server: SetHandler "proxy:unix:/path|fcgi://..." or
// "proxy:fcgi://host:port", or ProxyPassMatch/ProxyPass to fcgi:// or
// unix:/path|fcgi://.
type ApacheProxy struct {
	Addr string // "unix:/path" or "tcp:HOST:PORT"
	File string
	Line int
	// VirtualHost is the <VirtualHost> it is inside ("" at server
	// level: every virtual host).
	VirtualHost string
}

// ApacheVhost is one line of apache2ctl -S: a name-based or default
// virtual host, its address and where it is defined.
type ApacheVhost struct {
	Addr string // "*:80"
	Name string
	File string
	Line int
}

// ParseApacheProxies reads one Apache configuration file's FastCGI
// hand-offs and its Include/IncludeOptional arguments (as written).
// Continuation lines ("\" at the end) are joined; comments skipped.
func ParseApacheProxies(file string, text []byte) (proxies []ApacheProxy, includes []string) {
	includes = scanApacheDirectives(text, func(words []string, line int, vhost string) {
		switch strings.ToLower(words[0]) {
		case "sethandler":
			if len(words) > 1 {
				if a, ok := apacheFCGIAddr(strings.TrimPrefix(words[1], "proxy:")); ok && strings.HasPrefix(words[1], "proxy:") {
					proxies = append(proxies, ApacheProxy{Addr: a, File: file, Line: line, VirtualHost: vhost})
				}
			}
		case "proxypassmatch", "proxypass":
			if len(words) > 2 {
				if a, ok := apacheFCGIAddr(words[2]); ok {
					proxies = append(proxies, ApacheProxy{Addr: a, File: file, Line: line, VirtualHost: vhost})
				}
			}
		}
	})
	return proxies, includes
}

// scanApacheDirectives reads an Apache configuration file's directives
// for directive (its words, quotes removed; the line it starts on; the
// <VirtualHost> it is inside, "" at server level) and returns its
// Include/IncludeOptional arguments as written. Continuation lines ("\"
// at the end) are joined; comments skipped.
func scanApacheDirectives(text []byte, directive func(words []string, line int, vhost string)) (includes []string) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), maxConf)
	vhost := ""
	var joined string
	start := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if joined == "" {
			start = n
		}
		if strings.HasSuffix(line, "\\") {
			joined += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line, joined = strings.TrimSpace(joined+line), ""
		if line == "" || line[0] == '#' {
			continue
		}
		words := apacheWords(line)
		if len(words) == 0 {
			continue
		}
		switch strings.ToLower(words[0]) {
		case "<virtualhost":
			vhost = strings.TrimSuffix(strings.Join(words[1:], " "), ">")
		case "</virtualhost>":
			vhost = ""
		case "include", "includeoptional":
			if len(words) > 1 {
				includes = append(includes, words[1])
			}
		default:
			directive(words, start, vhost)
		}
	}
	return includes
}

// apacheWords splits a directive line into words, double quotes
// grouping (and removed).
func apacheWords(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, have := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, have = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

// apacheFCGIAddr reads a FastCGI target: "unix:/path|fcgi://..." or
// "fcgi://host:port/...".
func apacheFCGIAddr(t string) (string, bool) {
	if p, ok := strings.CutPrefix(t, "unix:"); ok {
		sock, rest, _ := strings.Cut(p, "|")
		if sock == "" || !strings.HasPrefix(rest, "fcgi://") && rest != "" {
			return "", false
		}
		return "unix:" + sock, true
	}
	if hp, ok := strings.CutPrefix(t, "fcgi://"); ok {
		hp, _, _ = strings.Cut(hp, "/")
		if hp == "" {
			return "", false
		}
		if !strings.Contains(hp, ":") {
			hp += ":9000" // mod_proxy_fcgi's default port
		}
		if strings.HasPrefix(hp, "localhost:") {
			hp = "127.0.0.1:" + strings.TrimPrefix(hp, "localhost:")
		}
		return "tcp:" + hp, true
	}
	return "", false
}

// ReadApache reads ROOT/etc/apache2/apache2.conf and the files its
// Include/IncludeOptional globs name (relative ones against the server
// root, ROOT/etc/apache2), and returns every FastCGI hand-off. A host
// without apache2.conf has none (nil, nil). Files are read without
// following a link at their last component, except those of the
// *-enabled directories, which Debian makes links to *-available: their
// targets must stay inside ROOT/etc/apache2.
func ReadApache(root string) ([]ApacheProxy, error) {
	var out []ApacheProxy
	err := walkApacheConf(root, func(path string, b []byte) []string {
		ps, incs := ParseApacheProxies(path, b)
		out = append(out, ps...)
		return incs
	})
	return out, err
}

// ApacheDocumentRoots reads Apache's configuration as ReadApache does and
// returns every DocumentRoot it sets (nil, nil without apache2.conf).
func ApacheDocumentRoots(root string) ([]ApacheRoot, error) {
	var out []ApacheRoot
	err := walkApacheConf(root, func(path string, b []byte) []string {
		rs, incs := ParseApacheDocumentRoots(path, b)
		out = append(out, rs...)
		return incs
	})
	return out, err
}

// walkApacheConf reads ROOT/etc/apache2/apache2.conf and the files its
// Include/IncludeOptional globs name, as visit (which parses one file and
// returns its includes, as written) reports them, depth first in
// Apache's order. A host without apache2.conf has nothing to visit.
func walkApacheConf(root string, visit func(path string, b []byte) []string) error {
	serverRoot := filepath.Join(root, "etc", "apache2")
	conf := filepath.Join(serverRoot, "apache2.conf")
	if _, err := os.Lstat(conf); err != nil {
		return nil
	}
	seen := map[string]bool{}
	var read func(path string, depth int) error
	read = func(path string, depth int) error {
		if depth > 8 || seen[path] || len(seen) > 1000 {
			return nil
		}
		seen[path] = true
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil // a dangling link: Apache's IncludeOptional skips it too
		}
		if rel, err := filepath.Rel(serverRoot, real); err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("%s leads to %s, outside %s", path, real, serverRoot)
		}
		b, err := saferead.Whole(real, maxConf, saferead.AnyOwner)
		if err != nil {
			return err
		}
		for _, inc := range visit(path, b) {
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(serverRoot, inc)
			} else if root != "/" && !strings.HasPrefix(inc, root+"/") {
				inc = filepath.Join(root, inc)
			}
			matches, _ := filepath.Glob(inc)
			if st, err := os.Stat(inc); err == nil && st.IsDir() {
				matches, _ = filepath.Glob(filepath.Join(inc, "*"))
			}
			sort.Strings(matches)
			for _, m := range matches {
				if err := read(m, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return read(conf, 0)
}

// ApacheRoot is one DocumentRoot of Apache's configuration.
type ApacheRoot struct {
	Dir  string // as written, quotes removed
	File string
	Line int
	// VirtualHost is the <VirtualHost> it is inside ("" at server
	// level).
	VirtualHost string
}

// ParseApacheDocumentRoots reads one Apache configuration file's
// DocumentRoot directives and its Include/IncludeOptional arguments (as
// written), as ParseApacheProxies reads its FastCGI hand-offs.
func ParseApacheDocumentRoots(file string, text []byte) (roots []ApacheRoot, includes []string) {
	includes = scanApacheDirectives(text, func(words []string, line int, vhost string) {
		if strings.EqualFold(words[0], "DocumentRoot") && len(words) > 1 {
			roots = append(roots, ApacheRoot{Dir: words[1], File: file, Line: line, VirtualHost: vhost})
		}
	})
	return roots, includes
}

var apacheSLine = regexp.MustCompile(`^\s*(?:(\S+:\d+)\s+)?(?:default server|port \d+ namevhost|alias)\s+(\S+)\s+\((.+):(\d+)\)\s*$`)

// ParseApacheS reads apache2ctl -S's virtual host lines:
//
//	*:80                   www.example.com (/etc/apache2/sites-enabled/000-default.conf:1)
//	         port 80 namevhost www.example.com (/etc/apache2/sites-enabled/000-default.conf:1)
func ParseApacheS(out []byte) []ApacheVhost {
	var vs []ApacheVhost
	addr := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) >= 1 && strings.Contains(f[0], ":") && !strings.HasPrefix(line, " ") {
			if f[0] == "VirtualHost" || strings.HasSuffix(f[0], ":") {
				continue
			}
			addr = f[0]
		}
		m := apacheSLine.FindStringSubmatch(line)
		if m == nil {
			// "*:80   name (file:line)": an address with one vhost
			f := strings.Fields(line)
			if len(f) == 3 && strings.Contains(f[0], ":") && strings.HasPrefix(f[2], "(") {
				if file, ln, ok := fileLine(f[2]); ok {
					vs = append(vs, ApacheVhost{Addr: f[0], Name: f[1], File: file, Line: ln})
				}
			}
			continue
		}
		a := m[1]
		if a == "" {
			a = addr
		}
		ln, err := strconv.Atoi(m[4])
		if err != nil || ln <= 0 {
			continue
		}
		v := ApacheVhost{Addr: a, Name: m[2], File: m[3], Line: ln}
		if len(vs) == 0 || vs[len(vs)-1] != v {
			vs = append(vs, v)
		}
	}
	return vs
}

func fileLine(s string) (string, int, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	return s[:i], n, err == nil && n > 0 && i > 0
}
