package cli

import (
	"net"
	"net/url"
	"path"
	"strings"

	"github.com/phptune/phptune/internal/base/loopback"
	"github.com/phptune/phptune/internal/traffic/load"
)

// parseTarget reads http:// and fcgi:// targets.
func parseTarget(s string) (load.Target, string, error) {
	hint := "Try: http://127.0.0.1:8080/index.php, fcgi://unix:/run/php/php8.2-fpm.sock/var/www/html/index.php or fcgi://127.0.0.1:9000/var/www/html/index.php"
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return load.Target{}, "", usageErr(hint, "target %q has no scheme", s)
	}
	switch scheme {
	case "http":
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return load.Target{}, "", usageErr(hint, "target %q is not a URL", s)
		}
		host := u.Hostname()
		port := u.Port()
		if port == "" {
			port = "80"
		}
		if host == "localhost" {
			host = "127.0.0.1"
		}
		if net.ParseIP(host) == nil {
			return load.Target{}, "", usageErr(hint, "target host %q: use an IP address (the generator does no DNS lookups)", u.Hostname())
		}
		p := u.RequestURI()
		return load.Target{Protocol: "http", Network: "tcp", Address: net.JoinHostPort(host, port), Host: u.Host, Display: s}, p, nil
	case "https":
		return load.Target{}, "", usageErr(hint, "https is not supported: bench the server's plain HTTP port or php-fpm directly")
	case "fcgi":
		script, query, _ := strings.Cut(rest, "?")
		var network, addr string
		if after, ok := strings.CutPrefix(script, "unix:"); ok {
			sock, sc, err := load.SplitSocket(after)
			if err != nil {
				return load.Target{}, "", usageErr(hint, "target %q: %v", s, err)
			}
			network, addr, script = "unix", sock, sc
		} else {
			i := strings.IndexByte(script, '/')
			if i < 0 {
				return load.Target{}, "", usageErr(hint, "target %q: no script path after the address", s)
			}
			network, addr, script = "tcp", script[:i], script[i:]
			h, _, err := net.SplitHostPort(addr)
			if err != nil {
				return load.Target{}, "", usageErr(hint, "target %q: %q is not HOST:PORT", s, addr)
			}
			if h == "localhost" {
				addr = strings.Replace(addr, "localhost", "127.0.0.1", 1)
			}
		}
		if !path.IsAbs(script) || path.Clean(script) != script || strings.HasSuffix(script, "/") {
			return load.Target{}, "", usageErr(hint, "target %q: the script %q must be an absolute file path", s, script)
		}
		reqPath := "/" + path.Base(script)
		if query != "" {
			reqPath += "?" + query
		}
		return load.Target{Protocol: "fcgi", Network: network, Address: addr, DocRoot: path.Dir(script), Display: s}, reqPath, nil
	default:
		return load.Target{}, "", usageErr(hint, "target %q: scheme %q is not http or fcgi", s, scheme)
	}
}

// checkLoopback refuses a TCP target whose host is not a loopback IP
// literal (loopback.IP), unless allow (--allow-remote).
func checkLoopback(t load.Target, allow bool) error {
	if t.Network == "unix" || allow {
		return nil
	}
	host, _, err := net.SplitHostPort(t.Address)
	if err != nil {
		return usageErr("", "target address %q: %v", t.Address, err)
	}
	if loopback.IP(host) {
		return nil
	}
	return usageErr("Add --allow-remote if you mean it (and own that server).", "target %s is not on loopback: phptune refuses to load other machines by default", t.Address)
}
