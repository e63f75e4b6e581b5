package livehost

import "testing"

func TestCacheKindOf(t *testing.T) {
	for _, tc := range []struct{ argv0, want string }{
		{"/usr/bin/redis-server 127.0.0.1:6379", "redis"},
		{"redis-server", "redis"},
		{"/usr/bin/memcached", "memcached"},
		{"/usr/bin/redis-cli", ""},
		{"memcached-wrapper", ""},
		{"", ""},
	} {
		if got := cacheKindOf(tc.argv0); got != tc.want {
			t.Errorf("cacheKindOf(%q) = %q, want %q", tc.argv0, got, tc.want)
		}
	}
}
