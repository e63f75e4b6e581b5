package site

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/loopback"
)

// App is what an application's own configuration file says it uses: its
// database, its caches, and the settings it sets by code rather than by
// a literal (named, never guessed).
type App struct {
	Kind string `json:"kind"` // "wordpress", "laravel", "drupal", "mediawiki", ... (Apps)
	File string `json:"file"` // the file read
	// Line is the line of File that sets the database (its name, or the
	// connection that holds it); 0 when not known.
	Line int      `json:"line,omitempty"`
	DB   Database `json:"database"`
	// TablePrefix is WordPress's $table_prefix.
	TablePrefix string  `json:"table_prefix,omitempty"`
	Caches      []Cache `json:"caches,omitempty"`
	// NotLiteral names the settings whose value is computed (getenv(),
	// a concatenation, a variable): the lab cannot know it without
	// running the code.
	NotLiteral []string `json:"not_literal,omitempty"`
	// Settings holds the other literal settings read (WordPress's
	// defines such as WP_HOME or DISABLE_WP_CRON, Laravel's APP_URL),
	// secrets left out.
	Settings map[string]string `json:"settings,omitempty"`
	// cacheKeySalt says WordPress's WP_CACHE_KEY_SALT is defined (its
	// value is a salt, not kept): the object-cache drop-in is in use.
	cacheKeySalt bool
}

// Database is the application's database connection as its
// configuration names it.
type Database struct {
	Driver   string `json:"driver,omitempty"` // "mysql" (Laravel's DB_CONNECTION, Drupal's driver)
	Name     string `json:"name"`
	User     string `json:"user"`
	Password Secret `json:"password"`
	// Host is the host as written ("localhost", "127.0.0.1:3306",
	// "localhost:/run/mysqld/mysqld.sock"); Port and Socket what it (or
	// a setting of their own) names, 0 and "" when it names none.
	Host   string `json:"host"`
	Port   int    `json:"port,omitempty"`
	Socket string `json:"socket,omitempty"`
}

// Cache is a cache server the application's configuration names.
type Cache struct {
	Kind string `json:"kind"` // "redis", "memcached"
	// Addr is "tcp:HOST:PORT" or "unix:/path", "" when the setting names
	// the kind only (CACHE_STORE=redis with no REDIS_HOST: the default).
	Addr    string `json:"addr,omitempty"`
	Setting string `json:"setting"` // which settings named it
	// Password is the password the configuration gives the server
	// (wp-config's WP_REDIS_PASSWORD, Laravel's REDIS_PASSWORD): a site
	// lab's own Redis asks for it, so the site's code connects as it
	// does in production. Never printed (Secret), never in JSON.
	Password Secret `json:"-"`
	// MaxMemoryBytes is the memory production gives the server, read
	// from its configuration (sizeCaches): Redis's maxmemory (0: no
	// limit), Memcached's -m. Policy is Redis's maxmemory-policy as
	// production sets it ("" when unset: noeviction), or "noeviction"
	// for a Memcached run with -M. SizeFrom says where they were read
	// ("maxmemory at /etc/redis/redis.conf:1119", "-m at pid 812
	// cmdline"); "" when not read, and SizeNote says why.
	MaxMemoryBytes int64  `json:"max_memory_bytes,omitempty"`
	Policy         string `json:"policy,omitempty"`
	SizeFrom       string `json:"size_from,omitempty"`
	SizeNote       string `json:"size_note,omitempty"`
}

// Endpoint is where a database connection goes: a unix socket, a TCP
// address on this machine, or another machine.
type Endpoint struct {
	Network string `json:"network"` // "unix", "tcp" or "remote"
	Address string `json:"address"` // path, or HOST:PORT
}

func (e Endpoint) String() string { return e.Network + ":" + e.Address }

// DefaultMySQLPort is MariaDB's TCP port.
const DefaultMySQLPort = 3306

// Endpoint is where PHP's MySQL drivers connect for d: its socket when
// one is named, the default socket (defaultSocket: php.ini's
// mysqli.default_socket / pdo_mysql.default_socket, else Debian's) for
// "localhost" or no host (mysqli and PDO both use the socket for
// "localhost", whatever the port), TCP for an IP address of this machine,
// and "remote" for any other name or address.
func (d Database) Endpoint(defaultSocket string) Endpoint {
	if d.Socket != "" {
		return Endpoint{"unix", d.Socket}
	}
	host := d.Host
	if net.ParseIP(strings.Trim(host, "[]")) == nil {
		host, _, _ = SplitWPHost(host) // "host:port" as WordPress writes it
	}
	host = strings.Trim(host, "[]")
	port := d.Port
	if port == 0 {
		port = DefaultMySQLPort
	}
	switch {
	case host == "" || strings.EqualFold(host, "localhost"):
		return Endpoint{"unix", defaultSocket}
	case loopback.IP(host):
		return Endpoint{"tcp", net.JoinHostPort(host, strconv.Itoa(port))}
	}
	return Endpoint{"remote", net.JoinHostPort(host, strconv.Itoa(port))}
}

// SplitWPHost reads WordPress's DB_HOST as wpdb::parse_db_host does:
// "host", "host:port", "host:/socket", "host:port:/socket", "[v6]:port"
// and ":/socket" alone.
func SplitWPHost(v string) (host string, port int, socket string) {
	rest := v
	if i := strings.Index(rest, ":/"); i >= 0 {
		socket, rest = rest[i+1:], rest[:i]
	}
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j > 0 {
			host, rest = rest[1:j], rest[j+1:]
			if p, ok := strings.CutPrefix(rest, ":"); ok {
				port, _ = strconv.Atoi(p)
			}
			return host, port, socket
		}
	}
	host = rest
	if h, p, ok := strings.Cut(rest, ":"); ok && !strings.Contains(p, ":") {
		host = h
		port, _ = strconv.Atoi(p)
	}
	return host, port, socket
}

// value is one setting as a reader found it.
type value struct {
	text    string
	literal bool
	line    int
	// word is the bare word (a constant: CACHE_MEMCACHED) an expression
	// is, when it is one.
	word string
}

// settings collects the values a reader found, the first of each name
// (PHP's define and a .env both keep the first).
type settings struct {
	vals  map[string]value
	order []string
}

func (s *settings) put(name string, v value) {
	if s.vals == nil {
		s.vals = map[string]value{}
	}
	if _, dup := s.vals[name]; dup {
		return
	}
	s.vals[name] = v
	s.order = append(s.order, name)
}

// set is put for a PHP assignment: the last one of a name wins.
func (s *settings) set(name string, v value) {
	if _, dup := s.vals[name]; !dup {
		s.order = append(s.order, name)
	}
	if s.vals == nil {
		s.vals = map[string]value{}
	}
	s.vals[name] = v
}

// line is the line a setting was read from, 0 for none.
func (s *settings) line(name string) int { return s.vals[name].line }

// get returns a literal setting; a computed one is named in notLiteral.
func (s *settings) get(name string, notLiteral *[]string) (string, bool) {
	v, ok := s.vals[name]
	if !ok {
		return "", false
	}
	if !v.literal {
		*notLiteral = appendOnce(*notLiteral, name)
		return "", false
	}
	return v.text, true
}

// dbSettings name the settings that hold an app's database connection.
type dbSettings struct{ Driver, Name, User, Password, Host, Port, Socket string }

// readDB reads into db the literal settings k names, in that order, and
// names those that are computed in notLiteral. db.Host keeps the default
// it was given when its setting is not a literal.
func (s *settings) readDB(db *Database, k dbSettings, notLiteral *[]string) {
	db.Driver, _ = s.get(k.Driver, notLiteral)
	db.Name, _ = s.get(k.Name, notLiteral)
	db.User, _ = s.get(k.User, notLiteral)
	if p, ok := s.get(k.Password, notLiteral); ok {
		db.Password = NewSecret(p)
	}
	if h, ok := s.get(k.Host, notLiteral); ok {
		db.Host = h
	}
	if p, ok := s.get(k.Port, notLiteral); ok {
		db.Port = atoiOr0(p)
	}
	db.Socket, _ = s.get(k.Socket, notLiteral)
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// otherSettings copies the literal settings not already used, leaving out
// every name that looks like a secret (keys, salts, passwords, tokens).
func (s *settings) otherSettings(used map[string]bool) map[string]string {
	out := map[string]string{}
	for _, name := range s.order {
		v := s.vals[name]
		if used[name] || !v.literal || secretName(name) {
			continue
		}
		out[name] = v.text
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// secretName says whether a setting's name marks a secret.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"PASS", "KEY", "SALT", "SECRET", "TOKEN", "AUTH", "PWD", "CREDENTIAL", "PRIVATE"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func tcpAddr(host, port string, defPort int) string {
	if port == "" {
		port = strconv.Itoa(defPort)
	}
	if strings.HasPrefix(host, "/") {
		return "unix:" + host
	}
	if strings.HasPrefix(host, "unix://") {
		return "unix:" + strings.TrimPrefix(host, "unix://")
	}
	return "tcp:" + net.JoinHostPort(strings.Trim(host, "[]"), port)
}

func atoiOr0(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 65535 {
		return 0
	}
	return n
}

// errNoApp is returned by the readers for a file that holds no database
// setting at all.
func errNoApp(kind, file string) error {
	return fmt.Errorf("%s: no database setting of %s found", file, kind)
}
