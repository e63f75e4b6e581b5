package cachestat

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const redisInfo = "# Stats\r\ntotal_connections_received:3\r\nkeyspace_hits:70\r\nkeyspace_misses:30\r\nevicted_keys:2\r\n\n# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:67108864\r\n"

func TestParseRedisInfo(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Counters
		bad      bool
	}{
		{"both sections", redisInfo, Counters{Hits: 70, Misses: 30, Evictions: 2, UsedBytes: 1 << 20, MaxBytes: 64 << 20}, false},
		{"stats only", "keyspace_hits:0\nkeyspace_misses:0\n", Counters{}, false},
		{"no hits", "used_memory:5\n", Counters{}, true},
		{"not a count", "keyspace_hits:x\nkeyspace_misses:1\n", Counters{}, true},
		{"negative", "keyspace_hits:-1\nkeyspace_misses:1\n", Counters{}, true},
		{"empty", "", Counters{}, true},
	} {
		got, err := ParseRedisInfo([]byte(tc.in))
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v, bad %v", tc.name, got, err, tc.want, tc.bad)
		}
	}
}

func TestReadBulk(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		err            error
		bad            bool
	}{
		{"bulk", "$5\r\nhello\r\n", "hello", nil, false},
		{"empty bulk", "$0\r\n\r\n", "", nil, false},
		{"noauth", "-NOAUTH Authentication required.\r\n", "", ErrPassword, true},
		{"error", "-ERR unknown command\r\n", "", nil, true},
		{"integer", ":1\r\n", "", nil, true},
		{"nil", "$-1\r\n", "", nil, true},
		{"too long", "$99999999\r\n", "", nil, true},
		{"short", "$5\r\nhel", "", nil, true},
		{"no crlf", "$2\r\nhello", "", nil, true},
		{"eof", "", "", nil, true},
	} {
		got, err := ReadBulk(bufio.NewReader(strings.NewReader(tc.in)))
		if (err != nil) != tc.bad || string(got) != tc.want || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: %q, %v; want %q, bad %v", tc.name, got, err, tc.want, tc.bad)
		}
	}
}

func TestReadMemcachedStats(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Counters
		bad      bool
	}{
		{"stats", "STAT pid 1\r\nSTAT get_hits 9\r\nSTAT get_misses 1\r\nSTAT bytes 300\r\nSTAT limit_maxbytes 67108864\r\nSTAT evictions 4\r\nSTAT version 1.6.18\r\nEND\r\n",
			Counters{Hits: 9, Misses: 1, Evictions: 4, UsedBytes: 300, MaxBytes: 64 << 20}, false},
		{"error", "ERROR\r\n", Counters{}, true},
		{"no end", "STAT get_hits 1\r\nSTAT get_misses 1\r\n", Counters{}, true},
		{"no hits", "STAT pid 1\r\nEND\r\n", Counters{}, true},
		{"bad count", "STAT get_hits many\r\nEND\r\n", Counters{}, true},
	} {
		got, err := ReadMemcachedStats(bufio.NewReader(strings.NewReader(tc.in)))
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v, bad %v", tc.name, got, err, tc.want, tc.bad)
		}
	}
}

func TestDelta(t *testing.T) {
	for _, tc := range []struct {
		name       string
		start, end Counters
		want       Counters
		ok         bool
		ratio      float64
	}{
		{"counted", Counters{Hits: 10, Misses: 10, Evictions: 1, UsedBytes: 5}, Counters{Hits: 40, Misses: 20, Evictions: 3, UsedBytes: 9, MaxBytes: 100},
			Counters{Hits: 30, Misses: 10, Evictions: 2, UsedBytes: 9, MaxBytes: 100}, true, 0.75},
		{"idle", Counters{Hits: 1}, Counters{Hits: 1}, Counters{}, true, 0},
		{"restarted", Counters{Hits: 50}, Counters{Hits: 3}, Counters{Hits: -47}, false, 0},
	} {
		got, ok := Delta(tc.start, tc.end)
		if got != tc.want || ok != tc.ok || ok && got.HitRatio() != tc.ratio {
			t.Errorf("%s: %+v %v ratio %v; want %+v %v %v", tc.name, got, ok, got.HitRatio(), tc.want, tc.ok, tc.ratio)
		}
	}
}

// fakeConn answers whatever is written with reply, and records what was
// written.
func fakeConn(t *testing.T, reply string) (net.Conn, *strings.Builder) {
	a, b := net.Pipe()
	var sent strings.Builder
	go func() {
		buf := make([]byte, 4096)
		n, _ := b.Read(buf)
		sent.Write(buf[:n])
		b.Write([]byte(reply))
		b.Close()
	}()
	t.Cleanup(func() { a.Close() })
	return a, &sent
}

// TestReadSendsOnlyInfo: Read sends INFO stats and INFO memory to Redis
// and stats to Memcached, nothing else; a password-protected Redis's
// NOAUTH is ErrPassword.
func TestReadSendsOnlyInfo(t *testing.T) {
	ctx := context.Background()
	stats := "keyspace_hits:3\r\nkeyspace_misses:1\r\n"
	mem := "used_memory:10\r\n"
	conn, sent := fakeConn(t, "$"+strconv.Itoa(len(stats))+"\r\n"+stats+"\r\n$"+strconv.Itoa(len(mem))+"\r\n"+mem+"\r\n")
	c, err := Read(ctx, "redis", conn)
	if err != nil || c != (Counters{Hits: 3, Misses: 1, UsedBytes: 10}) {
		t.Errorf("redis: %+v %v", c, err)
	}
	if got := sent.String(); got != "*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n*2\r\n$4\r\nINFO\r\n$6\r\nmemory\r\n" {
		t.Errorf("sent to redis %q", got)
	}
	conn, _ = fakeConn(t, "-NOAUTH Authentication required.\r\n-NOAUTH Authentication required.\r\n")
	if _, err := Read(ctx, "redis", conn); !errors.Is(err, ErrPassword) {
		t.Errorf("a password-protected redis: %v", err)
	}
	conn, sent = fakeConn(t, "STAT get_hits 2\r\nSTAT get_misses 2\r\nEND\r\n")
	if c, err := Read(ctx, "memcached", conn); err != nil || c.HitRatio() != 0.5 || sent.String() != "stats\r\n" {
		t.Errorf("memcached: %+v %v, sent %q", c, err, sent.String())
	}
	// A server that never answers: the reading ends within Timeout.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { buf := make([]byte, 100); b.Read(buf) }()
	start := time.Now()
	if _, err := Read(ctx, "memcached", a); err == nil || time.Since(start) > 3*Timeout {
		t.Errorf("a silent server: %v after %v", err, time.Since(start))
	}
}

// TestReadRealServers reads Debian's redis-server and memcached (run as
// this account, on unix sockets of a temporary directory) after a known
// number of hits and misses.
func TestReadRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and memcached")
	}
	for _, b := range []string{"/usr/bin/redis-server", "/usr/bin/memcached"} {
		if _, err := os.Stat(b); err != nil {
			t.Skipf("%s is not installed (phptune setup --with-caches)", b)
		}
	}
	dir, err := os.MkdirTemp("", "cachestat")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	rsock, msock := filepath.Join(dir, "r.sock"), filepath.Join(dir, "m.sock")
	margs := []string{"-m", "16", "-s", msock, "-U", "0"}
	if os.Geteuid() == 0 {
		margs = append(margs, "-u", "nobody")
	}
	for _, c := range []*exec.Cmd{
		exec.Command("/usr/bin/redis-server", "--port", "0", "--unixsocket", rsock, "--save", "", "--appendonly", "no", "--dir", dir, "--maxmemory", "32mb"),
		exec.Command("/usr/bin/memcached", margs...),
	} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	ctx := context.Background()
	read := func(kind, sock string) Counters {
		t.Helper()
		var conn net.Conn
		var err error
		for i := 0; i < 200; i++ {
			if conn, err = net.Dial("unix", sock); err == nil {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c, err := Read(ctx, kind, conn)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		return c
	}
	talk := func(sock, msg string, lines int) {
		t.Helper()
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		conn.Write([]byte(msg))
		r := bufio.NewReader(conn)
		for range lines {
			if _, err := r.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
	}
	r0, m0 := read("redis", rsock), read("memcached", msock)
	// Redis: one SET, two GETs that hit, one that misses.
	talk(rsock, "SET k v\r\nGET k\r\nGET k\r\nGET nope\r\n", 1+2*2+1)
	// Memcached: one set, one get that hits, two that miss.
	talk(msock, "set k 0 0 1\r\nv\r\nget k\r\nget x\r\nget y\r\n", 1+3+1+1)
	r1, m1 := read("redis", rsock), read("memcached", msock)
	if d, ok := Delta(r0, r1); !ok || d.Hits != 2 || d.Misses != 1 || d.UsedBytes <= 0 || d.MaxBytes != 32<<20 {
		t.Errorf("redis: %+v → %+v", r0, r1)
	}
	if d, ok := Delta(m0, m1); !ok || d.Hits != 1 || d.Misses != 2 || d.UsedBytes <= 0 || d.MaxBytes != 16<<20 {
		t.Errorf("memcached: %+v → %+v", m0, m1)
	}
}
