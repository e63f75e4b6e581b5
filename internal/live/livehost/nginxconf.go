package livehost

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// NginxDirective is one directive of an nginx configuration, where it
// came from and, for a block (events, http, server, location, upstream),
// what it holds with its includes expanded.
type NginxDirective struct {
	Name string
	Args []string
	File string
	Line int
	// Start and End are the byte offsets in File of the directive's name
	// and just past its ";" or its block's "}"; BodyStart, of a block,
	// is just past its "{".
	Start, End, BodyStart int
	Block                 []NginxDirective
	IsBlock               bool
	// From is the include directive this one was read through (nil in
	// the main file).
	From *NginxDirective
}

// At is "file:line", for messages.
func (d NginxDirective) At() string { return fmt.Sprintf("%s:%d", d.File, d.Line) }

// NginxInclude is one include directive and the files of the dump it
// matched.
type NginxInclude struct {
	Glob    string // absolute
	File    string
	Line    int
	Matches []string
}

// NginxServer is one server block of the http context.
type NginxServer struct {
	File    string
	Line    int
	Listens []NginxDirective // its listen directives
	Names   []string         // server_name
	// FastCGI are the fastcgi_pass directives of the server and its
	// locations, each with its targets.
	FastCGI    []FastCGIPass
	AccessLogs []NginxDirective
}

// FastCGIPass is one fastcgi_pass and where it sends requests: its
// target as written, and the addresses it resolves to ("unix:/path" or
// "tcp:HOST:PORT"; an upstream's servers, in order).
type FastCGIPass struct {
	Target   string
	Addrs    []string
	Upstream string // the upstream's name, when Target names one
	File     string
	Line     int
	// KeepConn is fastcgi_keep_conn where it is (inherited from the
	// server and http levels): on lets nginx keep the connection for an
	// upstream's keepalive.
	KeepConn bool
}

// NginxConf is an nginx configuration as nginx -T dumped it: the files it
// consists of and the directives of each context, includes expanded.
type NginxConf struct {
	Main string // the main file (the dump's first)
	// Files are the dumped files in the dump's order, with their text
	// exactly as nginx read it.
	Files []string
	Text  map[string][]byte
	// Root holds the main context's directives; Events and HTTP the
	// children of the events and http blocks.
	Root         []NginxDirective
	Events       []NginxDirective
	HTTP         []NginxDirective
	EventsBlock  *NginxDirective
	HTTPBlock    *NginxDirective
	HTTPIncludes []NginxInclude
	Servers      []NginxServer
	// Upstreams maps an upstream's name to its servers' addresses.
	Upstreams map[string][]string
	// UpstreamKeepalive maps an upstream's name to its keepalive (0: none).
	UpstreamKeepalive map[string]int
	// Unreached lists dumped files no include of the configuration names
	// (a forged "# configuration file" line in a file's text shows so).
	Unreached []string
}

// dumpHeader starts each file in nginx -T's output.
const dumpHeader = "# configuration file "

// maxExpanded bounds the directives of a configuration, includes
// expanded (a file including itself twice would double them each time).
const maxExpanded = 50000

// maxDumpFiles bounds the files one dump may hold.
const maxDumpFiles = 10000

// SplitNginxDump splits nginx -T's standard output into its files: each
// is "# configuration file PATH:" on a line of its own, the file's text,
// and one newline nginx adds.
func SplitNginxDump(out []byte) (files []string, text map[string][]byte, err error) {
	text = map[string][]byte{}
	var cur string
	var body []byte
	flush := func() {
		if cur == "" {
			return
		}
		body = bytes.TrimSuffix(body, []byte("\n"))
		if _, dup := text[cur]; !dup {
			files = append(files, cur)
			text[cur] = body
		}
	}
	rest := out
	for len(rest) > 0 {
		line, tail, found := bytes.Cut(rest, []byte("\n"))
		full := rest[:len(line)]
		if found {
			full = rest[:len(line)+1]
		}
		rest = tail
		if s := string(line); strings.HasPrefix(s, dumpHeader) && strings.HasSuffix(s, ":") {
			path := strings.TrimSuffix(strings.TrimPrefix(s, dumpHeader), ":")
			if filepath.IsAbs(path) && filepath.Clean(path) == path {
				flush()
				if len(files) >= maxDumpFiles {
					return nil, nil, fmt.Errorf("nginx -T: more than %d files", maxDumpFiles)
				}
				cur, body = path, nil
				continue
			}
		}
		if cur == "" {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return nil, nil, fmt.Errorf("nginx -T: %.60q before the first %q line", line, dumpHeader)
		}
		body = append(body, full...)
	}
	flush()
	if len(files) == 0 {
		return nil, nil, errors.New("nginx -T printed no configuration file")
	}
	return files, text, nil
}

// ParseNginxDump reads nginx -T's standard output: the files, the
// directives of each context with the file and line each came from
// (includes expanded in place, their globs matched against the dumped
// files as nginx matched them against the disk), the http-level include
// globs, every server's listen, server_name, fastcgi_pass targets
// (upstream names resolved to their servers) and access_log.
func ParseNginxDump(out []byte) (*NginxConf, error) {
	files, text, err := SplitNginxDump(out)
	if err != nil {
		return nil, err
	}
	c := &NginxConf{Main: files[0], Files: files, Text: text, Upstreams: map[string][]string{}, UpstreamKeepalive: map[string]int{}}
	parsed := map[string][]NginxDirective{}
	for _, f := range files {
		ds, err := parseNginx(f, text[f])
		if err != nil {
			return nil, err
		}
		parsed[f] = ds
	}
	reached := map[string]bool{c.Main: true}
	prefix := filepath.Dir(c.Main)
	// expand replaces each include in ds by the directives of the files
	// it matches; context is the block ds is in ("main", "http", ...).
	var expand func(ds []NginxDirective, depth int, context string) ([]NginxDirective, error)
	total := 0
	expand = func(ds []NginxDirective, depth int, context string) ([]NginxDirective, error) {
		if depth > 16 {
			return nil, errors.New("nginx -T: includes nested deeper than 16")
		}
		var out []NginxDirective
		for _, d := range ds {
			if total++; total > maxExpanded {
				return nil, fmt.Errorf("nginx -T: more than %d directives with includes expanded", maxExpanded)
			}
			if d.Name == "include" && !d.IsBlock && len(d.Args) == 1 {
				glob := d.Args[0]
				if !filepath.IsAbs(glob) {
					glob = filepath.Join(prefix, glob)
				}
				inc := NginxInclude{Glob: glob, File: d.File, Line: d.Line}
				for _, f := range files {
					if ok, _ := filepath.Match(glob, f); ok || f == glob {
						inc.Matches = append(inc.Matches, f)
					}
				}
				sort.Strings(inc.Matches)
				if context == "http" {
					c.HTTPIncludes = append(c.HTTPIncludes, inc)
				}
				for _, f := range inc.Matches {
					reached[f] = true
					from := d
					sub, err := expand(withFrom(parsed[f], &from), depth+1, context)
					if err != nil {
						return nil, err
					}
					out = append(out, sub...)
				}
				continue
			}
			if d.IsBlock {
				sub, err := expand(d.Block, depth, d.Name)
				if err != nil {
					return nil, err
				}
				d.Block = sub
			}
			out = append(out, d)
		}
		return out, nil
	}
	root, err := expand(parsed[c.Main], 0, "main")
	if err != nil {
		return nil, err
	}
	c.Root = root
	for i := range c.Root {
		d := &c.Root[i]
		switch {
		case d.Name == "events" && d.IsBlock && c.EventsBlock == nil:
			c.EventsBlock, c.Events = d, d.Block
		case d.Name == "http" && d.IsBlock && c.HTTPBlock == nil:
			c.HTTPBlock, c.HTTP = d, d.Block
		}
	}
	for _, f := range files {
		if !reached[f] {
			c.Unreached = append(c.Unreached, f)
		}
	}
	c.collectHTTP()
	return c, nil
}

func withFrom(ds []NginxDirective, from *NginxDirective) []NginxDirective {
	out := make([]NginxDirective, len(ds))
	for i, d := range ds {
		if d.From == nil {
			d.From = from
		}
		out[i] = d
	}
	return out
}

// collectHTTP reads the http context's upstreams and servers.
func (c *NginxConf) collectHTTP() {
	for _, d := range c.HTTP {
		if d.Name != "upstream" || !d.IsBlock || len(d.Args) != 1 {
			continue
		}
		var addrs []string
		for _, s := range d.Block {
			switch {
			case s.Name == "server" && len(s.Args) >= 1:
				addrs = append(addrs, nginxAddr(s.Args[0]))
			case s.Name == "keepalive" && len(s.Args) == 1:
				n := 0
				fmt.Sscanf(s.Args[0], "%d", &n)
				c.UpstreamKeepalive[d.Args[0]] = n
			}
		}
		c.Upstreams[d.Args[0]] = addrs
	}
	for _, d := range c.HTTP {
		if d.Name != "server" || !d.IsBlock {
			continue
		}
		s := NginxServer{File: d.File, Line: d.Line}
		var walk func(ds []NginxDirective, keepConn bool)
		walk = func(ds []NginxDirective, keepConn bool) {
			keepConn = keepConnIn(ds, keepConn)
			for _, x := range ds {
				switch {
				case x.Name == "listen" && len(x.Args) >= 1:
					s.Listens = append(s.Listens, x)
				case x.Name == "server_name":
					s.Names = append(s.Names, x.Args...)
				case x.Name == "access_log" && len(x.Args) >= 1:
					s.AccessLogs = append(s.AccessLogs, x)
				case x.Name == "fastcgi_pass" && len(x.Args) == 1:
					p := FastCGIPass{Target: x.Args[0], File: x.File, Line: x.Line, KeepConn: keepConn}
					name := strings.TrimPrefix(x.Args[0], "http://")
					if addrs, ok := c.Upstreams[name]; ok {
						p.Upstream, p.Addrs = name, addrs
					} else if !strings.Contains(x.Args[0], "$") {
						p.Addrs = []string{nginxAddr(x.Args[0])}
					}
					s.FastCGI = append(s.FastCGI, p)
				}
				if x.IsBlock {
					walk(x.Block, keepConn)
				}
			}
		}
		walk(d.Block, keepConnIn(c.HTTP, false))
		c.Servers = append(c.Servers, s)
	}
}

// keepConnIn is fastcgi_keep_conn as the directives of one level set it
// (inherited when they do not).
func keepConnIn(ds []NginxDirective, inherited bool) bool {
	for _, d := range ds {
		if d.Name == "fastcgi_keep_conn" && len(d.Args) == 1 {
			inherited = d.Args[0] == "on"
		}
	}
	return inherited
}

// nginxAddr writes an nginx address (unix:/path, host:port, a bare port
// or host) as "unix:/path" or "tcp:HOST:PORT", as php-fpm pools are
// written (listenAddr).
func nginxAddr(a string) string {
	if p, ok := strings.CutPrefix(a, "unix:"); ok {
		return "unix:" + p
	}
	if !strings.Contains(a, ":") {
		if strings.Trim(a, "0123456789") == "" {
			return "tcp:127.0.0.1:" + a
		}
		return "tcp:" + a + ":80"
	}
	if strings.HasPrefix(a, "localhost:") {
		return "tcp:127.0.0.1:" + strings.TrimPrefix(a, "localhost:")
	}
	return "tcp:" + a
}

// HTTPDirectives returns the http-level directives called name (the
// http block's own and those of files it includes directly, not those
// inside its servers or other blocks).
func (c *NginxConf) HTTPDirectives(name string) []NginxDirective { return named(c.HTTP, name) }

// MainDirectives returns the main-context directives called name.
func (c *NginxConf) MainDirectives(name string) []NginxDirective { return named(c.Root, name) }

// EventsDirectives returns the events-context directives called name.
func (c *NginxConf) EventsDirectives(name string) []NginxDirective { return named(c.Events, name) }

// named is the directives of ds called name, in order.
func named(ds []NginxDirective, name string) []NginxDirective {
	var out []NginxDirective
	for _, d := range ds {
		if d.Name == name {
			out = append(out, d)
		}
	}
	return out
}

// First is the first argument of the last directive called name in ds
// (nginx refuses most duplicates; the last is what a patch changes),
// and whether there is one.
func First(ds []NginxDirective) (string, bool) {
	if len(ds) == 0 || len(ds[len(ds)-1].Args) == 0 {
		return "", false
	}
	return ds[len(ds)-1].Args[0], true
}

// AccessLogs are the access logs the configuration writes: the http
// level's and the servers' access_log paths (not off, syslog or a path
// with variables), relative ones resolved against prefix (nginx's -p;
// Debian's compiled-in /usr/share/nginx when "").
func (c *NginxConf) AccessLogs(prefix string) []string {
	if prefix == "" {
		prefix = "/usr/share/nginx"
	}
	ds := c.HTTPDirectives("access_log")
	for _, s := range c.Servers {
		ds = append(ds, s.AccessLogs...)
	}
	return logPaths(ds, prefix)
}

// PoolAccessLogs are the access logs of the servers that pass requests to
// the php-fpm pool listening on listen ("unix:/path" or "tcp:HOST:PORT"):
// a server's own access_log, else the http level's (paths as AccessLogs
// gives them). passes says whether any server passes to it: without one,
// nginx's logs say nothing of the pool.
func (c *NginxConf) PoolAccessLogs(listen, prefix string) (logs []string, passes bool) {
	if prefix == "" {
		prefix = "/usr/share/nginx"
	}
	var ds []NginxDirective
	for _, s := range c.Servers {
		if !passesTo(s, listen) {
			continue
		}
		passes = true
		if len(s.AccessLogs) > 0 {
			ds = append(ds, s.AccessLogs...)
		} else {
			ds = append(ds, c.HTTPDirectives("access_log")...)
		}
	}
	return logPaths(ds, prefix), passes
}

// passesTo says whether a fastcgi_pass of server s sends to listen.
func passesTo(s NginxServer, listen string) bool {
	for _, p := range s.FastCGI {
		for _, a := range p.Addrs {
			if a == listen {
				return true
			}
		}
	}
	return false
}

// logPaths are the paths of access_log directives ds: not off, syslog or
// a path with variables; relative ones resolved against prefix; each once.
func logPaths(ds []NginxDirective, prefix string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range ds {
		if len(d.Args) == 0 {
			continue
		}
		p := d.Args[0]
		if p == "off" || strings.HasPrefix(p, "syslog:") || strings.Contains(p, "$") {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(prefix, p)
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
