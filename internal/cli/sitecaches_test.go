package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
)

// TestSealedSaysCaches: a site lab's summary states what each cache
// server the site names leads to, one line each, through termsafe (the
// addresses come from the site's own files); a run's warnings carry them
// for a sealed lab only.
func TestSealedSaysCaches(t *testing.T) {
	l := &lab.Lab{Name: "lab", Seal: t.TempDir(), SiteCaches: []string{
		"the site names Redis at unix:/var/run/redis/redis.sock (WP_REDIS_PATH): inside the seal that path leads nowhere; the lab starts no cache",
		"the site names Memcached at tcp:127.0.0.1:11211 (MEMCACHED_HOST\x1b[2J): refused",
	}}
	var out bytes.Buffer
	printSealed(context.Background(), &out, l)
	text := out.String()
	if !strings.Contains(text, "\ncache:      the site names Redis at unix:/var/run/redis/redis.sock (WP_REDIS_PATH): inside the seal that path leads nowhere") ||
		!strings.Contains(text, "\n            the site names Memcached at tcp:127.0.0.1:11211") {
		t.Errorf("printSealed does not state the caches:\n%s", text)
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("printSealed printed a terminal escape from the site's configuration:\n%q", text)
	}
	if got := labstack.CacheWarnings(l); len(got) != 2 {
		t.Errorf("CacheWarnings of a sealed lab = %q", got)
	}
	l.Seal = ""
	if got := labstack.CacheWarnings(l); got != nil {
		t.Errorf("CacheWarnings of an unsealed lab = %q", got)
	}
}

// TestBenchSaysCaches: a site lab's bench result with its caches'
// counters prints one Cache line per cache (after the observer's), and
// its JSON carries them.
func TestBenchSaysCaches(t *testing.T) {
	b := &results.Bench{Kind: "bench", Target: "http://site.test/", Protocol: "http", Model: "closed", Connections: 2, DurationS: 2, Requests: 10,
		Caches: []results.CacheUse{{Kind: "redis", Addrs: []string{"tcp:127.0.0.1:6379"}, Hits: 9, Misses: 1, HitRatio: 0.9, UsedBytes: 2 << 20, MaxBytes: 256 << 20}}}
	var out bytes.Buffer
	if err := report.BenchText(&out, b); err != nil {
		t.Fatal(err)
	}
	if want := "\n  Cache        Redis at tcp:127.0.0.1:6379: 9 hits, 1 misses (90.0% hit ratio), 0 evictions; 2.0 MiB used of 256 MiB\n"; !strings.Contains(out.String(), want) {
		t.Errorf("bench's text lacks %q:\n%s", want, out.String())
	}
	j, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"caches":[{"kind":"redis","addrs":["tcp:127.0.0.1:6379"],"hits":9,"misses":1,"hit_ratio":0.9,"evictions":0,"used_bytes":2097152,"max_bytes":268435456}]`; !strings.Contains(string(j), want) {
		t.Errorf("bench's JSON lacks %s:\n%s", want, j)
	}
}
