package site

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseWPConfig(t *testing.T) {
	tests := []struct {
		name, src  string
		db         Database
		pass       string
		prefix     string
		notLiteral []string
		caches     []Cache
		settings   map[string]string
	}{
		{name: "sample", src: `<?php
// ** Database settings ** //
define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'wp' );
define( 'DB_PASSWORD', 's3cr\'et' );
define( 'DB_HOST', 'localhost' );
define( 'AUTH_KEY', 'xyz' );
define( 'WP_HOME', "http://site.test" );
$table_prefix = 'wp_';
require_once ABSPATH . 'wp-settings.php';
`, db: Database{Driver: "mysql", Name: "wordpress", User: "wp", Host: "localhost"}, pass: "s3cr'et", prefix: "wp_",
			settings: map[string]string{"WP_HOME": "http://site.test"}},
		{name: "host and port, double quotes with escapes", src: `<?php define("DB_NAME","shop");define("DB_USER","u\x41\101");define("DB_PASSWORD","p\$x\"y");define("DB_HOST","127.0.0.1:3307");`,
			db: Database{Driver: "mysql", Name: "shop", User: "uAA", Host: "127.0.0.1:3307", Port: 3307}, pass: `p$x"y`},
		{name: "host and socket", src: `<?php define('DB_NAME','a'); define('DB_HOST','localhost:/var/run/mysqld/other.sock');`,
			db: Database{Driver: "mysql", Name: "a", Host: "localhost:/var/run/mysqld/other.sock", Socket: "/var/run/mysqld/other.sock"}},
		{name: "computed values are named, not guessed", src: `<?php
define('DB_NAME', getenv('WP_DB'));
define('DB_USER', 'wp' . '_ro');
define('DB_PASSWORD', "$secret");
define('DB_HOST', DB_SERVER);
$table_prefix = $prefix;`, db: Database{Driver: "mysql"}, notLiteral: []string{"DB_NAME", "DB_USER", "DB_PASSWORD", "DB_HOST", "$table_prefix"}},
		{name: "comments and the first define win", src: `<?php
/* define('DB_NAME', 'commented'); */
# define('DB_NAME', 'hashed');
// define('DB_NAME', 'slashed');
define('DB_NAME', 'real');
define('DB_NAME', 'second');
define('DB_HOST', '[::1]:3306');`, db: Database{Driver: "mysql", Name: "real", Host: "[::1]:3306", Port: 3306}},
		{name: "redis and memcached", src: `<?php define('DB_NAME','x'); define('WP_CACHE', true); define('WP_REDIS_HOST','127.0.0.1'); define('WP_REDIS_PORT', 6380); define('WP_CACHE_HOST','10.0.0.5');`,
			db:       Database{Driver: "mysql", Name: "x", Host: "localhost"},
			caches:   []Cache{{Kind: "redis", Addr: "tcp:127.0.0.1:6380", Setting: "WP_REDIS_HOST"}, {Kind: "memcached", Addr: "tcp:10.0.0.5:11211", Setting: "WP_CACHE_HOST"}},
			settings: map[string]string{"WP_CACHE": "true"}},
		{name: "redis password", src: `<?php define('DB_NAME','x'); define('WP_REDIS_PATH','/run/redis/redis.sock'); define('WP_REDIS_PASSWORD','r3d!s'); define('WP_CACHE_HOST','127.0.0.1');`,
			db: Database{Driver: "mysql", Name: "x", Host: "localhost"}, caches: []Cache{{Kind: "redis", Addr: "unix:/run/redis/redis.sock", Setting: "WP_REDIS_PATH", Password: NewSecret("r3d!s")},
				{Kind: "memcached", Addr: "tcp:127.0.0.1:11211", Setting: "WP_CACHE_HOST"}}},
		{name: "a computed redis password is named, not guessed", src: `<?php define('DB_NAME','x'); define('WP_REDIS_HOST','127.0.0.1'); define('WP_REDIS_PASSWORD', ['default', getenv('P')]);`,
			db: Database{Driver: "mysql", Name: "x", Host: "localhost"}, notLiteral: []string{"WP_REDIS_PASSWORD"}, caches: []Cache{{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "WP_REDIS_HOST"}}},
		{name: "redis socket", src: `<?php define('DB_NAME','x'); define('WP_REDIS_PATH','/run/redis/redis.sock');`,
			db: Database{Driver: "mysql", Name: "x", Host: "localhost"}, caches: []Cache{{Kind: "redis", Addr: "unix:/run/redis/redis.sock", Setting: "WP_REDIS_PATH"}}},
		{name: "redis servers (replication) and the memcached drop-in's servers", src: `<?php define('DB_NAME','x');
define('WP_REDIS_SERVERS', [ 'tcp://127.0.0.1:6379?database=5&alias=master', "redis://user:pw@10.0.0.7:6380/2", 'unix:///var/run/redis/redis.sock?role=slave' ]);
define('WP_CACHE_KEY_SALT', 'site_');
$memcached_servers = array( 'default' => array( '127.0.0.1:11211', '/run/memcached/memcached.sock' ) );`,
			db: Database{Driver: "mysql", Name: "x", Host: "localhost"},
			caches: []Cache{{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "WP_REDIS_SERVERS"}, {Kind: "redis", Addr: "tcp:10.0.0.7:6380", Setting: "WP_REDIS_SERVERS"},
				{Kind: "redis", Addr: "unix:/var/run/redis/redis.sock", Setting: "WP_REDIS_SERVERS"},
				{Kind: "memcached", Addr: "tcp:127.0.0.1:11211", Setting: "$memcached_servers"}, {Kind: "memcached", Addr: "unix:/run/memcached/memcached.sock", Setting: "$memcached_servers"}},
		},
		{name: "redis servers computed", src: `<?php define('DB_NAME','x'); define('WP_REDIS_SERVERS', [getenv('REDIS_URL')]);`,
			db: Database{Driver: "mysql", Name: "x", Host: "localhost"}, notLiteral: []string{"WP_REDIS_SERVERS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseWPConfig("wp-config.php", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			pass := a.DB.Password.Reveal()
			a.DB.Password = Secret{}
			if !reflect.DeepEqual(a.DB, tt.db) {
				t.Errorf("db = %+v, want %+v", a.DB, tt.db)
			}
			if pass != tt.pass || a.TablePrefix != tt.prefix {
				t.Errorf("password %q prefix %q, want %q %q", pass, a.TablePrefix, tt.pass, tt.prefix)
			}
			if !reflect.DeepEqual(a.NotLiteral, tt.notLiteral) || !reflect.DeepEqual(a.Caches, tt.caches) || !reflect.DeepEqual(a.Settings, tt.settings) {
				t.Errorf("not literal %v caches %+v settings %v, want %v %+v %v", a.NotLiteral, a.Caches, a.Settings, tt.notLiteral, tt.caches, tt.settings)
			}
		})
	}
	if _, err := ParseWPConfig("x.php", []byte("<?php echo 1;")); err == nil {
		t.Error("a file without DB_NAME was read as WordPress's")
	}
}

func TestParseDotEnv(t *testing.T) {
	tests := []struct {
		name, src  string
		db         Database
		pass       string
		notLiteral []string
		caches     []Cache
	}{
		{name: "laravel default", src: "APP_NAME=Laravel\nAPP_KEY=base64:abc\nDB_CONNECTION=mysql\nDB_HOST=127.0.0.1\nDB_PORT=3306\nDB_DATABASE=laravel\nDB_USERNAME=root\nDB_PASSWORD=\n",
			db: Database{Driver: "mysql", Name: "laravel", User: "root", Host: "127.0.0.1", Port: 3306}},
		{name: "quotes, export, comments, socket", src: "# comment\nexport DB_CONNECTION=mariadb\nDB_DATABASE=\"shop db\"\nDB_USERNAME='shop'\nDB_PASSWORD=\"p\\\"w #x\" # trailing\nDB_SOCKET=/run/mysqld/mysqld.sock\nDB_HOST=localhost # local\n",
			db: Database{Driver: "mariadb", Name: "shop db", User: "shop", Host: "localhost", Socket: "/run/mysqld/mysqld.sock"}, pass: `p"w #x`},
		{name: "interpolation is not literal", src: "DB_CONNECTION=mysql\nDB_DATABASE=${APP_NAME}_db\nDB_PASSWORD=\"${SECRET}\"\n",
			db: Database{Driver: "mysql", Host: "127.0.0.1"}, notLiteral: []string{"DB_DATABASE", "DB_PASSWORD"}},
		{name: "redis and memcached", src: "DB_CONNECTION=mysql\nCACHE_STORE=redis\nSESSION_DRIVER=memcached\nREDIS_HOST=127.0.0.1\nREDIS_PORT=6390\nMEMCACHED_HOST=127.0.0.1\n",
			db:     Database{Driver: "mysql", Host: "127.0.0.1"},
			caches: []Cache{{Kind: "redis", Addr: "tcp:127.0.0.1:6390", Setting: "REDIS_HOST, CACHE_STORE"}, {Kind: "memcached", Addr: "tcp:127.0.0.1:11211", Setting: "MEMCACHED_HOST, SESSION_DRIVER"}}},
		{name: "redis password", src: "DB_CONNECTION=mysql\nCACHE_STORE=redis\nREDIS_HOST=127.0.0.1\nREDIS_PASSWORD=s3cret\nMEMCACHED_HOST=127.0.0.1\n",
			db: Database{Driver: "mysql", Host: "127.0.0.1"},
			caches: []Cache{{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "REDIS_HOST, CACHE_STORE", Password: NewSecret("s3cret")},
				{Kind: "memcached", Addr: "tcp:127.0.0.1:11211", Setting: "MEMCACHED_HOST"}}},
		{name: "redis by driver only", src: "DB_CONNECTION=mysql\nCACHE_DRIVER=redis\n",
			db: Database{Driver: "mysql", Host: "127.0.0.1"}, caches: []Cache{{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "CACHE_DRIVER (REDIS_HOST unset: Laravel's default)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseDotEnv(".env", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			pass := a.DB.Password.Reveal()
			a.DB.Password = Secret{}
			if !reflect.DeepEqual(a.DB, tt.db) || pass != tt.pass {
				t.Errorf("db = %+v %q, want %+v %q", a.DB, pass, tt.db, tt.pass)
			}
			if !reflect.DeepEqual(a.NotLiteral, tt.notLiteral) || !reflect.DeepEqual(a.Caches, tt.caches) {
				t.Errorf("not literal %v caches %+v, want %v %+v", a.NotLiteral, a.Caches, tt.notLiteral, tt.caches)
			}
			if _, leaked := a.Settings["APP_KEY"]; leaked {
				t.Error("APP_KEY was kept as a setting")
			}
		})
	}
}

func TestParseDrupalSettings(t *testing.T) {
	tests := []struct {
		name, src  string
		db         Database
		pass       string
		notLiteral []string
		caches     []Cache
	}{
		{name: "drupal 9 short array", src: `<?php
$settings['hash_salt'] = 'x';
$databases['default']['default'] = [
  'database' => 'drupal',
  'username' => 'drupal',
  'password' => 'pw',
  'prefix' => '',
  'host' => 'localhost',
  'port' => '3306',
  'namespace' => 'Drupal\\mysql\\Driver\\Database\\mysql',
  'driver' => 'mysql',
  'init_commands' => ['isolation_level' => 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'],
];
$settings['redis.connection']['host'] = '127.0.0.1';
`, db: Database{Driver: "mysql", Name: "drupal", User: "drupal", Host: "localhost", Port: 3306}, pass: "pw",
			caches: []Cache{{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: "$settings['redis.connection']"}}},
		{name: "array() with a socket and getenv", src: `<?php $databases['default']['default'] = array(
  'database' => getenv('DB'), 'username' => "u", 'host' => 'localhost', 'unix_socket' => '/tmp/m.sock', 'driver' => 'mysql',
);`, db: Database{Driver: "mysql", User: "u", Host: "localhost", Socket: "/tmp/m.sock"}, notLiteral: []string{"database"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseDrupalSettings("settings.php", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			pass := a.DB.Password.Reveal()
			a.DB.Password = Secret{}
			if !reflect.DeepEqual(a.DB, tt.db) || pass != tt.pass {
				t.Errorf("db = %+v %q, want %+v %q", a.DB, pass, tt.db, tt.pass)
			}
			if !reflect.DeepEqual(a.NotLiteral, tt.notLiteral) || !reflect.DeepEqual(a.Caches, tt.caches) {
				t.Errorf("not literal %v caches %+v, want %v %+v", a.NotLiteral, a.Caches, tt.notLiteral, tt.caches)
			}
		})
	}
	if _, err := ParseDrupalSettings("s.php", []byte(`<?php $databases = [];`)); err == nil {
		t.Error("a settings.php without the default connection was read")
	}
}

func TestEndpoint(t *testing.T) {
	def := "/run/mysqld/mysqld.sock"
	tests := []struct {
		db   Database
		want Endpoint
	}{
		{Database{Host: "localhost"}, Endpoint{"unix", def}},
		{Database{Host: "LOCALHOST", Port: 3307}, Endpoint{"unix", def}}, // mysqli and PDO ignore the port for localhost
		{Database{Host: ""}, Endpoint{"unix", def}},
		{Database{Host: "localhost:/x.sock", Socket: "/x.sock"}, Endpoint{"unix", "/x.sock"}},
		{Database{Host: "127.0.0.1"}, Endpoint{"tcp", "127.0.0.1:3306"}},
		{Database{Host: "127.0.0.1:3307", Port: 3307}, Endpoint{"tcp", "127.0.0.1:3307"}},
		{Database{Host: "[::1]:3306", Port: 3306}, Endpoint{"tcp", "[::1]:3306"}},
		{Database{Host: "db.internal"}, Endpoint{"remote", "db.internal:3306"}},
		{Database{Host: "10.0.0.7", Port: 3310}, Endpoint{"remote", "10.0.0.7:3310"}},
	}
	for _, tt := range tests {
		if got := tt.db.Endpoint(def); got != tt.want {
			t.Errorf("%+v: %v, want %v", tt.db, got, tt.want)
		}
	}
}

func TestSplitWPHost(t *testing.T) {
	tests := []struct {
		in     string
		host   string
		port   int
		socket string
	}{
		{"localhost", "localhost", 0, ""},
		{"localhost:3307", "localhost", 3307, ""},
		{"localhost:/run/m.sock", "localhost", 0, "/run/m.sock"},
		{"127.0.0.1:3307:/run/m.sock", "127.0.0.1", 3307, "/run/m.sock"},
		{"[::1]:3308", "::1", 3308, ""},
		{":/run/m.sock", "", 0, "/run/m.sock"},
	}
	for _, tt := range tests {
		h, p, s := SplitWPHost(tt.in)
		if h != tt.host || p != tt.port || s != tt.socket {
			t.Errorf("%q: %q %d %q, want %q %d %q", tt.in, h, p, s, tt.host, tt.port, tt.socket)
		}
	}
}

// TestSecretNeverPrinted: a password read from an application's
// configuration is printed as <redacted> by every fmt verb and by JSON.
func TestSecretNeverPrinted(t *testing.T) {
	const pw = "hunter2-very-secret"
	a, err := ParseWPConfig("wp-config.php", []byte(`<?php define('DB_NAME','x'); define('DB_PASSWORD','`+pw+`');`))
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(a)
	s := &Site{App: a}
	js, _ := json.Marshal(s)
	for _, out := range []string{fmt.Sprint(a), fmt.Sprintf("%v %+v %#v %s", a.DB, a.DB, a.DB, a.DB.Password), fmt.Sprintf("%+v", *a), string(j), string(js)} {
		if strings.Contains(out, pw) {
			t.Errorf("the password was printed: %s", out)
		}
	}
	var back struct {
		Database struct{ Password string } `json:"database"`
	}
	if json.Unmarshal(j, &back); back.Database.Password != "<redacted>" {
		t.Errorf("JSON does not say the password is redacted: %s", j)
	}
	if a.DB.Password.Reveal() != pw {
		t.Error("the password is not kept for the lab")
	}
}
