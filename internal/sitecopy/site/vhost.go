package site

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
)

// Vhost is one nginx server block, or one Apache <VirtualHost>, as
// discovery sees it: where it is defined, the names and addresses it
// serves, its document root and where it passes PHP.
type Vhost struct {
	Server  string   `json:"server"` // "nginx" or "apache"
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Names   []string `json:"names"`
	Listens []Listen `json:"listens"`
	// Root is the document root: the server's root, else its "location /"
	// root, else its PHP location's, cleaned and absolute (relative ones
	// against nginx's prefix); "" when none is set (nginx's compiled-in
	// html directory) or it holds a variable (RootVariable).
	Root         string `json:"root"`
	RootAt       string `json:"root_at,omitempty"`
	RootVariable bool   `json:"root_variable,omitempty"`
	// FastCGI are the addresses its fastcgi_pass directives send to
	// ("unix:/path", "tcp:HOST:PORT"), first one first; FastCGIAt is
	// where the first is written. FastCGIVariable: a fastcgi_pass names
	// a variable, which discovery does not follow.
	FastCGI         []string `json:"fastcgi,omitempty"`
	FastCGIAt       string   `json:"fastcgi_at,omitempty"`
	FastCGIVariable bool     `json:"fastcgi_variable,omitempty"`
	// Proxy are its proxy_pass targets as written (a PHP site behind
	// another web server).
	Proxy []string `json:"proxy,omitempty"`
	// Return is a server-level "return" (a redirect-only server).
	Return string `json:"return,omitempty"`
	// ModPHP is set for an Apache vhost whose PHP runs in mod_php (no
	// FastCGI hand-off reaches it and the module is loaded).
	ModPHP *ModPHP `json:"mod_php,omitempty"`
	// PHPValues are an Apache vhost's php_value, php_flag,
	// php_admin_value and php_admin_flag settings (mod_php's), keyed as
	// a pool's overrides are ("php_admin_value[memory_limit]").
	PHPValues map[string]string `json:"php_values,omitempty"`
	// phpValuesAt is where each of PHPValues is set ("file:line").
	phpValuesAt map[string]string
	// Rules are, for an Apache vhost, its directives a lab carries
	// (ApacheRules).
	Rules *ApacheRules `json:"apache_rules,omitempty"`
	// AccessLogs are the access logs it writes: its own, else the
	// server level's (AccessLog.Shared).
	AccessLogs []AccessLog `json:"access_logs,omitempty"`
	// Uncarried are, for an nginx server block, what of it a lab's nginx
	// does not do (nginxUncarried), one line each.
	Uncarried []string `json:"uncarried,omitempty"`
}

// Listen is one listen directive: its address, port, and whether it
// serves TLS or is the default server of its address.
type Listen struct {
	Addr          string `json:"addr"`
	Port          int    `json:"port"`
	TLS           bool   `json:"tls"`
	DefaultServer bool   `json:"default_server,omitempty"`
	At            string `json:"at"`
}

// TLS reports whether any of v's listens serves TLS: PHP then sees
// HTTPS=on and port 443 (or the listen's port).
func (v Vhost) TLS() bool {
	for _, l := range v.Listens {
		if l.TLS {
			return true
		}
	}
	return false
}

// Port is the port PHP sees as SERVER_PORT: the first TLS listen's when
// there is one, else the first listen's (80 when none is written).
func (v Vhost) Port() int {
	for _, l := range v.Listens {
		if l.TLS {
			return l.Port
		}
	}
	if len(v.Listens) > 0 {
		return v.Listens[0].Port
	}
	return 80
}

// At is "file:line".
func (v Vhost) At() string { return fmt.Sprintf("%s:%d", v.File, v.Line) }

// Host is the Host header a request for the site carries: the first
// server name that is a plain name (no wildcard, regex or "_"), "" when
// there is none.
func (v Vhost) Host() string {
	for _, n := range v.Names {
		if n != "" && n != "_" && !strings.ContainsAny(n, "*?~") && !strings.HasPrefix(n, ".") {
			return n
		}
	}
	return ""
}

// label names v in messages: its names and where it is defined.
func (v Vhost) label() string {
	names := strings.Join(v.Names, " ")
	if names == "" {
		names = "(no server_name)"
	}
	root := v.Root
	if root == "" {
		root = "no root"
	}
	if v.Server == "apache" {
		return fmt.Sprintf("Apache %s at %s (DocumentRoot %s)", names, v.At(), root)
	}
	return fmt.Sprintf("%s at %s (root %s)", names, v.At(), root)
}

// NginxVhosts reads the server blocks of an nginx configuration dumped by
// nginx -T. prefix is nginx's -p ("" for Debian's compiled-in
// /usr/share/nginx), against which relative roots resolve.
func NginxVhosts(c *livehost.NginxConf, prefix string) []Vhost {
	if prefix == "" {
		prefix = "/usr/share/nginx"
	}
	var out []Vhost
	n := 0
	for _, d := range c.HTTP {
		if d.Name != "server" || !d.IsBlock {
			continue
		}
		if n >= len(c.Servers) {
			break
		}
		s := c.Servers[n]
		n++
		v := Vhost{Server: "nginx", File: s.File, Line: s.Line, Names: lowerAll(s.Names)}
		for _, l := range s.Listens {
			v.Listens = append(v.Listens, parseListen(l))
		}
		for _, p := range s.FastCGI {
			if len(p.Addrs) == 0 {
				v.FastCGIVariable = true
				continue
			}
			if v.FastCGIAt == "" {
				v.FastCGIAt = fmt.Sprintf("%s:%d", p.File, p.Line)
			}
			for _, a := range p.Addrs {
				v.FastCGI = appendOnce(v.FastCGI, a)
			}
		}
		var serverRoot, slashRoot, phpRoot *livehost.NginxDirective
		for i := range d.Block {
			x := &d.Block[i]
			switch {
			case x.Name == "root" && len(x.Args) == 1:
				serverRoot = x
			case x.Name == "return" && len(x.Args) >= 1:
				v.Return = strings.Join(x.Args, " ")
			case x.Name == "location" && x.IsBlock:
				r := blockRoot(x.Block)
				if r == nil {
					continue
				}
				args := strings.Join(x.Args, " ")
				if args == "/" && slashRoot == nil {
					slashRoot = r
				} else if strings.Contains(args, "php") && phpRoot == nil {
					phpRoot = r
				}
			}
			if x.IsBlock {
				walkProxy(x.Block, &v)
			} else if x.Name == "proxy_pass" && len(x.Args) == 1 {
				v.Proxy = appendOnce(v.Proxy, x.Args[0])
			}
		}
		v.AccessLogs = nginxAccessLogs(d.Block, c.HTTP, prefix)
		v.Uncarried = nginxUncarried(d.Block, c.HTTP)
		for _, r := range []*livehost.NginxDirective{serverRoot, slashRoot, phpRoot} {
			if r == nil {
				continue
			}
			v.RootAt = r.At()
			if strings.Contains(r.Args[0], "$") {
				v.RootVariable = true
				break
			}
			root := r.Args[0]
			if !filepath.IsAbs(root) {
				root = filepath.Join(prefix, root)
			}
			v.Root = filepath.Clean(root)
			break
		}
		out = append(out, v)
	}
	return out
}

func blockRoot(ds []livehost.NginxDirective) *livehost.NginxDirective {
	for i := range ds {
		if (ds[i].Name == "root" || ds[i].Name == "alias") && len(ds[i].Args) == 1 {
			if ds[i].Name == "alias" {
				return nil
			}
			return &ds[i]
		}
	}
	return nil
}

func walkProxy(ds []livehost.NginxDirective, v *Vhost) {
	for _, x := range ds {
		if x.Name == "proxy_pass" && len(x.Args) == 1 {
			v.Proxy = appendOnce(v.Proxy, x.Args[0])
		}
		if x.IsBlock {
			walkProxy(x.Block, v)
		}
	}
}

func lowerAll(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if strings.HasPrefix(n, "~") {
			out = append(out, n) // a regex keeps its case
			continue
		}
		out = append(out, strings.ToLower(n))
	}
	return out
}

// parseListen reads a listen directive: "80", "[::]:443 ssl",
// "127.0.0.1:8080 default_server", "unix:/path", "443 quic".
func parseListen(d livehost.NginxDirective) Listen {
	l := Listen{Addr: d.Args[0], Port: 80, At: d.At()}
	a := d.Args[0]
	switch {
	case strings.HasPrefix(a, "unix:"):
		l.Port = 0
	case strings.Trim(a, "0123456789") == "":
		l.Port, _ = strconv.Atoi(a)
	default:
		if _, p, err := net.SplitHostPort(a); err == nil {
			l.Port, _ = strconv.Atoi(p)
		}
	}
	for _, o := range d.Args[1:] {
		switch {
		case o == "ssl" || o == "quic":
			l.TLS = true
		case o == "default_server" || o == "default":
			l.DefaultServer = true
		}
	}
	if l.Port == 443 {
		l.TLS = true
	}
	return l
}
