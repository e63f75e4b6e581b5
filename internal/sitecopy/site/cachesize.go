package site

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
)

// Default configuration files of Debian's packages: read when the running
// server's command line names none, or when no server runs at the
// address.
const (
	DefaultRedisConf     = "/etc/redis/redis.conf"
	DefaultMemcachedConf = "/etc/memcached.conf"
)

// memcachedDefaultMiB is Memcached's compiled-in -m.
const memcachedDefaultMiB = 64

// maxRedisIncludes bounds the include files followed from one redis.conf.
const maxRedisIncludes = 16

// sizeCaches reads, for each cache server the site names on this
// machine, the memory production gives it and its eviction policy
// (Cache.MaxMemoryBytes, Policy, SizeFrom; SizeNote when not read): the
// server is the process the kernel's socket table says listens at the
// address (a verified redis-server or memcached, livehost.CacheServers);
// Redis's from its configuration file (its command line's, else
// Debian's), Memcached's from its command line's -m, else Debian's
// memcached.conf. Nothing connects to production's cache.
func (s *Site) sizeCaches(h Host) {
	if len(s.Caches) == 0 {
		return
	}
	servers, err := livehost.CacheServers(h.FS)
	if err != nil {
		for i := range s.Caches {
			s.Caches[i].SizeNote = "the running cache servers could not be listed: " + err.Error()
		}
		return
	}
	for i := range s.Caches {
		c := &s.Caches[i]
		if c.Kind != "redis" && c.Kind != "memcached" {
			continue
		}
		addrs, local := listenAddrs(c.Addr, s.Vhost.Names)
		if !local {
			c.SizeNote = "not on this machine: its configuration is not read"
			continue
		}
		var pids []int
		for _, sv := range servers {
			if sv.Kind == c.Kind {
				pids = append(pids, sv.PID)
			}
		}
		var found *livehost.CacheServer
		for _, a := range addrs {
			if pid, ok := holder(h.FS, pids, a); ok {
				for j := range servers {
					if servers[j].PID == pid {
						found = &servers[j]
					}
				}
				break
			}
		}
		if c.Kind == "redis" {
			sizeRedis(h, c, found)
		} else {
			sizeMemcached(h, c, found)
		}
	}
}

// listenAddrs are the listening addresses that serve cache address addr
// ("tcp:HOST:PORT", "unix:/path") on this machine, as the kernel's table
// names them: a loopback or other IP as written, localhost as 127.0.0.1
// and ::1, the site's own names (names) as 127.0.0.1. local is false for
// an address of another machine (another name).
func listenAddrs(addr string, names []string) ([]string, bool) {
	network, rest, _ := strings.Cut(addr, ":")
	if network == "unix" {
		return []string{addr}, true
	}
	host, port, err := net.SplitHostPort(rest)
	if network != "tcp" || err != nil {
		return nil, false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []string{"tcp:" + net.JoinHostPort(ip.String(), port)}, true
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case h == "localhost":
		return []string{"tcp:127.0.0.1:" + port, "tcp:[::1]:" + port}, true
	case hasName(names, h):
		return []string{"tcp:127.0.0.1:" + port}, true
	}
	return nil, false
}

// hasName reports whether names holds name, in any case.
func hasName(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(strings.TrimSuffix(n, "."), name) {
			return true
		}
	}
	return false
}

// sizeRedis reads production's maxmemory and maxmemory-policy for c from
// server sv's configuration file (nil: no verified server listens at
// c's address; Debian's file is read), then its command line's options.
func sizeRedis(h Host, c *Cache, sv *livehost.CacheServer) {
	conf, why := DefaultRedisConf, "Debian's file: "
	if sv != nil {
		why = fmt.Sprintf("Debian's file, as pid %d's command line names none: ", sv.PID)
		if p := redisConfArg(sv.Args); p != "" {
			conf, why = p, ""
		}
	} else {
		why = "Debian's file, as no running redis-server was found at " + c.Addr + ": "
	}
	var st redisSizing
	if err := st.read(h.Root, conf, 0); err != nil {
		c.SizeNote = "production's redis.conf could not be read: " + err.Error()
		return
	}
	if sv != nil {
		mm, pol := redisArgOptions(sv.Args)
		from := fmt.Sprintf("pid %d cmdline", sv.PID)
		if mm != "" {
			n, err := ParseRedisBytes(mm)
			if err != nil {
				c.SizeNote = from + ": " + err.Error()
				return
			}
			st.bytes, st.bytesFrom = n, from
		}
		if pol != "" {
			st.setPolicy(pol, from)
		}
	}
	if st.err != "" {
		c.SizeNote = st.err
		return
	}
	c.MaxMemoryBytes, c.Policy = st.bytes, st.policy
	switch {
	case st.bytesFrom == "":
		c.SizeFrom = why + conf + " sets no maxmemory (no limit)"
	default:
		c.SizeFrom = "maxmemory at " + st.bytesFrom
	}
	if st.policyFrom != "" {
		c.SizeFrom += ", maxmemory-policy at " + st.policyFrom
	}
	if why != "" && st.bytesFrom != "" {
		c.SizeFrom += " (" + strings.TrimSuffix(why, ": ") + ")"
	}
}

// redisSizing is what redis.conf and its includes set, in order.
type redisSizing struct {
	bytes                 int64
	policy                string
	bytesFrom, policyFrom string
	files                 int
	err                   string
}

// read applies file (under root) and the files it includes, in order.
func (st *redisSizing) read(root, file string, depth int) error {
	st.files++
	if depth > 4 || st.files > maxRedisIncludes {
		return fmt.Errorf("%s: too many nested includes", file)
	}
	b, err := livehost.ReadConfFile(filepath.Join(root, file))
	if err != nil {
		return err
	}
	for _, d := range ParseRedisConf(b) {
		at := fmt.Sprintf("%s:%d", file, d.Line)
		switch d.Name {
		case "maxmemory":
			n, err := ParseRedisBytes(d.Value)
			if err != nil {
				st.err = at + ": " + err.Error()
				continue
			}
			st.bytes, st.bytesFrom = n, at
		case "maxmemory-policy":
			st.setPolicy(d.Value, at)
		case "include":
			if !strings.HasPrefix(d.Value, "/") || strings.ContainsAny(d.Value, "*?[") {
				st.err = at + ": include " + d.Value + " is not one absolute path: not followed"
				continue
			}
			if err := st.read(root, filepath.Clean(d.Value), depth+1); err != nil {
				st.err = at + ": " + err.Error()
			}
		}
	}
	return nil
}

// setPolicy keeps a maxmemory-policy Redis knows.
func (st *redisSizing) setPolicy(v, at string) {
	v = strings.ToLower(v)
	if !contains(RedisPolicies, v) {
		st.err = fmt.Sprintf("%s: maxmemory-policy %q is not one Redis knows", at, v)
		return
	}
	st.policy, st.policyFrom = v, at
}

// sizeMemcached reads production's -m for c from server sv's command
// line, else Debian's memcached.conf (sv nil: no verified memcached
// listens at c's address).
func sizeMemcached(h Host, c *Cache, sv *livehost.CacheServer) {
	if sv != nil {
		m, err := ParseMemcachedArgs(sv.Args[1:])
		from := fmt.Sprintf("pid %d cmdline", sv.PID)
		if err != nil {
			c.SizeNote = from + ": " + err.Error()
			return
		}
		if m.Arg >= 0 {
			setMemcached(c, m, "-m at "+from)
		} else {
			m.MiB = memcachedDefaultMiB
			setMemcached(c, m, "Memcached's default 64 MiB ("+from+" gives no -m)")
		}
		return
	}
	conf := DefaultMemcachedConf
	b, err := livehost.ReadConfFile(filepath.Join(h.Root, conf))
	if err != nil {
		c.SizeNote = "no running memcached was found at " + c.Addr + ", and " + conf + " could not be read: " + err.Error()
		return
	}
	m, err := ParseMemcachedConf(b)
	if err != nil {
		c.SizeNote = conf + ": " + err.Error()
		return
	}
	if m.Arg < 0 {
		m.MiB = memcachedDefaultMiB
		setMemcached(c, m, "Memcached's default 64 MiB ("+conf+" gives no -m; no running memcached was found at "+c.Addr+")")
		return
	}
	setMemcached(c, m, fmt.Sprintf("-m at %s:%d (Debian's file: no running memcached was found at %s)", conf, m.Arg, c.Addr))
}

// setMemcached records m on c.
func setMemcached(c *Cache, m MemcachedMemory, from string) {
	c.MaxMemoryBytes, c.SizeFrom = m.MiB<<20, from
	if m.NoEvict {
		c.Policy = "noeviction"
	}
}
