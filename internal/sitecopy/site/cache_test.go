package site

import (
	"reflect"
	"strings"
	"testing"
)

func TestCacheAddr(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" when it names no address
	}{
		{"tcp://127.0.0.1:6379?auth=secret&database=2", "tcp:127.0.0.1:6379"},
		{"tls://cache.internal:6380", "tcp:cache.internal:6380"},
		{"redis://user:p%40ss@10.0.0.7:6380/2", "tcp:10.0.0.7:6380"},
		{"rediss://:pw@[::1]:6379", "tcp:[::1]:6379"},
		{"unix:///var/run/redis/redis.sock?persistent=1", "unix:/var/run/redis/redis.sock"},
		{"unix:/run/redis.sock", "unix:/run/redis.sock"},
		{"/run/memcached/memcached.sock", "unix:/run/memcached/memcached.sock"},
		{"127.0.0.1:11211", "tcp:127.0.0.1:11211"},
		{"localhost", "tcp:localhost:6379"},
		{" 10.0.0.5:11211:2 ", "tcp:10.0.0.5:11211"}, // memcached's weight
		{"[::1]:6379", "tcp:[::1]:6379"},
		{"::1", "tcp:[::1]:6379"},
		{"", ""},
		{"default", "tcp:default:6379"},
		{"unix://relative.sock", ""},
		{"http://x", ""},
		{"host:notaport", ""},
		{"host:99999", ""},
		{"[::1", ""},
		{"a b:1", ""},
		{"redis://u:4711#x@h:6379", ""},    // a '#' in the password
		{"redis://u:pa?ss@h:6380", ""},     // a '?' in the password
		{"tcp://h:6379?auth=p@ss4711", ""}, // an '@' in the options
	} {
		got, ok := CacheAddr(c.in, 6379)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("CacheAddr(%q) = %q, %v, want %q", c.in, got, ok, c.want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, "pw") || strings.Contains(got, "p%40ss") || strings.Contains(got, "4711") || strings.Contains(got, "pa") {
			t.Errorf("CacheAddr(%q) kept a password: %q", c.in, got)
		}
	}
}

func TestSessionCaches(t *testing.T) {
	const from = "/etc/php/8.2/fpm/conf.d/20-redis.ini:3"
	for _, c := range []struct {
		handler, path string
		want          []string // Addr of each
		setting       string   // the first's Setting holds it
	}{
		{"files", "/var/lib/php/sessions", nil, ""},
		{"redis", "tcp://127.0.0.1:6379?auth=x,tcp://10.0.0.2:6379", []string{"tcp:127.0.0.1:6379", "tcp:10.0.0.2:6379"}, "session.save_handler=redis (" + from + "), session.save_path"},
		{"redis", "unix:///var/run/redis/redis.sock?persistent=1&database=3", []string{"unix:/var/run/redis/redis.sock"}, "session.save_path"},
		{"rediscluster", "seed[]=10.0.0.1:7000&seed[]=10.0.0.2:7001&timeout=2", []string{"tcp:10.0.0.1:7000", "tcp:10.0.0.2:7001"}, "rediscluster"},
		{"memcached", "PERSISTENT=sess 127.0.0.1:11211, 10.0.0.3:11211", []string{"tcp:127.0.0.1:11211", "tcp:10.0.0.3:11211"}, "memcached"},
		{"memcached", "/run/memcached/memcached.sock", []string{"unix:/run/memcached/memcached.sock"}, "memcached"},
		{"memcache", "tcp://127.0.0.1:11211?persistent=1&weight=1", []string{"tcp:127.0.0.1:11211"}, "memcache"},
		{"Redis", "", []string{"tcp:127.0.0.1:6379"}, "no usable session.save_path"},
		{"redis", "tcp://127.0.0.1:6379,tcp://127.0.0.1:6379", []string{"tcp:127.0.0.1:6379"}, "redis"},
	} {
		got := SessionCaches(c.handler, c.path, from)
		var addrs []string
		for _, g := range got {
			addrs = append(addrs, g.Addr)
		}
		if !reflect.DeepEqual(addrs, c.want) {
			t.Errorf("SessionCaches(%q, %q) = %q, want %q", c.handler, c.path, addrs, c.want)
		}
		if len(got) > 0 && !strings.Contains(got[0].Setting, c.setting) {
			t.Errorf("SessionCaches(%q, %q): setting %q does not say %q", c.handler, c.path, got[0].Setting, c.setting)
		}
	}
}

func TestDropInCache(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"<?php class WP_Object_Cache { function __construct() { $this->mc = new Memcached(); } }", "memcached"},
		{"<?php $m = new \\Memcache;", "memcached"},
		{"<?php $this->redis = new Redis();", "redis"},
		{"<?php $c = new Predis\\Client($params);", "redis"},
		{"<?php apcu_fetch($k);", ""},
	} {
		if got := dropInCache([]byte(c.src)); got != c.want {
			t.Errorf("dropInCache(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

// TestCollectCaches: the application's caches, the drop-in's default
// server when no setting names one of its kind, and the session handler's,
// each address once.
func TestCollectCaches(t *testing.T) {
	s := &Site{
		App: &App{Kind: "wordpress", Caches: []Cache{{Kind: "redis", Addr: "unix:/run/redis/redis.sock", Setting: "WP_REDIS_PATH"}},
			cacheKeySalt: true},
		PHP: &PHPConfig{Settings: map[string]Setting{
			"session.save_handler": {Value: "redis", From: "pool www"},
			"session.save_path":    {Value: "unix:///run/redis/redis.sock,tcp://127.0.0.1:6379", From: "pool www"},
		}},
	}
	s.collectCaches("memcached")
	want := []Cache{
		{Kind: "redis", Addr: "unix:/run/redis/redis.sock", Setting: "WP_REDIS_PATH"},
		{Kind: "memcached", Addr: "tcp:127.0.0.1:11211", Setting: "wp-content/object-cache.php (a memcached drop-in, WP_CACHE_KEY_SALT set; its default server)"},
		{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "session.save_handler=redis (pool www), session.save_path"},
	}
	if !reflect.DeepEqual(s.Caches, want) {
		t.Errorf("Caches =\n%+v\nwant\n%+v", s.Caches, want)
	}
	// A drop-in of a kind the configuration names adds nothing.
	s2 := &Site{App: &App{Kind: "wordpress", Caches: []Cache{{Kind: "redis", Addr: "tcp:10.0.0.1:6379", Setting: "WP_REDIS_HOST"}}}}
	s2.collectCaches("redis")
	if len(s2.Caches) != 1 {
		t.Errorf("a redis drop-in with WP_REDIS_HOST set: %+v", s2.Caches)
	}
}

func TestCacheInSeal(t *testing.T) {
	const overlay = "/srv/app"
	for _, c := range []struct {
		cache Cache
		says  string
	}{
		{Cache{Kind: "redis", Addr: "unix:/var/run/redis/redis.sock", Setting: "WP_REDIS_PATH"}, "the site names Redis at unix:/var/run/redis/redis.sock (WP_REDIS_PATH): inside the seal that path leads nowhere"},
		{Cache{Kind: "redis", Addr: "unix:/srv/app/storage/redis.sock", Setting: "REDIS_HOST"}, "in the app's overlay"},
		{Cache{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "REDIS_HOST"}, "the seal's own loopback, where nothing listens there: the connection is refused and counted"},
		{Cache{Kind: "memcached", Addr: "tcp:[::1]:11211", Setting: "MEMCACHED_HOST"}, "Memcached at tcp:[::1]:11211 (MEMCACHED_HOST): inside the seal that is the seal's own loopback"},
		{Cache{Kind: "memcached", Addr: "tcp:localhost:11211", Setting: "MEMCACHED_HOST"}, "localhost is the seal's own loopback"},
		{Cache{Kind: "redis", Addr: "tcp:10.0.0.7:6380", Setting: "WP_REDIS_SERVERS"}, "no route off its loopback"},
		{Cache{Kind: "redis", Addr: "tcp:cache.internal:6379", Setting: "REDIS_HOST"}, "that name does not resolve"},
		{Cache{Kind: "redis", Setting: "CACHE_STORE"}, "the site names Redis (CACHE_STORE): inside the seal nothing but the lab's own"},
	} {
		got := CacheInSeal(c.cache, overlay)
		if !strings.Contains(got, c.says) || !strings.HasSuffix(got, "; the lab starts no cache, so its numbers are without one") {
			t.Errorf("CacheInSeal(%+v) = %q, want it to say %q", c.cache, got, c.says)
		}
	}
}

func TestRedactSavePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tcp://127.0.0.1:6379?auth=s3cret&database=2", "tcp://127.0.0.1:6379?auth=<redacted>&database=2"},
		{"tcp://a:1?auth[]=user&auth[]=s3cret,tcp://b:2?weight=1", "tcp://a:1?auth[]=<redacted>&auth[]=<redacted>,tcp://b:2?weight=1"},
		{"redis://user:s3cret@10.0.0.7:6380/2", "redis://<redacted>@10.0.0.7:6380/2"},
		{"seed[]=10.0.0.1:7000&seed[]=10.0.0.2:7001&auth=s3cret", "seed[]=10.0.0.1:7000&seed[]=10.0.0.2:7001&auth=<redacted>"},
		{"unix:///run/redis.sock?persistent=1&password=s3cret", "unix:///run/redis.sock?persistent=1&password=<redacted>"},
		{"/var/lib/php/sessions", "/var/lib/php/sessions"},
		{"127.0.0.1:11211, 10.0.0.3:11211", "127.0.0.1:11211, 10.0.0.3:11211"},
		{"tcp://a:1?x=1&auth=s3cret", "tcp://a:1?x=1&auth=<redacted>"},
	} {
		if got := RedactSavePath(c.in); got != c.want {
			t.Errorf("RedactSavePath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
