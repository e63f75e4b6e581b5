package labstack

import (
	"context"
	"reflect"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/watch/cachestat"
)

func TestCacheUses(t *testing.T) {
	servers := []lab.CacheServer{
		{Kind: "redis", Addrs: []string{"tcp:127.0.0.1:6379"}, MaxMemoryB: 64 << 20},
		{Kind: "memcached", Addrs: []string{"tcp:127.0.0.1:11211"}, MaxMemoryB: 32 << 20},
		{Kind: "redis", Addrs: []string{"unix:/run/redis/redis.sock"}, MaxMemoryB: 8 << 20},
		{Kind: "redis", Addrs: []string{"tcp:127.0.0.1:6380"}, MaxMemoryB: 8 << 20},
	}
	start := []reading{
		{c: cachestat.Counters{Hits: 10, Misses: 10, Evictions: 1}},
		{c: cachestat.Counters{Hits: 5}},
		{err: cachestat.ErrPassword},
		{c: cachestat.Counters{Hits: 100}},
	}
	end := []reading{
		{c: cachestat.Counters{Hits: 40, Misses: 20, Evictions: 1, UsedBytes: 3 << 20, MaxBytes: 64 << 20}},
		{c: cachestat.Counters{Hits: 5, UsedBytes: 100}},
		{err: cachestat.ErrPassword},
		{c: cachestat.Counters{Hits: 2}},
	}
	got := cacheUses(servers, start, end)
	want := []results.CacheUse{
		{Kind: "redis", Addrs: []string{"tcp:127.0.0.1:6379"}, Hits: 30, Misses: 10, HitRatio: 0.75, UsedBytes: 3 << 20, MaxBytes: 64 << 20},
		{Kind: "memcached", Addrs: []string{"tcp:127.0.0.1:11211"}, Hits: 0, UsedBytes: 100, MaxBytes: 32 << 20},
		{Kind: "redis", Addrs: []string{"unix:/run/redis/redis.sock"}, MaxBytes: 8 << 20, Error: cachestat.ErrPassword.Error()},
		{Kind: "redis", Addrs: []string{"tcp:127.0.0.1:6380"}, MaxBytes: 8 << 20, Error: "its counters went back during the run (the cache restarted)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cacheUses:\n got %+v\nwant %+v", got, want)
	}
	if got := cacheUses(servers[:1], nil, nil); got[0].Error != "not read" {
		t.Errorf("no readings: %+v", got)
	}
}

// TestCacheCountersNil: a lab without caches makes no counters, and the
// nil counters do nothing.
func TestCacheCountersNil(t *testing.T) {
	cc := NewCacheCounters(context.Background(), &lab.Lab{})
	if cc != nil {
		t.Fatalf("counters for a lab without caches: %+v", cc)
	}
	cc.Mark()
	b := &results.Bench{}
	cc.Attach(context.Background(), b)
	if b.Caches != nil {
		t.Errorf("caches %+v", b.Caches)
	}
}
