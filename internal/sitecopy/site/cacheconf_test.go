package site

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/watch/proc"
)

func TestParseRedisBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false},
		{"1048576", 1 << 20, false},
		{"1k", 1000, false},
		{"1kb", 1024, false},
		{"512mb", 512 << 20, false},
		{"512MB", 512 << 20, false},
		{"2m", 2e6, false},
		{"1gb", 1 << 30, false},
		{"3G", 3e9, false},
		{"100b", 100, false},
		{"", 0, true},
		{"gb", 0, true},
		{"-1", 0, true},
		{"+5", 0, true},
		{"1tb", 0, true},
		{"1.5gb", 0, true},
		{"99999999999999gb", 0, true},
	} {
		got, err := ParseRedisBytes(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseRedisBytes(%q) = %d, %v; want %d, bad %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseRedisConf(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []RedisDirective
	}{
		{"debian's commented", "# maxmemory <bytes>\n# maxmemory-policy noeviction\nport 6379\n", nil},
		{"set", "port 6379\nmaxmemory 2gb\nMAXMEMORY-POLICY allkeys-lru\nrequirepass secret\n",
			[]RedisDirective{{2, "maxmemory", "2gb"}, {3, "maxmemory-policy", "allkeys-lru"}}},
		{"quoted and indented", "  maxmemory \"512mb\"\n\tinclude '/etc/redis/local.conf'\n",
			[]RedisDirective{{1, "maxmemory", "512mb"}, {2, "include", "/etc/redis/local.conf"}}},
		{"no value", "maxmemory\nmaxmemory-clients 1g\n", nil},
		{"crlf", "maxmemory 1mb\r\n", []RedisDirective{{1, "maxmemory", "1mb"}}},
	} {
		if got := ParseRedisConf([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ParseRedisConf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseMemcachedArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want MemcachedMemory
		bad  bool
	}{
		{[]string{"-m", "64", "-p", "11211", "-u", "memcache"}, MemcachedMemory{MiB: 64, Arg: 0}, false},
		{[]string{"-p", "11211", "-m1024"}, MemcachedMemory{MiB: 1024, Arg: 2}, false},
		{[]string{"--memory-limit=256", "-M"}, MemcachedMemory{MiB: 256, NoEvict: true, Arg: 0}, false},
		{[]string{"--memory-limit", "8", "--disable-evictions"}, MemcachedMemory{MiB: 8, NoEvict: true, Arg: 0}, false},
		{[]string{"-m", "64", "-m", "128"}, MemcachedMemory{MiB: 128, Arg: 2}, false},
		{[]string{"-p", "11211"}, MemcachedMemory{Arg: -1}, false},
		{[]string{"-m"}, MemcachedMemory{Arg: -1}, true},
		{[]string{"-m", "lots"}, MemcachedMemory{Arg: -1}, true},
		{[]string{"-m", "0"}, MemcachedMemory{Arg: -1}, true},
		{[]string{"-m", "-5"}, MemcachedMemory{Arg: -1}, true},
	} {
		got, err := ParseMemcachedArgs(tc.args)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseMemcachedArgs(%q) = %+v, %v; want %+v, bad %v", tc.args, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseMemcachedConf(t *testing.T) {
	debian := "# memcached default config file\n-d\nlogfile /var/log/memcached.log\n# -v\n-m 64\n-p 11211\n-u memcache\n-l 127.0.0.1\n-P /var/run/memcached/memcached.pid\n"
	for _, tc := range []struct {
		name, in string
		want     MemcachedMemory
		bad      bool
	}{
		{"debian", debian, MemcachedMemory{MiB: 64, Arg: 5}, false},
		{"bigger, no evictions", "-m 2048\n-M\n", MemcachedMemory{MiB: 2048, NoEvict: true, Arg: 1}, false},
		{"commented", "# -m 64\n", MemcachedMemory{Arg: -1}, false},
		{"bad", "-m x\n", MemcachedMemory{Arg: -1}, true},
	} {
		got, err := ParseMemcachedConf([]byte(tc.in))
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s: ParseMemcachedConf = %+v, %v; want %+v, bad %v", tc.name, got, err, tc.want, tc.bad)
		}
	}
}

func TestRedisConfArg(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"/usr/bin/redis-server", "/etc/redis/redis.conf", "--supervised", "systemd"}, "/etc/redis/redis.conf"},
		{[]string{"/usr/bin/redis-server 127.0.0.1:6379"}, ""},
		{[]string{"/usr/bin/redis-server 127.0.0.1:6379  /etc/redis/other.conf"}, "/etc/redis/other.conf"},
		{[]string{"redis-server", "--port", "6380"}, ""},
		{nil, ""},
	} {
		if got := redisConfArg(tc.args); got != tc.want {
			t.Errorf("redisConfArg(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
	mm, pol := redisArgOptions([]string{"redis-server", "/c.conf", "--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lfu"})
	if mm != "1gb" || pol != "allkeys-lfu" {
		t.Errorf("redisArgOptions = %q %q", mm, pol)
	}
}

func TestListenAddrs(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		want  []string
		local bool
	}{
		{"unix:/run/redis/redis.sock", []string{"unix:/run/redis/redis.sock"}, true},
		{"tcp:127.0.0.1:6379", []string{"tcp:127.0.0.1:6379"}, true},
		{"tcp:localhost:11211", []string{"tcp:127.0.0.1:11211", "tcp:[::1]:11211"}, true},
		{"tcp:Site.Test:6379", []string{"tcp:127.0.0.1:6379"}, true},
		{"tcp:cache.internal:6379", nil, false},
		{"tcp:10.0.0.5:6379", []string{"tcp:10.0.0.5:6379"}, true},
	} {
		got, local := listenAddrs(tc.addr, []string{"site.test"})
		if !reflect.DeepEqual(got, tc.want) || local != tc.local {
			t.Errorf("listenAddrs(%q) = %q %v, want %q %v", tc.addr, got, local, tc.want, tc.local)
		}
	}
}

// TestSizeCachesFromFiles: with no server running at the addresses, the
// sizes come from Debian's files under the host's root (an include
// followed, the later line winning); an address of another machine is
// not read.
func TestSizeCachesFromFiles(t *testing.T) {
	root := t.TempDir()
	write := func(p, text string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write(DefaultRedisConf, "maxmemory 100mb\nrequirepass hush\ninclude /etc/redis/local.conf\n")
	write("/etc/redis/local.conf", "maxmemory 256mb\nmaxmemory-policy allkeys-lfu\n")
	write(DefaultMemcachedConf, "-d\n-m 512\n-M\n")
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	s := &Site{Caches: []Cache{
		{Kind: "redis", Addr: "tcp:127.0.0.1:1"},
		{Kind: "memcached", Addr: "unix:/nonexistent/memcached.sock"},
		{Kind: "redis", Addr: "tcp:cache.internal:6379"},
	}}
	s.sizeCaches(Host{Root: root, FS: fs})
	r, m, far := s.Caches[0], s.Caches[1], s.Caches[2]
	if r.MaxMemoryBytes != 256<<20 || r.Policy != "allkeys-lfu" || !strings.Contains(r.SizeFrom, "maxmemory at /etc/redis/local.conf:1") || !strings.Contains(r.SizeFrom, "Debian's file") {
		t.Errorf("redis: %+v", r)
	}
	if strings.Contains(r.SizeFrom+r.SizeNote, "hush") {
		t.Errorf("the password leaked: %+v", r)
	}
	if m.MaxMemoryBytes != 512<<20 || m.Policy != "noeviction" || !strings.Contains(m.SizeFrom, "/etc/memcached.conf:2") {
		t.Errorf("memcached: %+v", m)
	}
	if far.MaxMemoryBytes != 0 || far.SizeFrom != "" || !strings.Contains(far.SizeNote, "not on this machine") {
		t.Errorf("another machine's: %+v", far)
	}
	write(DefaultRedisConf, "maxmemory lots\n")
	s.Caches[0] = Cache{Kind: "redis", Addr: "tcp:127.0.0.1:1"}
	s.sizeCaches(Host{Root: root, FS: fs})
	if r := s.Caches[0]; r.SizeFrom != "" || !strings.Contains(r.SizeNote, "redis.conf:1") {
		t.Errorf("a bad maxmemory: %+v", r)
	}
}

// TestSizeCachesRunningServers: a memcached and a redis-server running
// (as this account) at loopback ports are found by the kernel's socket
// table: memcached's -m from its command line, Redis's maxmemory from
// the configuration file its command line names.
func TestSizeCachesRunningServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts memcached and redis-server")
	}
	for _, b := range []string{"/usr/bin/memcached", "/usr/bin/redis-server"} {
		if _, err := os.Stat(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
	dir, err := os.MkdirTemp("", "sizecaches")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(conf, []byte("port 0\nunixsocket "+dir+"/r.sock\nsave \"\"\nmaxmemory 48mb\nmaxmemory-policy volatile-ttl\nproc-title-template \"{title} {listen-addr} {config-file}\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-m", "37", "-s", dir + "/m.sock", "-U", "0"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "memcache") // an account CacheServers trusts
		os.Chmod(dir, 0o777)
	}
	mc := exec.Command("/usr/bin/memcached", args...)
	rd := exec.Command("/usr/bin/redis-server", conf)
	for _, c := range []*exec.Cmd{mc, rd} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	for i := 0; i < 200; i++ {
		_, e1 := os.Stat(dir + "/m.sock")
		_, e2 := os.Stat(dir + "/r.sock")
		if e1 == nil && e2 == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	s := &Site{Caches: []Cache{{Kind: "memcached", Addr: "unix:" + dir + "/m.sock"}, {Kind: "redis", Addr: "unix:" + dir + "/r.sock"}}}
	s.sizeCaches(Host{Root: "/", FS: fs})
	m, r := s.Caches[0], s.Caches[1]
	if m.MaxMemoryBytes != 37<<20 || m.SizeFrom != "-m at pid "+strconv.Itoa(mc.Process.Pid)+" cmdline" {
		t.Errorf("memcached: %+v", m)
	}
	if r.MaxMemoryBytes != 48<<20 || r.Policy != "volatile-ttl" || !strings.Contains(r.SizeFrom, "maxmemory at "+conf+":4") {
		t.Errorf("redis: %+v", r)
	}
}

func TestCacheSizeLine(t *testing.T) {
	for _, tc := range []struct {
		c    Cache
		want string
	}{
		{Cache{MaxMemoryBytes: 256 << 20, Policy: "allkeys-lru", SizeFrom: "maxmemory at /etc/redis/redis.conf:9"}, "production's size 256 MiB, allkeys-lru (maxmemory at /etc/redis/redis.conf:9)"},
		{Cache{MaxMemoryBytes: 64 << 20, SizeFrom: "-m at pid 3 cmdline"}, "production's size 64 MiB (-m at pid 3 cmdline)"},
		{Cache{SizeFrom: "Debian's file: /etc/redis/redis.conf sets no maxmemory (no limit)"}, "production's size: Debian's file: /etc/redis/redis.conf sets no maxmemory (no limit)"},
		{Cache{SizeNote: "not on this machine: its configuration is not read"}, "production's size not read: not on this machine: its configuration is not read"},
		{Cache{}, ""},
	} {
		if got := tc.c.sizeLine(); got != tc.want {
			t.Errorf("sizeLine(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
