package site

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// The cache servers a site names: its application's configuration
// (App.Caches), WordPress's object-cache drop-in, and PHP's session
// handler. Discovery only names them; what they lead to inside a site
// lab's seal is CacheInSeal.

// maxCacheAddrs bounds the addresses kept from one list (a session
// save_path, WP_REDIS_SERVERS): the site's account writes them.
const maxCacheAddrs = 16

// maxDropIn bounds the object-cache drop-in read (Memcached's is ~60 KiB,
// Redis Object Cache's ~90 KiB).
const maxDropIn = 1 << 20

// CacheAddr reads one cache server address as the clients write it and
// returns it as "tcp:HOST:PORT" or "unix:/path" (ok false when it names
// none): "tcp://host:port?opts", "tls://…", "redis://user:pass@host:port/db"
// (the credentials dropped), "unix:///path?opts", "unix:/path", "/path",
// "host:port", "host" (defPort), "[::1]:6379", and memcached's
// "host:port:weight". A password in the address is never kept.
func CacheAddr(s string, defPort int) (string, bool) {
	s = strings.TrimSpace(s)
	scheme := ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, s = strings.ToLower(s[:i]), s[i+3:]
	} else if strings.HasPrefix(s, "unix:") {
		scheme, s = "unix", s[len("unix:"):]
	}
	switch scheme {
	case "unix":
		if q := strings.IndexAny(s, "?#"); q >= 0 {
			s = s[:q]
		}
		if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, "\x00\n") {
			return "", false
		}
		return "unix:" + s, true
	case "", "tcp", "tls", "redis", "rediss", "memcached", "udp":
	default:
		return "", false
	}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		// user:password@ — never kept. A '?' or '#' before it is in the
		// password or puts an '@' in the options: no address rather
		// than a piece of a secret.
		if strings.ContainsAny(s[:at], "?#") {
			return "", false
		}
		s = s[at+1:]
	}
	if q := strings.IndexAny(s, "?#"); q >= 0 {
		s = s[:q]
	}
	if scheme == "" && strings.HasPrefix(s, "/") {
		if strings.ContainsAny(s, "\x00\n") {
			return "", false
		}
		return "unix:" + s, true
	}
	if i := strings.Index(s, "/"); i >= 0 {
		s = s[:i] // redis://host:port/DB
	}
	host, port := s, ""
	_, ipErr := netip.ParseAddr(s)
	switch {
	case ipErr == nil: // a bare address, IPv6's "::1" too
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return "", false
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
	case strings.Count(s, ":") == 1 || strings.Count(s, ":") == 2 && scheme == "":
		// host:port, or memcached's host:port:weight
		parts := strings.Split(s, ":")
		host, port = parts[0], parts[1]
	case strings.Count(s, ":") > 2:
		return "", false
	}
	if i := strings.Index(port, ":"); i >= 0 {
		port = port[:i]
	}
	if host == "" || strings.ContainsAny(host, " \t\x00\n,;") {
		return "", false
	}
	if port != "" {
		if n := atoiOr0(port); n == 0 {
			return "", false
		}
	}
	return tcpAddr(host, port, defPort), true
}

// SessionCaches are the cache servers PHP's session handler names:
// session.save_handler redis or rediscluster (phpredis: save_path is a
// comma-separated list of "tcp://host:port?…" or "unix:///path", a
// cluster's "seed[]=host:port&…"), memcached (the memcached extension:
// "host:port,…" or a socket path, with an optional "PERSISTENT=id "
// prefix) or memcache ("tcp://host:port?…,…"). from says where the
// handler was set. Other handlers (files) name none.
func SessionCaches(handler, savePath, from string) []Cache {
	kind, defPort := "", 0
	switch strings.ToLower(strings.TrimSpace(handler)) {
	case "redis", "rediscluster":
		kind, defPort = "redis", 6379
	case "memcached", "memcache":
		kind, defPort = "memcached", 11211
	default:
		return nil
	}
	setting := "session.save_handler=" + strings.ToLower(strings.TrimSpace(handler))
	if from != "" {
		setting += " (" + from + ")"
	}
	p := strings.TrimSpace(savePath)
	if strings.HasPrefix(p, "PERSISTENT=") {
		if _, rest, ok := strings.Cut(p, " "); ok {
			p = rest
		} else {
			p = ""
		}
	}
	var items []string
	if strings.Contains(p, "seed[]=") {
		for _, kv := range strings.Split(p, "&") {
			if v, ok := strings.CutPrefix(kv, "seed[]="); ok {
				items = append(items, v)
			}
		}
	} else {
		items = strings.Split(p, ",")
	}
	var out []Cache
	seen := map[string]bool{}
	for _, it := range items {
		if len(out) == maxCacheAddrs {
			break
		}
		a, ok := CacheAddr(it, defPort)
		if !ok || seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, Cache{Kind: kind, Addr: a, Setting: setting + ", session.save_path"})
	}
	if len(out) == 0 {
		// phpredis and memcached need a save_path; without a usable one
		// the sessions still try the handler's default.
		out = append(out, Cache{Kind: kind, Addr: tcpAddr("127.0.0.1", "", defPort), Setting: setting + " (no usable session.save_path: the default address)"})
	}
	return out
}

// dropInCache says which cache WordPress's wp-content/object-cache.php
// drop-in talks to, by the client classes its code names: "memcached"
// (Memcached, Memcache), "redis" (Redis, Predis, Relay), "" for another
// (APCu, a file cache) or none known.
func dropInCache(src []byte) string {
	s := string(src)
	switch {
	case strings.Contains(s, "new Memcached") || strings.Contains(s, "new Memcache") || strings.Contains(s, "new \\Memcached") || strings.Contains(s, "new \\Memcache"):
		return "memcached"
	case strings.Contains(s, "new Redis") || strings.Contains(s, "new \\Redis") || strings.Contains(s, "Predis\\Client") || strings.Contains(s, "Relay\\Relay"):
		return "redis"
	}
	return ""
}

// collectCaches gathers every cache server the site names into s.Caches:
// the application's, the object-cache drop-in's default when the
// configuration names no server of its kind, and the session handler's.
func (s *Site) collectCaches(dropIn string) {
	seen := map[string]bool{}
	add := func(c Cache) {
		k := c.Kind + " " + c.Addr
		if seen[k] {
			return
		}
		seen[k] = true
		s.Caches = append(s.Caches, c)
	}
	if s.App != nil {
		for _, c := range s.App.Caches {
			add(c)
		}
	}
	if dropIn != "" {
		named := false
		for _, c := range s.Caches {
			named = named || c.Kind == dropIn
		}
		if !named {
			setting := "wp-content/object-cache.php (a " + dropIn + " drop-in; its default server)"
			if s.App != nil {
				if s.App.cacheKeySalt {
					setting = "wp-content/object-cache.php (a " + dropIn + " drop-in, WP_CACHE_KEY_SALT set; its default server)"
				}
			}
			port := 11211
			if dropIn == "redis" {
				port = 6379
			}
			add(Cache{Kind: dropIn, Addr: tcpAddr("127.0.0.1", "", port), Setting: setting})
		}
	}
	if s.PHP != nil {
		if h, ok := s.PHP.Settings["session.save_handler"]; ok {
			for _, c := range SessionCaches(h.Value, s.PHP.Settings["session.save_path"].Value, h.From) {
				add(c)
			}
		}
	}
}

// RedactSavePath hides the credentials a session.save_path can carry
// (phpredis's "tcp://host:6379?auth=SECRET", "auth[]=user&auth[]=pass",
// a "redis://user:pass@host" URL): discovery keeps and prints the setting,
// never the secret.
func RedactSavePath(v string) string {
	var b strings.Builder
	for i, item := range strings.Split(v, ",") {
		if i > 0 {
			b.WriteByte(',')
		}
		if j := strings.Index(item, "://"); j >= 0 {
			if at := strings.LastIndex(item, "@"); at > j {
				end := strings.IndexAny(item[j+3:], "/?")
				if end < 0 || j+3+end > at {
					item = item[:j+3] + "<redacted>@" + item[at+1:]
				}
			}
		}
		// Every parameter, wherever '?' or '&' starts it (a save_path
		// written with two '?' too), is looked at.
		tok := 0
		for k := 0; k <= len(item); k++ {
			if k < len(item) && item[k] != '?' && item[k] != '&' {
				continue
			}
			name, _, has := strings.Cut(item[tok:k], "=")
			if l := strings.ToLower(name); has && (strings.HasPrefix(l, "auth") || strings.Contains(l, "pass")) {
				b.WriteString(name + "=<redacted>")
			} else {
				b.WriteString(item[tok:k])
			}
			if k < len(item) {
				b.WriteByte(item[k])
			}
			tok = k + 1
		}
	}
	return b.String()
}

// kindName is a cache kind as prose names it.
func kindName(kind string) string {
	switch kind {
	case "redis":
		return "Redis"
	case "memcached":
		return "Memcached"
	}
	return kind
}

// CacheInSeal says, in one sentence, what a cache server the site names
// leads to inside a site lab's seal, whose overlay (the app's root, else
// the docroot) is overlay: a loopback address reaches the seal's own
// loopback, where nothing of the host listens (refused, counted); any
// other address has no route out (refused, counted); a name other than
// localhost does not resolve (the seal's resolver answers nothing); a
// unix socket path does not exist inside (the file system is an
// allowlist), or, inside the app's overlay, is a copy of the file and
// not production's listener. It is said of an address where the lab
// runs no cache server of its own (package lab says when it does): the
// numbers measured are without one.
func CacheInSeal(c Cache, overlay string) string {
	what := fmt.Sprintf("the site names %s", kindName(c.Kind))
	if c.Addr != "" {
		what += " at " + c.Addr
	}
	what += " (" + c.Setting + ")"
	var fate string
	switch network, addr, _ := strings.Cut(c.Addr, ":"); {
	case c.Addr == "":
		fate = "inside the seal nothing but the lab's own web server, php-fpm and MariaDB listens, and no connection leaves it"
	case network == "unix" && overlay != "" && within(addr, overlay):
		fate = "inside the seal that path is in the app's overlay: a socket file there is not production's listener (connect() is refused)"
	case network == "unix":
		fate = "inside the seal that path leads nowhere: its file system is an allowlist and production's socket is not in it"
	default:
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		ip, perr := netip.ParseAddr(host)
		switch {
		case perr == nil && ip.IsLoopback():
			fate = "inside the seal that is the seal's own loopback, where nothing listens there: the connection is refused and counted (blocked)"
		case perr == nil:
			fate = "the seal has no route off its loopback: the connection is refused and counted (blocked)"
		case strings.EqualFold(host, "localhost"):
			fate = "localhost is the seal's own loopback, where nothing listens there: the connection is refused and counted (blocked)"
		default:
			fate = "inside the seal that name does not resolve (the lookup is refused and counted), or, if it is one of the site's own names, resolves to the seal's loopback, where nothing listens on that port"
		}
	}
	return what + ": " + fate + "; the lab starts no cache, so its numbers are without one"
}
