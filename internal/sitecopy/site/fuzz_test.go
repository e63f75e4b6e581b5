package site

import (
	"encoding/json"
	"strings"
	"testing"
)

// The readers read files the site's account can write: whatever they
// hold, they return (or refuse) without panicking, and a password never
// leaks into the settings kept.

func FuzzParseWPConfig(f *testing.F) {
	f.Add(`<?php define('DB_NAME','x'); define("DB_PASSWORD", "a\x41\u{1F600}\101$b"); $table_prefix = 'wp_';`)
	f.Add(`<?php define('DB_NAME', getenv('X')) ?> html <?= define('DB_HOST', '[::1]:1:/s');`)
	f.Add("<?php /* unterminated")
	f.Add(`<?php define('DB_NAME','x'); define('AUTH_KEY','k');`)
	f.Fuzz(func(t *testing.T, src string) {
		a, err := ParseWPConfig("wp-config.php", []byte(src))
		if err != nil {
			return
		}
		for k := range a.Settings {
			if secretName(k) {
				t.Fatalf("secret %s kept", k)
			}
		}
	})
}

func FuzzParseDotEnv(f *testing.F) {
	f.Add("DB_CONNECTION=mysql\nDB_PASSWORD=\"a\\\"b\"\nREDIS_HOST=/s\n")
	f.Add("export DB_DATABASE='x\nDB_HOST=${A}")
	f.Fuzz(func(t *testing.T, src string) {
		a, err := ParseDotEnv(".env", []byte(src))
		if err != nil {
			return
		}
		if _, ok := a.Settings["DB_PASSWORD"]; ok {
			t.Fatal("DB_PASSWORD kept as a setting")
		}
	})
}

func FuzzParseDrupalSettings(f *testing.F) {
	f.Add(`<?php $databases['default']['default'] = ['database' => 'd', 'host' => 'localhost', 'x' => [1, [2]]];`)
	f.Add(`<?php $databases['default']['default'] = array(`)
	f.Add(`<?php $settings['redis.connection']['host'] = "$x";`)
	f.Fuzz(func(t *testing.T, src string) {
		ParseDrupalSettings("settings.php", []byte(src))
	})
}

func FuzzMatchName(f *testing.F) {
	f.Add("*.example.com", "a.example.com")
	f.Add("~^(?<sub>.+)\\.example\\.com$", "x.example.com")
	f.Add("www.example.*", "www.example.org")
	f.Fuzz(func(t *testing.T, pattern, host string) {
		vs := []Vhost{{Names: []string{pattern}}, {Names: []string{"_"}}}
		for _, i := range MatchName(vs, host) {
			if i != 0 {
				t.Fatalf("%q matched the catch-all name", host)
			}
		}
	})
}

// The cache addresses come from files and settings the site's account
// writes: whatever they hold, an address read is well formed and keeps
// no credentials.
func FuzzCacheAddr(f *testing.F) {
	f.Add("redis://user:pw@10.0.0.7:6380/2")
	f.Add("unix:///run/redis.sock?x=1")
	f.Add("[::1]:6379")
	f.Add("10.0.0.5:11211:2")
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := CacheAddr(s, 6379)
		if !ok {
			if a != "" {
				t.Fatalf("CacheAddr(%q) = %q without ok", s, a)
			}
			return
		}
		if !strings.HasPrefix(a, "tcp:") && !strings.HasPrefix(a, "unix:/") {
			t.Fatalf("CacheAddr(%q) = %q", s, a)
		}
		if strings.Contains(a, "@") && strings.HasPrefix(a, "tcp:") {
			t.Fatalf("CacheAddr(%q) = %q keeps user info", s, a)
		}
	})
}

func FuzzSessionCaches(f *testing.F) {
	f.Add("redis", "tcp://127.0.0.1:6379?auth=x,unix:///run/r.sock")
	f.Add("rediscluster", "seed[]=a:1&seed[]=b:2")
	f.Add("memcached", "PERSISTENT=x 127.0.0.1:11211")
	f.Fuzz(func(t *testing.T, handler, path string) {
		cs := SessionCaches(handler, path, "php.ini:1")
		if len(cs) > maxCacheAddrs {
			t.Fatalf("%d addresses kept", len(cs))
		}
		for _, c := range cs {
			if c.Addr == "" || (c.Kind != "redis" && c.Kind != "memcached") {
				t.Fatalf("bad cache %+v", c)
			}
		}
	})
}

// A secret given as auth= or in a URL's user info never survives.
func FuzzRedactSavePath(f *testing.F) {
	f.Add("tcp://127.0.0.1:6379?database=1", "user", "s3cret")
	f.Add("seed[]=a:1&timeout=2", "u", "p")
	f.Fuzz(func(t *testing.T, path, user, secret string) {
		if len(secret) < 4 || strings.ContainsAny(secret, ",&?@/:=") || strings.Contains(path, secret) || strings.Contains(user, secret) ||
			strings.ContainsAny(user, ",&?@/") || strings.Contains("<redacted>", secret) {
			return
		}
		for _, v := range []string{
			path + "?auth=" + secret, path + "&auth=" + secret, "tcp://h:1?auth[]=" + user + "&auth[]=" + secret,
			"redis://" + user + ":" + secret + "@h:1/0", path + "," + "tcp://h:1?password=" + secret,
		} {
			if got := RedactSavePath(v); strings.Contains(got, secret) {
				t.Fatalf("RedactSavePath(%q) = %q keeps the secret", v, got)
			}
		}
	})
}

// appReaders are the readers of the applications' PHP configuration
// files, for FuzzParseAppConfig.
var appReaders = []func(string, []byte) (*App, error){ParseMediaWiki, ParseJoomla, ParseNextcloud, ParseMagento, ParseTYPO3, ParseMoodle, ParsePrestaShop, ParsePhpBB}

// checkFuzzedApp: a read App prints its password as "<redacted>" (or ""),
// keeps no other settings, and names caches as CacheAddr writes them.
func checkFuzzedApp(t *testing.T, a *App) {
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		DB struct {
			Password string `json:"password"`
		} `json:"database"`
	}
	json.Unmarshal(b, &back)
	if p := back.DB.Password; p != "" && p != "<redacted>" {
		t.Fatalf("password printed: %q", p)
	}
	if len(a.Settings) != 0 {
		t.Fatalf("settings kept: %v", a.Settings)
	}
	_ = a.DB.Engine()
	for _, c := range a.Caches {
		if c.Addr != "" && !strings.HasPrefix(c.Addr, "tcp:") && !strings.HasPrefix(c.Addr, "unix:") || strings.Contains(c.Addr, "@") && !strings.HasPrefix(c.Addr, "unix:") {
			t.Fatalf("cache address %q", c.Addr)
		}
	}
}

func FuzzParseAppConfig(f *testing.F) {
	f.Add(uint8(0), `<?php $wgDBname = "w"; $wgMainCacheType = CACHE_MEMCACHED; $wgMemCachedServers = ['a:1', [2]];`)
	f.Add(uint8(1), `<?php class JConfig { public $db = 'x'; public $cache_handler = 'redis'; public $redis_server_host = "$h"; }`)
	f.Add(uint8(2), `<?php $CONFIG = array('dbname' => 'n', 'memcache.local' => '\OC\Memcache\Redis', 'redis' => ['host' => '/s', 'port' => 0], 'memcached_servers' => [['h', 1]]);`)
	f.Add(uint8(3), `<?php return ['db' => ['connection' => ['default' => ['dbname' => 'm', 'host' => 'h:1']]], 'session' => ['save' => 'redis']];`)
	f.Add(uint8(4), `<?php return array('DB' => array('Connections' => array('Default' => array('dbname' => 't', 5 => [[[[`)
	f.Add(uint8(5), `<?php $CFG->dbname = 'm'; $CFG->dboptions = ['dbsocket' => true]; $CFG->session_handler_class = '\core\session\redis';`)
	f.Add(uint8(6), `<?php return ['parameters' => ['database_name' => 'p', 'database_host' => '[::1]:3307']];`)
	f.Add(uint8(7), `<?php $dbms = 'phpbb\\db\\driver\\postgres'; $dbname = 'b'; $acm_type = 'phpbb\\cache\\driver\\memcached';`)
	f.Add(uint8(7), `<?php $dbms = 'x'; $acm_type = 'phpbb\\cache\\driver\\redis'; @define('PHPBB_ACM_REDIS_HOST', 'a b'); define('PHPBB_ACM_REDIS_PORT', `)
	f.Fuzz(func(t *testing.T, which uint8, src string) {
		a, err := appReaders[int(which)%len(appReaders)]("conf.php", []byte(src))
		if err != nil {
			return
		}
		checkFuzzedApp(t, a)
	})
}

func FuzzParseSymfonyEnv(f *testing.F) {
	f.Add("DATABASE_URL=\"mysql://u:p%40@h:1/d?unix_socket=/s\"\nREDIS_URL=redis://:pw@h\n")
	f.Add("DATABASE_URL=sqlite:///%kernel.project_dir%/x.db\n")
	f.Add("DB_DSN=mysql:host=h;port=x;dbname=d\nDB_PASSWORD=p\n")
	f.Add("CRAFT_DB_DATABASE=c\nCRAFT_DB_SERVER=${H}\n")
	f.Add("<?php return ['DATABASE_URL' => 'postgresql://u:p@h/d', 'REDIS_DSN' => \"$x\"];")
	f.Fuzz(func(t *testing.T, src string) {
		for _, kind := range []string{"symfony", "craft"} {
			for _, read := range []func(string, string, []byte) (*App, error){ParseSymfonyEnv, ParseSymfonyEnvPHP} {
				a, err := read(kind, ".env", []byte(src))
				if err != nil {
					continue
				}
				checkFuzzedApp(t, a)
			}
		}
	})
}

func FuzzParseRedisConf(f *testing.F) {
	f.Add("maxmemory 2gb\nmaxmemory-policy allkeys-lru\nrequirepass secret\ninclude \"/etc/redis/x.conf\"\n")
	f.Add("# maxmemory <bytes>\nMAXMEMORY '1kb'\r\n")
	f.Fuzz(func(t *testing.T, src string) {
		for _, d := range ParseRedisConf([]byte(src)) {
			if d.Name != "maxmemory" && d.Name != "maxmemory-policy" && d.Name != "include" {
				t.Fatalf("directive %q kept", d.Name)
			}
			if n, err := ParseRedisBytes(d.Value); err == nil && n < 0 {
				t.Fatalf("ParseRedisBytes(%q) = %d", d.Value, n)
			}
		}
	})
}

func FuzzParseMemcachedConf(f *testing.F) {
	f.Add("-d\nlogfile /var/log/memcached.log\n-m 64\n-p 11211\n-M\n")
	f.Add("-m64 --memory-limit=128 --memory-limit\n")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := ParseMemcachedConf([]byte(src))
		if err == nil && (m.MiB < 0 || m.MiB > memcachedMaxMiB) {
			t.Fatalf("-m %d MiB", m.MiB)
		}
		a, err := ParseMemcachedArgs(strings.Fields(src))
		if err == nil && (a.MiB < 0 || a.MiB > memcachedMaxMiB || a.Arg >= len(strings.Fields(src))) {
			t.Fatalf("ParseMemcachedArgs: %+v", a)
		}
		redisConfArg(strings.Split(src, "\x00"))
	})
}
