package site

import (
	"fmt"
	"net"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
)

// ModPHP is PHP run inside Apache (mod_php): the module loaded, the MPM
// it runs under, and the php.ini of Apache's SAPI.
type ModPHP struct {
	Module   string `json:"module"`
	LoadedAt string `json:"loaded_at"`
	Version  string `json:"version,omitempty"`
	MPM      string `json:"mpm,omitempty"`
	// Ini is /etc/php/VERSION/apache2/php.ini (the root's copy when it
	// has one).
	Ini string `json:"ini,omitempty"`
}

var modPHPVersion = regexp.MustCompile(`libphp(\d+\.\d+)\.so$`)

// ApacheVhosts turns Apache's <VirtualHost> blocks into vhosts as
// discovery sees them. PHP goes where the vhost's own FastCGI hand-off
// sends it, else where a server-level one does (Debian's
// conf-enabled/php8.2-fpm.conf), else to mod_php when it is loaded. The
// first vhost of each address is marked its default (Apache answers a
// name no vhost of the address has with it).
func ApacheVhosts(c *livehost.ApacheConfig, root string) []Vhost {
	if c == nil {
		return nil
	}
	firstOf := map[string]bool{}
	var out []Vhost
	for _, a := range c.Vhosts {
		v := Vhost{Server: "apache", File: a.File, Line: a.Line}
		sn := a.ServerName
		if sn == "" {
			sn = c.ServerName // inherited from the main server
		}
		if sn != "" {
			// "[scheme://]name[:port]"
			if i := strings.Index(sn, "://"); i >= 0 {
				sn = sn[i+3:]
			}
			n, _, _ := strings.Cut(sn, ":")
			v.Names = append(v.Names, n)
		}
		v.Names = append(v.Names, a.Aliases...)
		for _, addr := range a.Addrs {
			l := apacheListen(addr, a.SSL)
			l.At = fmt.Sprintf("%s:%d", a.File, a.Line)
			key := apacheAddrKey(addr)
			if !firstOf[key] {
				firstOf[key] = true
				l.DefaultServer = true
			}
			v.Listens = append(v.Listens, l)
		}
		if a.DocumentRoot != "" {
			v.RootAt = a.RootAt
			switch {
			case strings.Contains(a.DocumentRoot, "${"):
				v.RootVariable = true
			case filepath.IsAbs(a.DocumentRoot):
				v.Root = filepath.Clean(a.DocumentRoot)
			default:
				v.Root = filepath.Join("/etc/apache2", a.DocumentRoot) // ServerRoot
			}
		}
		proxies := a.Proxies
		if len(proxies) == 0 {
			proxies = c.Proxies
		}
		for _, p := range proxies {
			if v.FastCGIAt == "" {
				v.FastCGIAt = fmt.Sprintf("%s:%d", p.File, p.Line)
			}
			v.FastCGI = appendOnce(v.FastCGI, p.Addr)
		}
		if len(v.FastCGI) == 0 && c.PHPModule != "" {
			m := &ModPHP{Module: c.PHPModule, LoadedAt: c.PHPModuleAt, MPM: c.MPM}
			if mm := modPHPVersion.FindStringSubmatch(c.PHPModule); mm != nil {
				m.Version = mm[1]
				m.Ini = underRoot(root, "/etc/php/"+m.Version+"/apache2/php.ini")
			}
			v.ModPHP = m
		}
		v.Rules = apacheRules(c, a, v.Root)
		v.AccessLogs = apacheAccessLogs(c, a)
		if len(a.PHPValues) > 0 {
			v.PHPValues, v.phpValuesAt = map[string]string{}, a.PHPValuesAt
			for k, val := range a.PHPValues {
				_, rest, _ := strings.Cut(k, "[")
				v.PHPValues[k] = keptValue(strings.TrimSuffix(rest, "]"), val)
			}
		}
		out = append(out, v)
	}
	return out
}

// underRoot is p in the host copy at root when the copy has it, else p.
func underRoot(root, p string) string {
	if root != "" && root != "/" {
		if q := filepath.Join(root, p); exists(q) {
			return q
		}
	}
	return p
}

// apacheListen reads a <VirtualHost> address: "*:80", "10.0.0.1:443",
// "[::1]:8080", "_default_:443", "*" (port 80 here: the Listen's port is
// not followed).
func apacheListen(addr string, ssl bool) Listen {
	l := Listen{Addr: addr, Port: 80, TLS: ssl}
	if _, p, err := net.SplitHostPort(addr); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			l.Port = n
		}
	}
	return l
}

// apacheAddrKey is the address a vhost is grouped by for Apache's
// name-based matching: "*" and "_default_" are one wildcard; a missing
// port is 80.
func apacheAddrKey(addr string) string {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		h, p = addr, "80"
	}
	if h == "_default_" {
		h = "*"
	}
	return strings.ToLower(h) + ":" + p
}

// apacheNameMatches says whether an Apache ServerName or ServerAlias
// matches host (normalized): literally, or as a wildcard pattern ("*"
// any characters, "?" one), case-insensitively as Apache compares.
func apacheNameMatches(pattern, host string) bool {
	if pattern == "" {
		return false
	}
	if !strings.ContainsAny(pattern, "*?[") {
		return pattern == host
	}
	// Apache's wildcards are those of a shell glob; a "." in a host is
	// not a separator, so path.Match (where "/" is the only one) fits.
	ok, err := path.Match(strings.ToLower(pattern), host)
	return err == nil && ok
}

// MatchApacheName returns the indexes of the Apache vhosts that answer a
// request with Host name, as Apache picks them: the vhosts are grouped by
// the address and port they serve, and in each group the first (in the
// configuration's order) whose ServerName or a ServerAlias matches
// answers. One index per address that has a match, in order; an address
// whose vhosts none name it would answer with its first, default vhost,
// which is not counted as serving the name.
func MatchApacheName(vs []Vhost, name string) []int {
	host := normalizeHost(name)
	taken := map[string]bool{}
	var out []int
	for i, v := range vs {
		if v.Server != "apache" {
			continue
		}
		match := false
		for _, n := range v.Names {
			if apacheNameMatches(n, host) {
				match = true
				break
			}
		}
		if !match {
			continue
		}
		added := false
		for _, l := range v.Listens {
			k := apacheAddrKey(l.Addr)
			if taken[k] {
				continue
			}
			taken[k] = true
			if !added {
				out = append(out, i)
				added = true
			}
		}
	}
	return out
}

// matchNames returns the vhosts of either server that answer name: nginx's
// by nginx's rules (MatchName), Apache's by Apache's (MatchApacheName).
func matchNames(vs []Vhost, name string) []int {
	var ng, ap []Vhost
	var ngAt, apAt []int
	for i, v := range vs {
		if v.Server == "apache" {
			ap, apAt = append(ap, v), append(apAt, i)
		} else {
			ng, ngAt = append(ng, v), append(ngAt, i)
		}
	}
	var out []int
	for _, i := range MatchName(ng, name) {
		out = append(out, ngAt[i])
	}
	for _, i := range MatchApacheName(ap, name) {
		out = append(out, apAt[i])
	}
	return out
}

// bothServers says, when nginx and Apache both have vhosts among matches,
// which answers on which port: a note for the site.
func bothServers(vs []Vhost, matches []int, query string) string {
	ports := map[string][]string{}
	for _, i := range matches {
		v := vs[i]
		var ps []string
		for _, l := range v.Listens {
			ps = appendOnce(ps, strconv.Itoa(l.Port))
		}
		ports[v.Server] = append(ports[v.Server], fmt.Sprintf("port %s (%s)", strings.Join(ps, ", "), v.At()))
	}
	if len(ports["apache"]) == 0 || len(ports["nginx"]) == 0 {
		return ""
	}
	return fmt.Sprintf("both nginx and Apache serve %s: nginx on %s; Apache on %s", query, strings.Join(ports["nginx"], ", "), strings.Join(ports["apache"], ", "))
}

// runsPHP says whether a vhost hands PHP to something: php-fpm
// (fastcgi_pass, proxy_fcgi) or mod_php.
func (v Vhost) runsPHP() bool {
	return len(v.FastCGI) > 0 || v.FastCGIVariable || v.ModPHP != nil
}

// modPHP reads the PHP of a site Apache runs in mod_php: the php.ini and
// conf.d of Apache's SAPI (/etc/php/VERSION/apache2), the vhost's
// php_value/php_admin_value settings on top. There is no pool: PHP runs
// in Apache's own processes, which the prefork MPM needs (mod_php is not
// thread-safe in Debian's build).
func (s *Site) modPHP(h Host) {
	m := s.Vhost.ModPHP
	s.PoolError = "PHP runs inside Apache (mod_php), not in a php-fpm pool"
	if m.MPM != "" && m.MPM != "prefork" {
		s.Notes = append(s.Notes, fmt.Sprintf("mod_php is loaded (%s) with the %s MPM: Debian's mod_php needs prefork", m.LoadedAt, m.MPM))
	}
	if m.Version == "" {
		s.Notes = append(s.Notes, m.Module+": not Debian's libphpVERSION.so; its php.ini is not read")
		return
	}
	c := &PHPConfig{Version: m.Version, Binary: m.Module, Settings: map[string]Setting{}}
	readIni(c, h, "/etc/php/"+m.Version+"/apache2", nil)
	var over []override
	for k, val := range s.Vhost.PHPValues {
		at := s.Vhost.phpValuesAt[k]
		if at == "" {
			at = s.Vhost.At()
		}
		over = append(over, override{k, val, "vhost " + at + " (" + k + ")"})
	}
	applyOverrides(c, over)
	s.PHP = c
}
