package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestCachesText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caches []results.CacheUse
		want   string
	}{
		{"none", nil, ""},
		{"two", []results.CacheUse{
			{Kind: "redis", Addrs: []string{"unix:/run/redis/redis.sock", "tcp:127.0.0.1:6379"}, Hits: 30, Misses: 10, HitRatio: 0.75, Evictions: 2, UsedBytes: 3 << 20, MaxBytes: 64 << 20},
			{Kind: "memcached", Addrs: []string{"tcp:127.0.0.1:11211"}, UsedBytes: 1 << 19},
		}, "  Cache        Redis at unix:/run/redis/redis.sock, tcp:127.0.0.1:6379: 30 hits, 10 misses (75.0% hit ratio), 2 evictions; 3.0 MiB used of 64 MiB\n" +
			"               Memcached at tcp:127.0.0.1:11211: 0 hits, 0 misses (no lookups), 0 evictions; 0.5 MiB used\n"},
		{"not read", []results.CacheUse{{Kind: "redis", Addrs: []string{"tcp:127.0.0.1:6379\x1b[2J"}, Error: "the server asks for a password (NOAUTH): its counters are not read"}},
			"  Cache        Redis at tcp:127.0.0.1:6379\\x1b[2J: counters not read: the server asks for a password (NOAUTH): its counters are not read\n"},
	} {
		var b bytes.Buffer
		CachesText(&b, tc.caches, "  ")
		if got := b.String(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if strings.Contains(b.String(), "\x1b") {
			t.Errorf("%s: a terminal escape printed", tc.name)
		}
	}
}

// TestCachesHTML: a bench's report shows its caches' table, and an
// error in the place of the counters that were not read.
func TestCachesHTML(t *testing.T) {
	b := &results.Bench{Kind: "bench", Target: "http://site.test/", Caches: []results.CacheUse{
		{Kind: "redis", Addrs: []string{"tcp:127.0.0.1:6379"}, Hits: 3, Misses: 1, HitRatio: 0.75, UsedBytes: 2 << 20, MaxBytes: 64 << 20},
		{Kind: "memcached", Addrs: []string{"tcp:127.0.0.1:11211"}, Error: "dial: refused"},
	}}
	var out bytes.Buffer
	if err := Render(&out, "html", Run{Bench: b}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="caches"`, `Redis <code>tcp:127.0.0.1:6379</code></td><td class="n">3</td><td class="n">1</td><td class="n">75.00%</td>`, `not read: dial: refused`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
