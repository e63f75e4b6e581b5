package lab

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
)

// A site lab whose site names a Redis or Memcached server (site.Site.Caches)
// runs its own at that address inside the seal, when Debian's redis-server
// or memcached is installed: a loopback port of the seal's own network
// namespace (127.0.0.1:6379 inside is not the host's), or a unix socket in
// the lab's directory that the path the site names links to (Spec.Links),
// as the lab's MariaDB socket is. The cache runs as the lab's MariaDB
// account (DBUser), not the site's: the site's code can connect to it but
// cannot read its memory or its configuration (the password), signal it,
// or write where it runs. It starts empty — production's cache is never
// copied — keeps nothing on disk (Redis: save "", appendonly no), is
// sized as production's within the lab's memory (cachesize.go) and asks
// for the password the site's configuration gives (site.Cache.Password).
// Its processes are the lab's
// (recorded, stopped by lab down, inside the lab's cgroup and seal).

// CacheServer is a cache server a site lab runs inside its seal.
type CacheServer struct {
	// Kind is "redis" or "memcached".
	Kind string `json:"kind"`
	// Addrs are the site's addresses it answers ("tcp:127.0.0.1:6379",
	// "unix:/run/redis/redis.sock").
	Addrs []string `json:"addrs"`
	// IPs and Port are its loopback listeners inside the seal (Port 0:
	// none).
	IPs  []string `json:"ips,omitempty"`
	Port int      `json:"port,omitempty"`
	// Socket is its unix socket in the lab's directory (the same path
	// inside the seal), "" for none; the site's socket paths link to it.
	Socket string `json:"socket,omitempty"`
	// Links are the socket paths (as the seal has them) that lead to
	// Socket.
	Links []string `json:"links,omitempty"`
	// MaxMemoryB is its memory cap: production's (sizeFrom), capped
	// (Capped) at a quarter of the lab's memory limit, else the lab's
	// default (cacheMemory). Policy is its eviction policy: Redis's
	// maxmemory-policy, "noeviction" for a Memcached run with -M; ""
	// for the lab's default (least recently used). SizeText says, in a
	// phrase, how big it is and where that came from.
	MaxMemoryB int64  `json:"max_memory_bytes"`
	Policy     string `json:"policy,omitempty"`
	Capped     bool   `json:"capped,omitempty"`
	SizeText   string `json:"size_text,omitempty"`
	// Password says whether it asks for the site's password (kept in
	// its configuration file only, which the site's account cannot read).
	Password bool `json:"password,omitempty"`

	password site.Secret
}

// Cache directories in a lab's: cacheRunDir holds the caches' sockets
// (the cache account's, passable by the site's group, like dbrun);
// cacheConfDir their configuration (the cache account's alone).
const (
	cacheRunDir  = "cacherun"
	cacheConfDir = "cache"
)

// cacheBinaries are where Debian's packages put the servers.
var cacheBinaries = map[string]string{"redis": "/usr/bin/redis-server", "memcached": "/usr/bin/memcached"}

// cachePackages are the Debian packages that hold them.
var cachePackages = map[string]string{"redis": "redis-server", "memcached": "memcached"}

// cacheMemory is one cache server's memory cap: 64 MiB, or a sixteenth
// of the lab's memory budget when that is less (at least 8 MiB), so that
// caches cannot take the budget meant for PHP and MariaDB.
func cacheMemory(budget int64) int64 {
	m := int64(64 << 20)
	if budget > 0 && budget/16 < m {
		m = max(budget/16, 8<<20)
	}
	return m
}

// cacheHave reports whether the kind's server is installed (a variable
// for tests).
var cacheHave = func(kind string) bool {
	st, err := os.Stat(cacheBinaries[kind])
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// siteCacheServers plans the cache servers a site lab runs for the
// caches site s names, and says, one sentence a cache, what each address
// leads to inside: the lab's own server, or (an address the lab cannot
// serve: another machine, a port the lab uses, a socket path the seal
// cannot make, a server that is not installed) what site.CacheInSeal says,
// with the fix when the server is missing. appRoot is the seal's overlay,
// labDir the lab's directory, names the site's names (they resolve to
// 127.0.0.1 inside), budget the lab's memory cap (0: none).
func siteCacheServers(s *site.Site, appRoot, labDir string, names []string, budget int64) ([]CacheServer, []string) {
	overlay := appRoot
	if overlay == "" {
		overlay = s.DocRoot.Path
	}
	pl := &cachePlan{appRoot: appRoot, labDir: labDir, names: names, budget: budget, served: siteServed(s),
		byPort: map[int]int{}, unixOf: map[string]int{}, linked: map[string]bool{},
		placed: make([]int, len(s.Caches)), why: make([]string, len(s.Caches))}
	for i, c := range s.Caches {
		pl.placed[i] = -1
		if cachePackages[c.Kind] == "" || c.Addr == "" {
			continue
		}
		network, addr, _ := strings.Cut(c.Addr, ":")
		switch network {
		case "unix":
			pl.placeUnix(i, c, addr)
		case "tcp":
			pl.placeTCP(i, c, addr)
		}
	}
	for i, c := range s.Caches {
		if j := pl.placed[i]; j >= 0 && c.Password.Set() && c.Kind == "redis" && !pl.servers[j].password.Set() {
			pl.servers[j].password, pl.servers[j].Password = c.Password, true
		}
	}
	pl.sizeServers(s.Caches)
	return pl.servers, pl.sentences(s.Caches, overlay)
}

// cachePlan is siteCacheServers' work: the servers planned so far and,
// for each of the site's caches, the server that serves it (placed, -1:
// none) or why none can (why; "missing": the server is not installed).
type cachePlan struct {
	appRoot, labDir string
	names           []string
	served          []ServedAddr
	budget          int64
	servers         []CacheServer
	byPort          map[int]int     // port → index in servers
	unixOf          map[string]int  // kind → index of the server holding its socket
	linked          map[string]bool // socket paths already linked
	placed          []int
	why             []string
}

// newServer adds a server of kind, capped from the lab's budget, and
// returns its index.
func (pl *cachePlan) newServer(kind string) int {
	pl.servers = append(pl.servers, CacheServer{Kind: kind, MaxMemoryB: cacheMemory(pl.budget)})
	return len(pl.servers) - 1
}

// placeUnix serves cache i, at the socket path addr, from the lab's
// server of its kind that holds a socket (one per kind), linked from the
// path inside the seal.
func (pl *cachePlan) placeUnix(i int, c site.Cache, addr string) {
	p := filepath.Clean(addr)
	inside := sealPath(p)
	if problem := socketProblem(p, pl.appRoot); problem != "" {
		pl.why[i] = "the lab cannot put its " + kindTitle(c.Kind) + " there: the path " + problem
		return
	}
	if filepath.Dir(inside) == "/run/mysqld" {
		pl.why[i] = "the lab cannot put its " + kindTitle(c.Kind) + " there: /run/mysqld is the lab's MariaDB socket directory"
		return
	}
	if !cacheHave(c.Kind) {
		pl.why[i] = "missing"
		return
	}
	j, ok := pl.unixOf[c.Kind]
	if !ok {
		if c.Kind == "redis" {
			// Redis listens on a port and a socket at once: the
			// socket joins the site's first Redis port, if any.
			for k := range pl.servers {
				if pl.servers[k].Kind == "redis" && pl.servers[k].Socket == "" {
					j, ok = k, true
					break
				}
			}
		}
		if !ok {
			j = pl.newServer(c.Kind)
		}
		pl.servers[j].Socket = filepath.Join(pl.labDir, cacheRunDir, fmt.Sprintf("%s-%d.sock", c.Kind, j))
		pl.unixOf[c.Kind] = j
	}
	if !pl.linked[inside] {
		pl.linked[inside] = true
		pl.servers[j].Links = append(pl.servers[j].Links, inside)
	}
	pl.servers[j].Addrs = append(pl.servers[j].Addrs, c.Addr)
	pl.placed[i] = j
}

// placeTCP serves cache i, at host:port addr on this machine, from the
// lab's server on that port inside the seal (one per port).
func (pl *cachePlan) placeTCP(i int, c site.Cache, addr string) {
	host, portText, err := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		return
	}
	ips := cacheIPs(host, c.Kind, pl.names)
	if ip := servedIP(pl.served, host); ips == nil && ip != "" {
		ips = []string{ip} // another machine's address, which the seal answers at
	}
	if ips == nil {
		return // another machine: CacheInSeal says it
	}
	if port == int(siteHTTPAddr.Port()) || port == 443 || port == int(siteDBAddr.Port()) {
		pl.why[i] = fmt.Sprintf("the lab cannot put its %s there: port %d is the lab's own web server's or MariaDB's inside the seal", kindTitle(c.Kind), port)
		return
	}
	if !cacheHave(c.Kind) {
		pl.why[i] = "missing"
		return
	}
	j, ok := pl.byPort[port]
	if ok && pl.servers[j].Kind != c.Kind {
		pl.why[i] = fmt.Sprintf("the lab cannot put its %s there: the site also names %s on port %d, which the lab serves", kindTitle(c.Kind), kindTitle(pl.servers[j].Kind), port)
		return
	}
	if !ok {
		j = -1
		if c.Kind == "redis" {
			if k, has := pl.unixOf["redis"]; has && pl.servers[k].Port == 0 {
				j = k // the socket's Redis takes the port too
			}
		}
		if j < 0 {
			j = pl.newServer(c.Kind)
		}
		pl.servers[j].Port = port
		pl.byPort[port] = j
	}
	for _, ip := range ips {
		if !contains(pl.servers[j].IPs, ip) {
			pl.servers[j].IPs = append(pl.servers[j].IPs, ip)
		}
	}
	pl.servers[j].Addrs = append(pl.servers[j].Addrs, c.Addr)
	pl.placed[i] = j
}

// sentences says, one sentence a cache, what its address leads to
// inside the seal: the lab's own server, or what site.CacheInSeal says
// with why the lab serves none there (and the fix when the server is not
// installed).
func (pl *cachePlan) sentences(caches []site.Cache, overlay string) []string {
	var said []string
	for i, c := range caches {
		if j := pl.placed[i]; j >= 0 {
			said = append(said, pl.servers[j].sentence(c))
			continue
		}
		line := site.CacheInSeal(c, overlay)
		if len(pl.servers) > 0 {
			// The lab runs a cache, just not at this address.
			line = strings.Replace(line, "; the lab starts no cache, so its numbers are without one", "; the lab runs no cache at that address, so its numbers are without it", 1)
		}
		switch {
		case pl.why[i] == "missing":
			line += fmt.Sprintf("; %s is not installed: install it (apt-get install %s, or phptune setup --with-caches) and the lab runs its own at that address", cacheBinaries[c.Kind], cachePackages[c.Kind])
		case pl.why[i] != "":
			line += "; " + pl.why[i]
		}
		said = append(said, line)
	}
	return said
}

// cacheIPs are the seal's loopback addresses a cache server listens on
// for host (nil when host is not on this machine: another machine's
// address or name). localhost resolves to 127.0.0.1 and ::1 inside
// (the seal's /etc/hosts); Redis takes ::1 when the seal has it
// ("-::1"), Memcached 127.0.0.1 alone. The site's own names resolve to
// 127.0.0.1 inside.
func cacheIPs(host, kind string, names []string) []string {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !ip.IsLoopback() {
			return nil
		}
		return []string{ip.String()}
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case h == "localhost" && kind == "redis":
		return []string{"127.0.0.1", "-::1"}
	case h == "localhost", contains(names, h):
		return []string{"127.0.0.1"}
	}
	return nil
}

// kindTitle is a cache kind as prose names it.
func kindTitle(kind string) string {
	if kind == "redis" {
		return "Redis"
	}
	return "Memcached"
}

// sentence says what the site's cache c leads to in the lab: this server.
func (cs CacheServer) sentence(c site.Cache) string {
	auth := ""
	if cs.Password {
		auth = ", asking for the site's password"
	}
	disk := "nothing written to disk"
	if cs.Kind == "redis" {
		disk = `nothing written to disk (save "", appendonly no)`
	}
	return fmt.Sprintf("the site names %s at %s (%s): the lab runs its own %s at that address inside the seal (as %s, %s, %s%s); it starts empty: production's cache is never copied, so the first requests of a run fill it",
		kindTitle(c.Kind), c.Addr, c.Setting, kindTitle(cs.Kind), DBUser, cs.sizeText(), disk, auth)
}

// sizeText is how big the server is and where that came from.
func (cs CacheServer) sizeText() string {
	if cs.SizeText != "" {
		return cs.SizeText
	}
	return fmt.Sprintf("at most %d MiB", cs.MaxMemoryB>>20)
}

// cacheOwnAddrs are the seal's loopback listeners of the lab's caches
// (Spec.Own: the site's connections to them pass).
func cacheOwnAddrs(servers []CacheServer) []netip.AddrPort {
	var out []netip.AddrPort
	for _, cs := range servers {
		if cs.Port == 0 {
			continue
		}
		for _, ip := range cs.IPs {
			if a, err := netip.ParseAddr(strings.TrimPrefix(ip, "-")); err == nil {
				out = append(out, netip.AddrPortFrom(a, uint16(cs.Port)))
			}
		}
	}
	return out
}

// cacheLinks are the seal's links from the site's socket paths to the
// lab's cache sockets.
func cacheLinks(servers []CacheServer) []seal.Link {
	var out []seal.Link
	for _, cs := range servers {
		for _, p := range cs.Links {
			out = append(out, seal.Link{Path: p, Target: cs.Socket})
		}
	}
	return out
}

// makeCacheDirs makes the caches' directories before the seal binds
// them: cacherun the cache account's, passable by the site's group (its
// code connects there), bound writable; cache root's, readable by the
// cache account's group alone (its configuration, with the password),
// read-only inside like the rest of the lab's directory: the servers
// write nothing there (no persistence), and nothing can plant a file in
// it for root to write through.
func (l *Lab) makeCacheDirs(acct, dbAcct *account) ([]seal.Bind, error) {
	if len(l.Caches) == 0 {
		return nil, nil
	}
	y := layout{l.Dir}
	uid, gid := dbAcct.ids()
	if err := mkdirOwned(y.p(cacheRunDir), uid, acct.group(), 0o750); err != nil {
		return nil, err
	}
	if err := mkdirOwned(y.p(cacheConfDir), -1, gid, 0o750); err != nil {
		return nil, err
	}
	return []seal.Bind{{Source: y.p(cacheRunDir), Target: y.p(cacheRunDir)}}, nil
}

// redisConfig is a lab Redis's configuration: its listeners, no
// persistence, a memory cap with LRU eviction (a cache), the
// configuration commands that could make it write files elsewhere
// refused, and the site's password.
func (cs CacheServer) redisConfig(dir string) string {
	var b strings.Builder
	b.WriteString("# Rendered by phptune: a site lab's own Redis, inside its seal.\n")
	if cs.Port > 0 {
		fmt.Fprintf(&b, "bind %s\nport %d\n", strings.Join(cs.IPs, " "), cs.Port)
		b.WriteString(protectedMode(cs.IPs))
	} else {
		b.WriteString("port 0\n")
	}
	if cs.Socket != "" {
		// The directory (cacherun) lets only the site's group through.
		fmt.Fprintf(&b, "unixsocket %s\nunixsocketperm 777\n", redisQuote(cs.Socket))
	}
	fmt.Fprintf(&b, "daemonize no\nsupervised no\nlogfile \"\"\ndir %s\n", redisQuote(dir))
	b.WriteString("save \"\"\nappendonly no\n")
	policy := "allkeys-lru"
	if slices.Contains(site.RedisPolicies, cs.Policy) {
		policy = cs.Policy
	}
	fmt.Fprintf(&b, "maxmemory %d\nmaxmemory-policy %s\n", cs.MaxMemoryB, policy)
	b.WriteString("enable-protected-configs no\nenable-debug-command no\nenable-module-command no\n")
	// The site's code has the password: the commands that would lift the
	// cap, stop the server, make it a replica or write files are gone.
	for _, c := range redisRemovedCommands {
		fmt.Fprintf(&b, "rename-command %s \"\"\n", c)
	}
	// Redis rewrites its command line to this title: with the
	// configuration file in it, the lab's directory is there, which is
	// how Neighbours tells a lab's servers from the machine's own.
	b.WriteString("proc-title-template \"{title} {listen-addr} {server-mode} {config-file}\"\n")
	if cs.password.Set() {
		fmt.Fprintf(&b, "requirepass %s\n", redisQuote(cs.password.Reveal()))
	}
	return b.String()
}

// redisRemovedCommands are the commands a lab Redis does not have.
var redisRemovedCommands = []string{"CONFIG", "SHUTDOWN", "REPLICAOF", "SLAVEOF", "SAVE", "BGSAVE", "BGREWRITEAOF", "ACL"}

// redisQuote is s as one argument of redis.conf: double-quoted, every
// byte but letters, digits and a few safe marks written as \xHH, which
// redis.conf's reader turns back into the byte.
func redisQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._-:", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// memcachedArgs are a lab Memcached's arguments: its socket (Memcached
// then listens on no port) or its loopback port, no UDP, its memory cap.
func (cs CacheServer) memcachedArgs(pidFile string) []string {
	// -P names a pid file, written only with -d (daemonize), which a lab
	// does not use: it puts the lab's directory in the command line,
	// which is how Neighbours tells a lab's servers from the machine's.
	args := []string{"-m", strconv.FormatInt(max(cs.MaxMemoryB>>20, 1), 10), "-c", "1024", "-P", pidFile}
	if cs.Policy == "noeviction" {
		args = append(args, "-M")
	}
	if cs.Socket != "" {
		return append(args, "-s", cs.Socket, "-a", "0777")
	}
	return append(args, "-l", strings.Join(cs.IPs, ","), "-p", strconv.Itoa(cs.Port), "-U", "0")
}

// startCaches starts the lab's cache servers inside its seal as dbAcct
// and waits until each listens. fresh (lab up) writes Redis's
// configuration first; a restart (lab reset) starts from the one written
// then, which holds the site's password (the lab's state does not).
func (l *Lab) startCaches(ctx context.Context, dbAcct *account, say func(string), fresh bool) error {
	y := layout{l.Dir}
	for i, cs := range l.Caches {
		var cmd *exec.Cmd
		var err error
		switch cs.Kind {
		case "redis":
			conf := y.p(cacheConfDir, fmt.Sprintf("redis-%d.conf", i))
			// Root's, readable by the cache's group alone: redis reads it,
			// cannot rewrite it (CONFIG REWRITE), and the site cannot
			// read the password in it.
			if fresh {
				if err := writeOwned(conf, []byte(cs.redisConfig(y.p(cacheConfDir))), 0o640, dbGroup(dbAcct)); err != nil {
					return err
				}
			}
			say(fmt.Sprintf("starting the lab's own Redis at %s: %s", strings.Join(cs.Addrs, ", "), cs.sizeText()))
			cmd, err = l.start(dbAcct, "redis", cacheBinaries["redis"], []string{conf}, nil)
		case "memcached":
			say(fmt.Sprintf("starting the lab's own Memcached at %s: %s", strings.Join(cs.Addrs, ", "), cs.sizeText()))
			cmd, err = l.start(dbAcct, "memcached", cacheBinaries["memcached"], cs.memcachedArgs(y.p(cacheConfDir, fmt.Sprintf("memcached-%d.pid", i))), nil)
		}
		if err != nil {
			return err
		}
		what := "the lab's " + kindTitle(cs.Kind)
		if cs.Socket != "" {
			if err := l.waitDial(ctx, what, "unix", cs.Socket, l.DBPeerUID(), cmd.Process.Pid); err != nil {
				return fmt.Errorf("%w (log: %s)", err, y.outFile(cs.Kind))
			}
		}
		if cs.Port > 0 {
			if err := waitListening(ctx, what, cmd.Process.Pid, cs.Port); err != nil {
				return fmt.Errorf("%w (log: %s)", err, y.outFile(cs.Kind))
			}
		}
	}
	return nil
}

// dbGroup is the group of the account the caches run as (-1 when phptune
// does not run as root).
func dbGroup(a *account) int {
	_, gid := a.ids()
	return gid
}

// waitListening waits until process pid has a TCP socket listening on
// port: read from /proc/PID/net/tcp and tcp6, which show the sockets of
// the process's own network namespace (the seal's), which the host
// cannot dial.
func waitListening(ctx context.Context, what string, pid, port int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if tcpListening(pid, port) {
			return nil
		}
		if !alive(pid) {
			return fmt.Errorf("%s exited while starting", what)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not listen on port %d within 30s", what, port)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tcpListening reports whether /proc/PID/net/tcp or tcp6 lists a socket
// in state LISTEN (0A) on port.
func tcpListening(pid, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"tcp", "tcp6"} {
		file, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "net", f))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
				file.Close()
				return true
			}
		}
		file.Close()
	}
	return false
}

// restartCaches empties the lab's caches by starting them afresh (lab
// reset: a cache that outlived the restored database would answer with
// what the runs since wrote).
func (l *Lab) restartCaches(ctx context.Context) error {
	if len(l.Caches) == 0 {
		return nil
	}
	dbAcct, err := l.dbAccount()
	if err != nil {
		return err
	}
	if err := l.stopComponents("redis", "memcached"); err != nil {
		return fmt.Errorf("stopping the lab's caches: %w", err)
	}
	return l.startCaches(ctx, dbAcct, func(string) {}, false)
}
