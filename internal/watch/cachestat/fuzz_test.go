package cachestat

import (
	"bufio"
	"strings"
	"testing"
)

// The readers read what a lab's cache server answers, a server the
// site's code can talk to: whatever it says, they return counters or an
// error without panicking, and never a negative count.

func FuzzParseRedisInfo(f *testing.F) {
	f.Add(redisInfo)
	f.Add("keyspace_hits:1\nkeyspace_misses:99999999999999999999\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseRedisInfo([]byte(s))
		if err == nil && (c.Hits < 0 || c.Misses < 0 || c.Evictions < 0 || c.UsedBytes < 0 || c.MaxBytes < 0) {
			t.Fatalf("%+v", c)
		}
		if r := c.HitRatio(); r < 0 || r > 1 {
			t.Fatalf("hit ratio %v", r)
		}
	})
}

func FuzzReadBulk(f *testing.F) {
	f.Add("$5\r\nhello\r\n")
	f.Add("-NOAUTH x\r\n")
	f.Add("$-1\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ReadBulk(bufio.NewReader(strings.NewReader(s)))
		if err == nil && len(b) > len(s) {
			t.Fatalf("%d bytes from %d", len(b), len(s))
		}
	})
}

func FuzzReadMemcachedStats(f *testing.F) {
	f.Add("STAT get_hits 9\r\nSTAT get_misses 1\r\nSTAT bytes 300\r\nEND\r\n")
	f.Add("SERVER_ERROR out of memory\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ReadMemcachedStats(bufio.NewReader(strings.NewReader(s)))
		if err == nil && (c.Hits < 0 || c.Misses < 0 || c.Evictions < 0 || c.UsedBytes < 0 || c.MaxBytes < 0) {
			t.Fatalf("%+v", c)
		}
	})
}
