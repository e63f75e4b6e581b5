package lab

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

// haveCaches makes cacheHave report the servers in have installed.
func haveCaches(t *testing.T, have ...string) {
	t.Helper()
	orig := cacheHave
	t.Cleanup(func() { cacheHave = orig })
	cacheHave = func(kind string) bool { return contains(have, kind) }
}

func TestSiteCacheServers(t *testing.T) {
	s := &site.Site{DocRoot: site.DocRoot{Path: "/srv/app/public"}, Caches: []site.Cache{
		{Kind: "redis", Addr: "unix:/var/run/redis/redis.sock", Setting: "WP_REDIS_PATH", Password: site.NewSecret("pw\"x")},
		{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "WP_REDIS_SERVERS"},
		{Kind: "redis", Addr: "tcp:localhost:6380", Setting: "session.save_path"},
		{Kind: "memcached", Addr: "tcp:127.0.0.1:11211", Setting: "WP_CACHE_HOST"},
		{Kind: "memcached", Addr: "tcp:10.0.0.5:11211", Setting: "$memcached_servers"},
		{Kind: "redis", Addr: "unix:/srv/app/storage/redis.sock", Setting: "REDIS_HOST"},
		{Kind: "redis", Addr: "tcp:127.0.0.1:3306", Setting: "REDIS_PORT"},
		{Kind: "memcached", Addr: "tcp:site.test:6379", Setting: "MEMCACHED_HOST"},
		{Kind: "redis", Addr: "unix:redis.sock", Setting: "WP_REDIS_PATH"},
	}}
	haveCaches(t, "redis", "memcached")
	servers, said := siteCacheServers(s, "/srv/app", "/var/lib/phptune/labs/x", []string{"site.test"}, 512<<20)
	if len(servers) != 3 {
		t.Fatalf("servers %+v, want 3 (Redis on the socket and 6379, Redis on 6380, Memcached on 11211)", servers)
	}
	r := servers[0]
	if r.Kind != "redis" || r.Port != 6379 || !reflect.DeepEqual(r.IPs, []string{"127.0.0.1"}) || r.Socket != "/var/lib/phptune/labs/x/cacherun/redis-0.sock" ||
		!reflect.DeepEqual(r.Links, []string{"/run/redis/redis.sock"}) || !r.Password || r.password.Reveal() != "pw\"x" || r.MaxMemoryB != 32<<20 {
		t.Errorf("the first Redis: %+v", r)
	}
	if r2 := servers[1]; r2.Kind != "redis" || r2.Port != 6380 || !reflect.DeepEqual(r2.IPs, []string{"127.0.0.1", "-::1"}) || r2.Socket != "" || r2.Password {
		t.Errorf("localhost's Redis: %+v", r2)
	}
	if m := servers[2]; m.Kind != "memcached" || m.Port != 11211 || !reflect.DeepEqual(m.IPs, []string{"127.0.0.1"}) {
		t.Errorf("Memcached: %+v", m)
	}
	wantSaid := []string{
		"the lab runs its own Redis at that address",
		"the lab runs its own Redis at that address",
		"the lab runs its own Redis at that address",
		"the lab runs its own Memcached at that address",
		"no route off its loopback: the connection is refused and counted (blocked); the lab runs no cache at that address, so its numbers are without it",
		"in the app's overlay",
		"port 3306 is the lab's own",
		"the site also names Redis on port 6379",
		"is relative",
	}
	if len(said) != len(wantSaid) {
		t.Fatalf("said %q", said)
	}
	for i, w := range wantSaid {
		if !strings.Contains(said[i], w) {
			t.Errorf("said[%d] = %q, want it to say %q", i, said[i], w)
		}
	}
	if !strings.Contains(said[0], "production's cache is never copied") || !strings.Contains(said[0], "asking for the site's password") || strings.Contains(strings.Join(said, "\n"), "pw\"x") {
		t.Errorf("the socket's sentence: %q (the password must never be printed)", said[0])
	}
	own := cacheOwnAddrs(servers)
	wantOwn := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:6379"), netip.MustParseAddrPort("127.0.0.1:6380"), netip.MustParseAddrPort("[::1]:6380"), netip.MustParseAddrPort("127.0.0.1:11211")}
	if !reflect.DeepEqual(own, wantOwn) {
		t.Errorf("own addresses %v, want %v", own, wantOwn)
	}
	if l := cacheLinks(servers); len(l) != 1 || l[0].Path != "/run/redis/redis.sock" || l[0].Target != r.Socket {
		t.Errorf("links %+v", l)
	}

	// Not installed: no server; today's sentence and the fix.
	haveCaches(t)
	servers, said = siteCacheServers(s, "/srv/app", "/var/lib/phptune/labs/x", nil, 0)
	if len(servers) != 0 || !strings.Contains(said[0], "leads nowhere") || !strings.Contains(said[4], "the lab starts no cache, so its numbers are without one") || !strings.Contains(said[0], "apt-get install redis-server, or phptune setup --with-caches") ||
		!strings.Contains(said[3], "apt-get install memcached") {
		t.Errorf("without the servers: %+v %q", servers, said)
	}
	// The overlay is the docroot: storage/ is not in it.
	if _, said := siteCacheServers(s, "", "/x", nil, 0); !strings.Contains(said[5], "leads nowhere") {
		t.Errorf("the app's socket with the docroot as the overlay: %q", said[5])
	}
	if servers, said := siteCacheServers(&site.Site{}, "", "/x", nil, 0); servers != nil || said != nil {
		t.Errorf("a site naming no cache: %+v %q", servers, said)
	}
}

func TestCacheMemory(t *testing.T) {
	for _, c := range []struct{ budget, want int64 }{{0, 64 << 20}, {4 << 30, 64 << 20}, {512 << 20, 32 << 20}, {64 << 20, 8 << 20}} {
		if got := cacheMemory(c.budget); got != c.want {
			t.Errorf("cacheMemory(%d) = %d, want %d", c.budget, got, c.want)
		}
	}
}

func TestRedisConfig(t *testing.T) {
	cs := CacheServer{Kind: "redis", IPs: []string{"127.0.0.1", "-::1"}, Port: 6379, Socket: "/l/cacherun/redis-0.sock", MaxMemoryB: 64 << 20, password: site.NewSecret("a b\"\n\\")}
	got := cs.redisConfig("/l/cache")
	for _, want := range []string{"bind 127.0.0.1 -::1\nport 6379\n", "unixsocket \"/l/cacherun/redis-0.sock\"\n", "save \"\"\nappendonly no\n",
		"maxmemory 67108864\n", "enable-protected-configs no\n", "rename-command CONFIG \"\"\n", "rename-command SHUTDOWN \"\"\n", "requirepass \"a\\x20b\\x22\\x0a\\x5c\"\n", "dir \"/l/cache\"\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("redis.conf lacks %q:\n%s", want, got)
		}
	}
	cs.Port, cs.password = 0, site.Secret{}
	if got := cs.redisConfig("/l/cache"); !strings.Contains(got, "port 0\n") || strings.Contains(got, "bind") || strings.Contains(got, "requirepass") {
		t.Errorf("a socket-only Redis without a password:\n%s", got)
	}
	m := CacheServer{Kind: "memcached", IPs: []string{"127.0.0.1"}, Port: 11211, MaxMemoryB: 8 << 20}
	if got := strings.Join(m.memcachedArgs("/l/cache/memcached-0.pid"), " "); got != "-m 8 -c 1024 -P /l/cache/memcached-0.pid -l 127.0.0.1 -p 11211 -U 0" {
		t.Errorf("memcached's arguments: %s", got)
	}
}

// TestCacheSizeFrom: a lab's cache takes production's size and policy,
// capped at a quarter of the lab's memory limit (and says so), or the
// lab's default when production's was not read or sets no limit.
func TestCacheSizeFrom(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kind       string
		c          site.Cache
		budget     int64
		wantB      int64
		wantPolicy string
		capped     bool
		text       []string
	}{
		{"redis production's", "redis", site.Cache{MaxMemoryBytes: 256 << 20, Policy: "allkeys-lfu", SizeFrom: "maxmemory at /etc/redis/redis.conf:1119"}, 0,
			256 << 20, "allkeys-lfu", false, []string{"at most 256 MiB, production's (maxmemory at /etc/redis/redis.conf:1119), maxmemory-policy allkeys-lfu as production's"}},
		{"redis capped", "redis", site.Cache{MaxMemoryBytes: 2 << 30, Policy: "volatile-lru", SizeFrom: "maxmemory at /etc/redis/redis.conf:9"}, 1 << 30,
			256 << 20, "volatile-lru", true, []string{"at most 256 MiB: production's 2048 MiB (maxmemory at /etc/redis/redis.conf:9) capped at a quarter of the lab's memory limit (1024 MiB)"}},
		{"redis default policy", "redis", site.Cache{MaxMemoryBytes: 100 << 20, SizeFrom: "maxmemory at x:1"}, 0,
			100 << 20, "noeviction", false, []string{"maxmemory-policy noeviction as production's"}},
		{"redis unknown policy", "redis", site.Cache{MaxMemoryBytes: 100 << 20, Policy: "evict\nall", SizeFrom: "x:1"}, 0,
			100 << 20, "", false, nil},
		{"redis no limit", "redis", site.Cache{SizeFrom: "Debian's file: /etc/redis/redis.conf sets no maxmemory (no limit)"}, 0,
			64 << 20, "", false, []string{"at most 64 MiB, the lab's default: production sets no limit"}},
		{"not read", "memcached", site.Cache{SizeNote: "not on this machine: its configuration is not read"}, 512 << 20,
			32 << 20, "", false, []string{"the lab's default (production's size: not on this machine"}},
		{"memcached -M", "memcached", site.Cache{MaxMemoryBytes: 1024 << 20, Policy: "noeviction", SizeFrom: "-m at pid 7 cmdline"}, 0,
			1024 << 20, "noeviction", false, []string{"production's (-m at pid 7 cmdline), -M (no evictions) as production's"}},
		{"memcached capped to whole MiB", "memcached", site.Cache{MaxMemoryBytes: 1024 << 20, SizeFrom: "-m at pid 7 cmdline"}, 100<<20 + 3,
			25 << 20, "", true, []string{"capped"}},
	} {
		cs := CacheServer{Kind: tc.kind}
		tc.c.Kind = tc.kind
		cs.sizeFrom(tc.c, tc.budget)
		if cs.MaxMemoryB != tc.wantB || cs.Policy != tc.wantPolicy || cs.Capped != tc.capped {
			t.Errorf("%s: %d B, policy %q, capped %v; want %d, %q, %v", tc.name, cs.MaxMemoryB, cs.Policy, cs.Capped, tc.wantB, tc.wantPolicy, tc.capped)
		}
		for _, w := range tc.text {
			if !strings.Contains(cs.SizeText, w) {
				t.Errorf("%s: %q lacks %q", tc.name, cs.SizeText, w)
			}
		}
	}
	r := CacheServer{Kind: "redis", Port: 6379, IPs: []string{"127.0.0.1"}, MaxMemoryB: 5 << 20, Policy: "volatile-ttl"}
	if conf := r.redisConfig("/d"); !strings.Contains(conf, "maxmemory 5242880\nmaxmemory-policy volatile-ttl\n") {
		t.Errorf("redisConfig:\n%s", conf)
	}
	m := CacheServer{Kind: "memcached", Port: 11211, IPs: []string{"127.0.0.1"}, MaxMemoryB: 8 << 20, Policy: "noeviction"}
	if args := strings.Join(m.memcachedArgs("/p"), " "); !strings.Contains(args, "-m 8 ") || !strings.Contains(args, " -M") {
		t.Errorf("memcachedArgs: %s", args)
	}
}
