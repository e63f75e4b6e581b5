// Package knob is phptune's configuration model: every setting phptune can
// change is a named Knob with a type, the distro's default and a valid range.
// A Config is a complete assignment of values to knobs. The package does no
// I/O; components (nginx, phpfpm, mariadb) render a Config in their own syntax.
package knob

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Kind is the type of a knob's value.
type Kind int

const (
	// Int is a whole number within [Min, Max].
	Int Kind = iota
	// Enum is one of Values.
	Enum
	// Bool is on or off.
	Bool
	// Size is a byte size written like 128M; Min and Max are bytes.
	Size
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Enum:
		return "enum"
	case Bool:
		return "bool"
	case Size:
		return "size"
	}
	return "?"
}

// Component names the program a knob belongs to.
const (
	PHPFPM  = "php-fpm"
	PHP     = "php"
	Nginx   = "nginx"
	MariaDB = "mariadb"
	// Build is the PHP binary itself: the distro's or a build of phptune's.
	Build = "build"
	// Apache is Debian's apache2 (either MPM; knobs of one MPM only are
	// named apache.event.* and apache.prefork.*).
	Apache = "apache"
	// Unit is NGINX Unit (unitd with its PHP module, php.unit.so): its
	// router and its PHP application processes, configured through its
	// control API.
	Unit = "unit"
	// Server is the choice of web server (knob "server").
	Server = "server"
	// Lighttpd, Caddy and H2O are Debian's lighttpd, caddy and h2o, each
	// in front of php-fpm.
	Lighttpd = "lighttpd"
	Caddy    = "caddy"
	H2O      = "h2o"
)

// ServerKnob chooses the lab's web server and how it runs PHP.
const ServerKnob = "server"

// The servers a lab can run (values of the server knob).
const (
	// NginxFPM is nginx in front of php-fpm (the default).
	NginxFPM = "nginx-fpm"
	// ApacheEventFPM is Apache with the event MPM in front of php-fpm
	// (mod_proxy_fcgi).
	ApacheEventFPM = "apache-event-fpm"
	// ApachePreforkModPHP is Apache with the prefork MPM running PHP in
	// its own children (mod_php, libapache2-mod-php): no php-fpm.
	ApachePreforkModPHP = "apache-prefork-modphp"
	// UnitPHP is NGINX Unit running PHP in its own application processes
	// (the embed SAPI through php.unit.so): no php-fpm.
	UnitPHP = "unit"
	// LighttpdFPM is lighttpd in front of php-fpm (mod_fastcgi).
	LighttpdFPM = "lighttpd-fpm"
	// CaddyFPM is Caddy in front of php-fpm (php_fastcgi).
	CaddyFPM = "caddy-fpm"
	// H2OFPM is h2o in front of php-fpm (fastcgi.connect).
	H2OFPM = "h2o-fpm"
)

// Servers lists the values of the server knob, the default first.
var Servers = []string{NginxFPM, ApacheEventFPM, ApachePreforkModPHP, LighttpdFPM, CaddyFPM, H2OFPM, UnitPHP}

// serverOf maps the components that are a web server of their own to
// their server.
var serverOf = map[string]string{Nginx: NginxFPM, Lighttpd: LighttpdFPM, Caddy: CaddyFPM, H2O: H2OFPM, Unit: UnitPHP}

// BuildKnob selects the PHP binaries a lab runs: "distro" (the installed
// packages) or the id of a build made by `phptune build`.
const BuildKnob = "php.build"

// ZendAllocHugePagesKnob puts USE_ZEND_ALLOC_HUGE_PAGES=1 in the pool's
// environment (a php-fpm pool's env[], not a php.ini setting: the Zend
// allocator reads it when the worker starts).
const ZendAllocHugePagesKnob = "fpm.zend_alloc_huge_pages"

// BuildValidator decides which values of php.build are valid besides
// "distro": the model is pure, so the caller that knows the build cache
// sets it (package phpbuild offers one). It gets the trimmed value and
// returns the canonical form, or an error saying why the value is refused.
// Nil (the default) accepts only "distro".
var BuildValidator func(v string) (string, error)

// Knob describes one setting.
type Knob struct {
	Name      string // phptune's name, e.g. "pm.max_children"
	Component string // PHPFPM, PHP, Nginx or MariaDB
	Kind      Kind
	Default   string   // canonical form of the distro's default
	Min, Max  int64    // for Int and Size
	Values    []string // for Enum
	Help      string   // one line
	// Directive is the name in the component's own syntax when it differs
	// from Name (e.g. nginx "worker_processes").
	Directive string
	// MinPHP and MaxPHP bound the PHP versions ("8.0") that have the
	// setting, for a PHP or php-fpm knob; "" is no bound (see Available).
	MinPHP, MaxPHP string `json:",omitempty"`
}

// ServersOf lists the servers whose configurations use k: nginx's,
// lighttpd's, Caddy's and h2o's knobs belong to their server, php-fpm's to
// the servers that run php-fpm, Apache's to the Apache servers
// (apache.event.* and apache.prefork.* to the one with that MPM); PHP's,
// MariaDB's, the build and the server knob itself to every server.
func ServersOf(k Knob) []string {
	if k.Name == PoolsKnob {
		// Pools need a web server that balances them: nginx's upstream.
		return []string{NginxFPM}
	}
	if s, ok := serverOf[k.Component]; ok {
		return []string{s}
	}
	switch {
	case k.Component == PHPFPM:
		var out []string
		for _, s := range Servers {
			if RunsFPM(s) {
				out = append(out, s)
			}
		}
		return out
	case strings.HasPrefix(k.Name, "apache.event."):
		return []string{ApacheEventFPM}
	case strings.HasPrefix(k.Name, "apache.prefork."):
		return []string{ApachePreforkModPHP}
	case k.Component == Apache:
		return []string{ApacheEventFPM, ApachePreforkModPHP}
	case k.Component == Unit:
		return []string{UnitPHP}
	}
	return Servers
}

// UsedBy reports whether server's configurations use knob k.
func UsedBy(k Knob, server string) bool {
	for _, s := range ServersOf(k) {
		if s == server {
			return true
		}
	}
	return false
}

// RunsFPM reports whether server runs php-fpm: every server but those
// running PHP in their own processes (mod_php, Unit).
func RunsFPM(server string) bool { return server != ApachePreforkModPHP && server != UnitPHP }

// WorkersKnob names the knob that holds server's PHP concurrency, the
// most requests that can run PHP at once: php-fpm's pm.max_children where
// php-fpm runs, Apache's MaxRequestWorkers with mod_php (prefork's
// children are the PHP workers), the most application processes with Unit.
func WorkersKnob(server string) string {
	switch {
	case RunsFPM(server):
		return "pm.max_children"
	case server == UnitPHP:
		return "unit.processes"
	}
	return "apache.max_request_workers"
}

// PHPWorkers is c's PHP concurrency: the value of WorkersKnob(c.Server()).
// A configuration without it (it needs only its own server's knobs) has
// the knob's default.
func (c Config) PHPWorkers() int64 {
	n, _ := strconv.ParseInt(c.value(byName[WorkersKnob(c.Server())]), 10, 64)
	return n
}

// Range describes the valid values in words, for help and error messages.
func (k Knob) Range() string {
	switch k.Kind {
	case Int:
		if autoKnobs[k.Name] {
			return fmt.Sprintf("auto|%d..%d", k.Min, k.Max)
		}
		return fmt.Sprintf("%d..%d", k.Min, k.Max)
	case Size:
		return FormatSize(k.Min) + ".." + FormatSize(k.Max)
	case Bool:
		return "on|off"
	case Enum:
		return strings.Join(k.Values, "|")
	}
	return ""
}

// Normalize checks v against the knob's type and range and returns its
// canonical form ("On", "1", "true" become "on"; "128m" becomes "128M").
func (k Knob) Normalize(v string) (string, error) {
	v = strings.TrimSpace(v)
	if k.Name == BuildKnob {
		return normalizeBuild(k, v)
	}
	switch k.Kind {
	case Int:
		if autoKnobs[k.Name] && v == "auto" {
			return "auto", nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", &ValueError{Knob: k, Value: v, Reason: "not a whole number"}
		}
		if n < k.Min || n > k.Max {
			return "", &ValueError{Knob: k, Value: v, Reason: "out of range"}
		}
		return strconv.FormatInt(n, 10), nil
	case Size:
		n, err := ParseSize(v)
		if err != nil {
			return "", &ValueError{Knob: k, Value: v, Reason: "not a size like 128M"}
		}
		if n < k.Min || n > k.Max {
			return "", &ValueError{Knob: k, Value: v, Reason: "out of range"}
		}
		return FormatSize(n), nil
	case Bool:
		switch strings.ToLower(v) {
		case "on", "1", "true", "yes":
			return "on", nil
		case "off", "0", "false", "no":
			return "off", nil
		}
		return "", &ValueError{Knob: k, Value: v, Reason: "not on or off"}
	case Enum:
		for _, e := range k.Values {
			if strings.EqualFold(e, v) {
				return e, nil
			}
		}
		return "", &ValueError{Knob: k, Value: v, Reason: "not one of the choices"}
	}
	return "", fmt.Errorf("knob %s: unknown kind", k.Name)
}

// autoKnobs are the Int knobs that also take "auto", the program's own
// choice: nginx's worker per core, h2o's thread per core, Go's GOMAXPROCS
// (every CPU the process may run on) for Caddy.
var autoKnobs = map[string]bool{"nginx.worker_processes": true, "h2o.num_threads": true, "caddy.gomaxprocs": true}

// normalizeBuild accepts "distro" and whatever BuildValidator accepts.
func normalizeBuild(k Knob, v string) (string, error) {
	if strings.EqualFold(v, "distro") {
		return "distro", nil
	}
	if BuildValidator == nil {
		return "", &ValueError{Knob: k, Value: v, Reason: "not a known build (no build cache was consulted)"}
	}
	out, err := BuildValidator(v)
	if err != nil {
		return "", &ValueError{Knob: k, Value: v, Reason: err.Error()}
	}
	return out, nil
}

// ValueError is a value a knob does not accept.
type ValueError struct {
	Knob   Knob
	Value  string
	Reason string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("knob %s: value %q is %s; valid: %s (default %s)",
		e.Knob.Name, e.Value, e.Reason, e.Knob.Range(), e.Knob.Default)
}

// ErrUnknownKnob is wrapped by errors about names that are not knobs.
var ErrUnknownKnob = errors.New("unknown knob")

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// registry lists every knob with the defaults that Debian 12's packages ship
// (php8.2-fpm pool www.conf and php.ini, nginx.conf, MariaDB 10.11).
var registry = []Knob{
	// php-fpm pool
	{Name: "pm", Component: PHPFPM, Kind: Enum, Default: "dynamic", Values: []string{"static", "dynamic", "ondemand"},
		Help: "process manager: fixed worker count, spares between bounds, or spawn on demand"},
	{Name: "pm.max_children", Component: PHPFPM, Kind: Int, Default: "5", Min: 1, Max: 4096,
		Help: "most workers alive at once: the pool's concurrency limit"},
	{Name: "pm.start_servers", Component: PHPFPM, Kind: Int, Default: "2", Min: 1, Max: 4096,
		Help: "workers started with the pool (dynamic); must be within the spare bounds"},
	{Name: "pm.min_spare_servers", Component: PHPFPM, Kind: Int, Default: "1", Min: 1, Max: 4096,
		Help: "fewest idle workers kept (dynamic)"},
	{Name: "pm.max_spare_servers", Component: PHPFPM, Kind: Int, Default: "3", Min: 1, Max: 4096,
		Help: "most idle workers kept (dynamic); at most max_children"},
	{Name: "pm.process_idle_timeout", Component: PHPFPM, Kind: Int, Default: "10", Min: 1, Max: 86400,
		Help: "seconds an idle worker lives (ondemand)"},
	{Name: "pm.max_requests", Component: PHPFPM, Kind: Int, Default: "0", Min: 0, Max: 1000000,
		Help: "requests a worker serves before it is replaced; 0 never"},
	{Name: "listen", Component: PHPFPM, Kind: Enum, Default: "unix", Values: []string{"unix", "tcp"},
		Help: "php-fpm listens on a unix socket or on TCP loopback"},
	{Name: "listen.backlog", Component: PHPFPM, Kind: Int, Default: "511", Min: 1, Max: 65535,
		Help: "listen(2) backlog of the pool socket (capped by net.core.somaxconn)"},
	{Name: PoolsKnob, Component: PHPFPM, Kind: Int, Default: "1", Min: 1, Max: 64,
		Help: "pools on sockets of their own behind an nginx upstream (seed 003's several masters), pm.max_children and the spares split between them; at most pm.max_children"},
	{Name: ZendAllocHugePagesKnob, Component: PHPFPM, Kind: Bool, Default: "off", Directive: "env[USE_ZEND_ALLOC_HUGE_PAGES]",
		Help: "USE_ZEND_ALLOC_HUGE_PAGES=1 in the pool's environment: the Zend allocator's 2 MiB chunks on huge pages"},
	// php.ini
	{Name: "opcache.enable", Component: PHP, Kind: Bool, Default: "on",
		Help: "opcode cache"},
	{Name: "opcache.validate_timestamps", Component: PHP, Kind: Bool, Default: "on",
		Help: "stat scripts to notice changes; off saves syscalls"},
	{Name: "opcache.revalidate_freq", Component: PHP, Kind: Int, Default: "2", Min: 0, Max: 86400,
		Help: "seconds between timestamp checks"},
	{Name: "opcache.memory_consumption", Component: PHP, Kind: Int, Default: "128", Min: 8, Max: 4096,
		Help: "shared memory for compiled scripts, MiB"},
	{Name: "opcache.interned_strings_buffer", Component: PHP, Kind: Int, Default: "8", Min: 1, Max: 4095,
		Help: "shared memory for interned strings, MiB"},
	{Name: "opcache.max_accelerated_files", Component: PHP, Kind: Int, Default: "10000", Min: 200, Max: 1000000,
		Help: "most scripts the cache holds"},
	{Name: "opcache.jit", Component: PHP, Kind: Enum, Default: "tracing", Values: []string{"off", "tracing", "function"}, MinPHP: "8.0",
		Help: "JIT mode; has no effect while jit_buffer_size is 0"},
	{Name: "opcache.jit_buffer_size", Component: PHP, Kind: Size, Default: "0", Min: 0, Max: 1 * gib, MinPHP: "8.0",
		Help: "JIT code buffer; 0 disables the JIT (the distro default)"},
	{Name: "opcache.huge_code_pages", Component: PHP, Kind: Bool, Default: "off",
		Help: "copy PHP's code into huge pages at start (transparent huge pages): fewer iTLB misses"},
	{Name: "realpath_cache_size", Component: PHP, Kind: Size, Default: "4M", Min: 16 * kib, Max: 256 * mib,
		Help: "per-worker cache of resolved paths"},
	{Name: "realpath_cache_ttl", Component: PHP, Kind: Int, Default: "120", Min: 1, Max: 86400,
		Help: "seconds a resolved path is trusted"},
	{Name: "memory_limit", Component: PHP, Kind: Size, Default: "128M", Min: 8 * mib, Max: 16 * gib,
		Help: "per-request memory limit"},
	// nginx
	{Name: "nginx.worker_processes", Component: Nginx, Kind: Int, Default: "auto", Min: 1, Max: 256,
		Directive: "worker_processes", Help: "nginx worker processes; auto is one per core"},
	{Name: "nginx.worker_connections", Component: Nginx, Kind: Int, Default: "768", Min: 16, Max: 65535,
		Directive: "worker_connections", Help: "connections per nginx worker (clients plus upstreams)"},
	{Name: FastCGIKeepaliveKnob, Component: Nginx, Kind: Int, Default: "0", Min: 0, Max: 4096,
		Directive: "keepalive", Help: "idle connections to php-fpm each nginx worker keeps for the next request (upstream keepalive, fastcgi_keep_conn on); each holds a php-fpm worker, so nginx workers x this < each pool's max_children; 0 connects per request"},
	{Name: "nginx.listen_backlog", Component: Nginx, Kind: Int, Default: "511", Min: 1, Max: 65535,
		Directive: "backlog", Help: "listen(2) backlog of nginx's HTTP socket (capped by net.core.somaxconn)"},
	{Name: "nginx.keepalive_timeout", Component: Nginx, Kind: Int, Default: "65", Min: 0, Max: 3600,
		Directive: "keepalive_timeout", Help: "seconds an idle client connection is kept; 0 disables keep-alive"},
	{Name: "nginx.access_log", Component: Nginx, Kind: Bool, Default: "on",
		Directive: "access_log", Help: "write an access log line per request"},
	{Name: "nginx.worker_cpu_affinity", Component: Nginx, Kind: Enum, Default: "off", Values: []string{"off", "auto"},
		Directive: "worker_cpu_affinity", Help: "auto pins each nginx worker to a CPU of its own; off lets the scheduler move them (Debian sets none)"},
	{Name: "nginx.multi_accept", Component: Nginx, Kind: Bool, Default: "off",
		Directive: "multi_accept", Help: "a worker accepts every pending connection at once instead of one per event"},
	{Name: "nginx.reuseport", Component: Nginx, Kind: Bool, Default: "off",
		Directive: "reuseport", Help: "a listening socket per worker (SO_REUSEPORT): the kernel spreads connections, each socket with its own backlog"},
	{Name: "nginx.worker_rlimit_nofile", Component: Nginx, Kind: Int, Default: "0", Min: 0, Max: 1048576,
		Directive: "worker_rlimit_nofile", Help: "open files each nginx worker may hold (0: not set, the inherited limit); at least 2 x worker_connections, at most the hard limit"},
	// Apache: Debian 12's apache2.conf and mods-available/mpm_*.conf; the
	// ServerLimits are the MPMs' compiled defaults (Debian sets none).
	{Name: "apache.event.start_servers", Component: Apache, Kind: Int, Default: "2", Min: 1, Max: 20000,
		Directive: "StartServers", Help: "child processes started with the event MPM"},
	{Name: "apache.event.min_spare_threads", Component: Apache, Kind: Int, Default: "25", Min: 1, Max: 100000,
		Directive: "MinSpareThreads", Help: "fewest idle threads the event MPM keeps"},
	{Name: "apache.event.max_spare_threads", Component: Apache, Kind: Int, Default: "75", Min: 1, Max: 100000,
		Directive: "MaxSpareThreads", Help: "most idle threads the event MPM keeps; at least min_spare_threads + threads_per_child"},
	{Name: "apache.event.threads_per_child", Component: Apache, Kind: Int, Default: "25", Min: 1, Max: 1000,
		Directive: "ThreadsPerChild", Help: "threads in each event child (ThreadLimit follows it, at least 64)"},
	{Name: "apache.event.server_limit", Component: Apache, Kind: Int, Default: "16", Min: 1, Max: 20000,
		Directive: "ServerLimit", Help: "most event children; max_request_workers <= server_limit x threads_per_child"},
	{Name: "apache.prefork.start_servers", Component: Apache, Kind: Int, Default: "5", Min: 1, Max: 20000,
		Directive: "StartServers", Help: "children (PHP workers with mod_php) started with the prefork MPM"},
	{Name: "apache.prefork.min_spare_servers", Component: Apache, Kind: Int, Default: "5", Min: 1, Max: 20000,
		Directive: "MinSpareServers", Help: "fewest idle prefork children kept"},
	{Name: "apache.prefork.max_spare_servers", Component: Apache, Kind: Int, Default: "10", Min: 1, Max: 20000,
		Directive: "MaxSpareServers", Help: "most idle prefork children kept; above min_spare_servers"},
	{Name: "apache.prefork.server_limit", Component: Apache, Kind: Int, Default: "256", Min: 1, Max: 20000,
		Directive: "ServerLimit", Help: "most prefork children; at least max_request_workers"},
	{Name: "apache.max_request_workers", Component: Apache, Kind: Int, Default: "150", Min: 1, Max: 20000,
		Directive: "MaxRequestWorkers", Help: "requests served at once: threads (event) or children, i.e. PHP workers (prefork)"},
	{Name: "apache.max_connections_per_child", Component: Apache, Kind: Int, Default: "0", Min: 0, Max: 100000000,
		Directive: "MaxConnectionsPerChild", Help: "connections a child serves before it is replaced; 0 never"},
	{Name: "apache.keepalive", Component: Apache, Kind: Bool, Default: "on",
		Directive: "KeepAlive", Help: "keep client connections open between requests"},
	{Name: "apache.keepalive_timeout", Component: Apache, Kind: Int, Default: "5", Min: 1, Max: 3600,
		Directive: "KeepAliveTimeout", Help: "seconds an idle client connection is kept"},
	{Name: "apache.max_keepalive_requests", Component: Apache, Kind: Int, Default: "100", Min: 0, Max: 100000000,
		Directive: "MaxKeepAliveRequests", Help: "requests per client connection; 0 unlimited"},
	{Name: "apache.access_log", Component: Apache, Kind: Bool, Default: "on",
		Directive: "CustomLog", Help: "write an access log line per request"},
	// NGINX Unit: its defaults when an application names no processes or
	// limits (one process, started at once and kept; no request limit).
	{Name: "unit.pm", Component: Unit, Kind: Enum, Default: "static", Values: []string{"static", "dynamic"},
		Directive: "processes", Help: "static: unit.processes application processes all the time; dynamic: between unit.spare_processes and unit.processes"},
	{Name: "unit.processes", Component: Unit, Kind: Int, Default: "1", Min: 1, Max: 4096,
		Directive: "processes.max", Help: "most PHP application processes, i.e. PHP workers (static: the number kept)"},
	{Name: "unit.spare_processes", Component: Unit, Kind: Int, Default: "0", Min: 0, Max: 4096,
		Directive: "processes.spare", Help: "idle application processes kept (dynamic); at most unit.processes"},
	{Name: "unit.idle_timeout", Component: Unit, Kind: Int, Default: "15", Min: 1, Max: 86400,
		Directive: "processes.idle_timeout", Help: "seconds an idle process above the spares lives (dynamic)"},
	{Name: "unit.max_requests", Component: Unit, Kind: Int, Default: "0", Min: 0, Max: 100000000,
		Directive: "limits.requests", Help: "requests a process serves before it is replaced; 0 never"},
	{Name: "unit.threads", Component: Unit, Kind: Int, Default: "1", Min: 1, Max: 256,
		Directive: "threads", Help: "request threads in each PHP application process; above 1 needs a thread-safe (ZTS) PHP, which Debian's libphp8.2-embed is not"},
	{Name: "unit.listen_backlog", Component: Unit, Kind: Int, Default: "511", Min: 1, Max: 65535,
		Directive: "backlog", Help: "listen(2) backlog of Unit's HTTP listener (Unit's default: 511; capped by net.core.somaxconn)"},
	// lighttpd: Debian 12's lighttpd.conf sets none of these, so they are
	// lighttpd 1.4.69's compiled defaults (max-connections is a third of
	// max-fds, 4096, when lighttpd may raise its descriptor limit).
	{Name: "lighttpd.max_worker", Component: Lighttpd, Kind: Int, Default: "0", Min: 0, Max: 64,
		Directive: "server.max-worker", Help: "worker processes lighttpd forks; 0 serves everything in one process"},
	{Name: "lighttpd.max_connections", Component: Lighttpd, Kind: Int, Default: "1365", Min: 16, Max: 21845,
		Directive: "server.max-connections", Help: "client connections per lighttpd process (server.max-fds is set to 3x, at least 4096)"},
	{Name: "lighttpd.listen_backlog", Component: Lighttpd, Kind: Int, Default: "1024", Min: 1, Max: 65535,
		Directive: "server.listen-backlog", Help: "listen(2) backlog of lighttpd's HTTP socket"},
	{Name: "lighttpd.max_keep_alive_requests", Component: Lighttpd, Kind: Int, Default: "1000", Min: 0, Max: 65535,
		Directive: "server.max-keep-alive-requests", Help: "requests per client connection; 0 disables keep-alive"},
	{Name: "lighttpd.max_keep_alive_idle", Component: Lighttpd, Kind: Int, Default: "5", Min: 1, Max: 3600,
		Directive: "server.max-keep-alive-idle", Help: "seconds an idle client connection is kept"},
	{Name: "lighttpd.access_log", Component: Lighttpd, Kind: Bool, Default: "off",
		Directive: "accesslog.filename", Help: "write an access log line per request (Debian enables no mod_accesslog)"},
	// Caddy: Debian 12's Caddyfile sets none of these, so they are
	// Caddy 2.6.2's defaults.
	{Name: "caddy.gomaxprocs", Component: Caddy, Kind: Int, Default: "auto", Min: 1, Max: 256,
		Directive: "GOMAXPROCS", Help: "OS threads running Caddy's Go code at once (environment); auto is every CPU"},
	{Name: "caddy.lb_try_duration", Component: Caddy, Kind: Int, Default: "0", Min: 0, Max: 60000,
		Directive: "lb_try_duration", Help: "ms php_fastcgi keeps retrying php-fpm when it refuses a connection (a full backlog); 0 answers 502 at once"},
	{Name: "caddy.idle_timeout", Component: Caddy, Kind: Int, Default: "300", Min: 1, Max: 3600,
		Directive: "timeouts idle", Help: "seconds an idle client connection is kept"},
	{Name: "caddy.access_log", Component: Caddy, Kind: Bool, Default: "off",
		Directive: "log", Help: "write an access log line per request (Caddy logs none by default)"},
	// h2o: Debian 12's h2o.conf sets only its access log; the rest are
	// h2o 2.2.5's defaults.
	{Name: "h2o.num_threads", Component: H2O, Kind: Int, Default: "auto", Min: 1, Max: 256,
		Directive: "num-threads", Help: "h2o's worker threads; auto is one per CPU"},
	{Name: "h2o.max_connections", Component: H2O, Kind: Int, Default: "1024", Min: 16, Max: 1000000,
		Directive: "max-connections", Help: "client connections h2o holds at once"},
	{Name: "h2o.http1_request_timeout", Component: H2O, Kind: Int, Default: "10", Min: 1, Max: 3600,
		Directive: "http1-request-timeout", Help: "seconds an idle HTTP/1 client connection is kept"},
	{Name: "h2o.fastcgi_keepalive", Component: H2O, Kind: Int, Default: "0", Min: 0, Max: 600000,
		Directive: "fastcgi.timeout.keepalive", Help: "ms an idle connection to php-fpm is kept for the next request (each holds a php-fpm worker); 0 connects per request"},
	{Name: "h2o.access_log", Component: H2O, Kind: Bool, Default: "on",
		Directive: "access-log", Help: "write an access log line per request"},
	// MariaDB
	{Name: "mariadb.innodb_buffer_pool_size", Component: MariaDB, Kind: Size, Default: "128M", Min: 8 * mib, Max: 64 * gib,
		Directive: "innodb_buffer_pool_size", Help: "InnoDB page cache"},
	{Name: "mariadb.max_connections", Component: MariaDB, Kind: Int, Default: "151", Min: 10, Max: 100000,
		Directive: "max_connections", Help: "most client connections"},
	{Name: "mariadb.innodb_flush_log_at_trx_commit", Component: MariaDB, Kind: Enum, Default: "1", Values: []string{"0", "1", "2"},
		Directive: "innodb_flush_log_at_trx_commit", Help: "1 flushes the redo log at each commit (durable); 0/2 flush about once a second"},
	// the binary
	{Name: BuildKnob, Component: Build, Kind: Enum, Default: "distro", Values: []string{"distro", "BUILD-ID"},
		Help: "PHP binaries: the distro's packages or a build of `phptune build` (its id, see `phptune build list`)"},
	// the web server
	{Name: ServerKnob, Component: Server, Kind: Enum, Default: NginxFPM, Values: Servers,
		Help: "web server and how it runs PHP: nginx, Apache event, lighttpd, Caddy or h2o + php-fpm, Apache prefork + mod_php, or NGINX Unit"},
}

var byName = func() map[string]Knob {
	m := make(map[string]Knob, len(registry))
	for _, k := range registry {
		m[k.Name] = k
	}
	return m
}()

// All returns every knob, in a stable order (by component, then as listed).
func All() []Knob {
	out := append([]Knob(nil), registry...)
	// Knobs added later sort last, so listings made before them keep their order.
	order := map[string]int{PHPFPM: 0, PHP: 1, Nginx: 2, MariaDB: 3, Build: 4, Apache: 5, Server: 6, Lighttpd: 7, Caddy: 8, H2O: 9, Unit: 10}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Component] < order[out[j].Component] })
	return out
}

// Lookup returns the knob called name.
func Lookup(name string) (Knob, error) {
	k, ok := byName[name]
	if !ok {
		return Knob{}, fmt.Errorf("%w %q; list them with: phptune knobs%s", ErrUnknownKnob, name, suggest(name))
	}
	return k, nil
}

func suggest(name string) string {
	var best string
	for n := range byName {
		if strings.HasSuffix(n, "."+name) || strings.HasSuffix(name, "."+n) || strings.Contains(n, name) && len(name) >= 4 {
			if best == "" || n < best {
				best = n
			}
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// Config maps every knob name to its canonical value.
type Config map[string]string

// Defaults returns the distro's configuration.
func Defaults() Config {
	c := make(Config, len(registry))
	for _, k := range registry {
		c[k.Name] = k.Default
	}
	return c
}

// Clone returns a copy of c.
func (c Config) Clone() Config {
	out := make(Config, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Set validates and assigns one knob.
func (c Config) Set(name, value string) error {
	k, err := Lookup(name)
	if err != nil {
		return err
	}
	v, err := k.Normalize(value)
	if err != nil {
		return err
	}
	c[name] = v
	return nil
}

// Apply parses assignments of the form knob=value (as given to --set) onto a
// copy of c. It checks each value but not the cross-knob rules; call Validate.
func (c Config) Apply(assignments []string) (Config, error) {
	out := c.Clone()
	for _, a := range assignments {
		name, value, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("--set %q: expected KNOB=VALUE, e.g. pm.max_children=16", a)
		}
		if err := out.Set(strings.TrimSpace(name), value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Int returns an integer knob's value; "auto" and malformed values give 0.
func (c Config) Int(name string) int64 {
	n, _ := strconv.ParseInt(c[name], 10, 64)
	return n
}

// Bytes returns a size knob's value in bytes.
func (c Config) Bytes(name string) int64 {
	n, _ := ParseSize(c[name])
	return n
}

// Relevant reports whether knob name has any effect in c: the spare
// settings only matter to a dynamic pool, the idle timeout to an ondemand
// one, the JIT mode only with a JIT buffer, the revalidation period only
// while timestamps are validated.
//
// A knob of another server than c's (see ServersOf) has no effect either.
func (c Config) Relevant(name string) bool {
	if k, ok := byName[name]; ok && !UsedBy(k, c.Server()) {
		return false
	}
	switch name {
	case "pm.start_servers", "pm.min_spare_servers", "pm.max_spare_servers":
		return c["pm"] == "dynamic"
	case "pm.process_idle_timeout":
		return c["pm"] == "ondemand"
	case "opcache.jit":
		return c.Bytes("opcache.jit_buffer_size") > 0
	case "opcache.revalidate_freq":
		return c.On("opcache.validate_timestamps")
	}
	return true
}

// Server is c's web server: the server knob, nginx-fpm when c was stored
// before the knob existed.
func (c Config) Server() string {
	if v := c[ServerKnob]; v != "" {
		return v
	}
	return NginxFPM
}

// value is c's value of k, its default when c has none (a configuration
// needs only its own server's knobs, and older ones lack newer knobs).
func (c Config) value(k Knob) string {
	if v, ok := c[k.Name]; ok {
		return v
	}
	return k.Default
}

// On reports whether a bool knob is on.
func (c Config) On(name string) bool { return c[name] == "on" }

// Validate checks every value and the rules between knobs that the programs
// themselves enforce (php-fpm refuses to start otherwise). All problems are
// reported together.
//
// A configuration needs only the knobs of its own server (see ServersOf);
// a knob of another server may be missing or at its default (where it is
// simply irrelevant), and is refused, naming the servers it belongs to,
// when it is set to anything else: the change would silently do nothing.
func (c Config) Validate() error {
	var errs []error
	server := c.Server()
	if _, err := byName[ServerKnob].Normalize(server); err != nil {
		return err
	}
	for _, k := range registry {
		v, ok := c[k.Name]
		if !ok && (k.Name == BuildKnob || k.Name == ServerKnob) {
			continue // configs stored before the knob existed ran the distro's PHP behind nginx
		}
		if !UsedBy(k, server) {
			if ok && v != k.Default {
				errs = append(errs, &ServerError{Knob: k, Value: v, Server: server})
			}
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("knob %s has no value", k.Name))
			continue
		}
		if _, err := k.Normalize(v); err != nil {
			errs = append(errs, err)
		}
	}
	if server == ApachePreforkModPHP && c[BuildKnob] != "" && c[BuildKnob] != "distro" {
		errs = append(errs, fmt.Errorf("php.build=%s: server=%s runs PHP as Debian's Apache module (libphp8.2.so), and phptune's builds run as php-fpm only; use php.build=distro or server=%s", c[BuildKnob], server, ApacheEventFPM))
	}
	if server == UnitPHP && c[BuildKnob] != "" && c[BuildKnob] != "distro" {
		errs = append(errs, fmt.Errorf("php.build=%s: server=%s runs PHP through Debian's embed SAPI (libphp8.2-embed), and phptune's builds run as php-fpm only; use php.build=distro or a php-fpm server", c[BuildKnob], server))
	}
	for name := range c {
		if _, ok := byName[name]; !ok {
			errs = append(errs, fmt.Errorf("%w %q", ErrUnknownKnob, name))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	maxc := c.Int("pm.max_children")
	errs = append(errs, c.validateApache(server)...)
	errs = append(errs, c.validateTopology()...)
	if server == NginxFPM {
		if n, wc := c.Int("nginx.worker_rlimit_nofile"), c.Int("nginx.worker_connections"); n > 0 && n < 2*wc {
			errs = append(errs, fmt.Errorf("nginx.worker_rlimit_nofile=%d is below 2 x nginx.worker_connections = %d: each proxied connection holds a client socket and an upstream one; valid: 0 (not set) or %d..1048576", n, 2*wc, 2*wc))
		}
	}
	if server == UnitPHP && c.Int("unit.threads") > 1 {
		errs = append(errs, fmt.Errorf("unit.threads=%s: Debian's PHP embed library (libphp8.2-embed) is built without thread safety (NTS), and Unit runs several request threads in a PHP process only with a ZTS PHP; valid here: 1; raise unit.processes instead", c["unit.threads"]))
	}
	if server == UnitPHP && c["unit.pm"] == "dynamic" {
		if sp, mx := c.Int("unit.spare_processes"), c.Int("unit.processes"); sp > mx {
			errs = append(errs, fmt.Errorf("unit.spare_processes=%d is greater than unit.processes=%d; Unit requires spare <= max", sp, mx))
		}
	}
	if !UsedBy(byName["pm"], server) {
		return errors.Join(errs...)
	}
	if c["pm"] == "dynamic" {
		minS, maxS, start := c.Int("pm.min_spare_servers"), c.Int("pm.max_spare_servers"), c.Int("pm.start_servers")
		if maxS > maxc {
			errs = append(errs, fmt.Errorf("pm.max_spare_servers=%d is greater than pm.max_children=%d; php-fpm requires max_spare_servers <= max_children", maxS, maxc))
		}
		if minS > maxS {
			errs = append(errs, fmt.Errorf("pm.min_spare_servers=%d is greater than pm.max_spare_servers=%d; php-fpm requires min_spare_servers <= max_spare_servers", minS, maxS))
		}
		if start < minS || start > maxS {
			errs = append(errs, fmt.Errorf("pm.start_servers=%d is outside [pm.min_spare_servers=%d, pm.max_spare_servers=%d]; php-fpm requires it within", start, minS, maxS))
		}
	}
	return errors.Join(errs...)
}

// validateApache checks the MPM rules that Apache would otherwise "fix" at
// start with a warning, running another configuration than the one asked.
func (c Config) validateApache(server string) []error {
	var errs []error
	workers := c.Int("apache.max_request_workers")
	switch server {
	case ApacheEventFPM:
		threads, limit := c.Int("apache.event.threads_per_child"), c.Int("apache.event.server_limit")
		minT, maxT := c.Int("apache.event.min_spare_threads"), c.Int("apache.event.max_spare_threads")
		if workers < threads {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is below apache.event.threads_per_child=%d; Apache raises it to one child's threads", workers, threads))
		} else if workers%threads != 0 {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is not a multiple of apache.event.threads_per_child=%d; Apache lowers it to %d", workers, threads, workers/threads*threads))
		}
		if workers > limit*threads {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is above apache.event.server_limit x threads_per_child = %d x %d; Apache lowers it (raise server_limit to at least %d)", workers, limit, threads, (workers+threads-1)/threads))
		}
		if maxT < minT+threads {
			errs = append(errs, fmt.Errorf("apache.event.max_spare_threads=%d is below min_spare_threads + threads_per_child = %d; Apache raises it", maxT, minT+threads))
		}
		if start := c.Int("apache.event.start_servers"); start > limit {
			errs = append(errs, fmt.Errorf("apache.event.start_servers=%d is above apache.event.server_limit=%d", start, limit))
		}
	case ApachePreforkModPHP:
		limit := c.Int("apache.prefork.server_limit")
		minS, maxS := c.Int("apache.prefork.min_spare_servers"), c.Int("apache.prefork.max_spare_servers")
		if workers > limit {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is above apache.prefork.server_limit=%d; Apache lowers it", workers, limit))
		}
		if maxS <= minS {
			errs = append(errs, fmt.Errorf("apache.prefork.max_spare_servers=%d is not above min_spare_servers=%d; Apache raises it to %d", maxS, minS, minS+1))
		}
		if start := c.Int("apache.prefork.start_servers"); start > limit {
			errs = append(errs, fmt.Errorf("apache.prefork.start_servers=%d is above apache.prefork.server_limit=%d", start, limit))
		}
	}
	return errs
}

// ServerError is a knob set for a server the configuration does not run.
type ServerError struct {
	Knob   Knob
	Value  string
	Server string // the configuration's server
}

func (e *ServerError) Error() string {
	owners := ServersOf(e.Knob)
	names := strings.Join(owners, " or ")
	if n := len(owners); n > 2 {
		names = strings.Join(owners[:n-1], ", ") + " or " + owners[n-1]
	}
	msg := fmt.Sprintf("knob %s=%s belongs to server %s, but this configuration runs server=%s",
		e.Knob.Name, e.Value, names, e.Server)
	switch {
	case e.Knob.Component == PHPFPM && e.Server == ApachePreforkModPHP:
		msg += " (PHP runs inside Apache's children there, with no php-fpm: size them with apache.max_request_workers and apache.prefork.*)"
	case e.Knob.Component == PHPFPM && e.Server == UnitPHP:
		msg += " (PHP runs in Unit's application processes there, with no php-fpm: size them with unit.pm, unit.processes and unit.spare_processes)"
	}
	return msg + fmt.Sprintf("; set server=%s, or leave %s at its default %s", owners[0], e.Knob.Name, e.Knob.Default)
}

// FitDynamic returns c with the dynamic pool's spare and start settings
// brought inside php-fpm's rules for its max_children, keeping them where they
// already fit. The tuner uses it when it changes max_children alone.
func (c Config) FitDynamic() Config {
	out := c.Clone()
	maxc := out.Int("pm.max_children")
	minS, maxS, start := out.Int("pm.min_spare_servers"), out.Int("pm.max_spare_servers"), out.Int("pm.start_servers")
	if maxS > maxc {
		maxS = maxc
	}
	if minS > maxS {
		minS = maxS
	}
	if start < minS {
		start = minS
	}
	if start > maxS {
		start = maxS
	}
	out["pm.min_spare_servers"] = strconv.FormatInt(minS, 10)
	out["pm.max_spare_servers"] = strconv.FormatInt(maxS, 10)
	out["pm.start_servers"] = strconv.FormatInt(start, 10)
	return out
}

// Change is one knob whose value differs between two configs.
type Change struct {
	Knob     string `json:"knob"`
	From, To string
}

// Diff lists the knobs whose values differ from a to b, in registry order.
func Diff(a, b Config) []Change {
	var out []Change
	for _, k := range All() {
		if av, bv := a.value(k), b.value(k); av != bv {
			out = append(out, Change{Knob: k.Name, From: av, To: bv})
		}
	}
	return out
}

// Overrides returns the assignments (knob=value) that turn Defaults into c,
// in registry order: the form --set and knob files take.
func (c Config) Overrides() []string {
	var out []string
	for _, ch := range Diff(Defaults(), c) {
		out = append(out, ch.Knob+"="+ch.To)
	}
	return out
}

// ParseSize reads sizes such as 512, 64K, 128M, 1G (powers of 1024, like
// php.ini and my.cnf).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty size")
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = kib
	case 'm', 'M':
		mult = mib
	case 'g', 'G':
		mult = gib
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number with an optional K, M or G", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// FormatSize writes n in the largest unit that divides it exactly.
func FormatSize(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%gib == 0:
		return strconv.FormatInt(n/gib, 10) + "G"
	case n%mib == 0:
		return strconv.FormatInt(n/mib, 10) + "M"
	case n%kib == 0:
		return strconv.FormatInt(n/kib, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

// ParseFile reads a knob file: one KNOB=VALUE per line; blank lines and lines
// starting with # are ignored. It returns the assignments for Config.Apply,
// or an error naming the first bad line.
func ParseFile(text string) ([]string, error) {
	lines, err := ParseFileLines(text)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, l.Assignment)
	}
	return out, nil
}

// Line is one assignment of a knob file and where it is.
type Line struct {
	N          int    // line number, from 1
	Assignment string // KNOB=VALUE, trimmed
}

// LineError is a bad line of a knob file: not KNOB=VALUE, an unknown knob
// or a value the knob does not take. Err is the reason (a *ValueError, or
// one wrapping ErrUnknownKnob).
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// ParseFileLines is ParseFile keeping each assignment's line number; a line
// that is not KNOB=VALUE is a *LineError.
func ParseFileLines(text string) ([]Line, error) {
	var out []Line
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, &LineError{Line: i + 1, Err: fmt.Errorf("%q is not KNOB=VALUE", line)}
		}
		out = append(out, Line{N: i + 1, Assignment: line})
	}
	return out, nil
}

// ApplyFile applies a knob file's assignments onto a copy of c, checking
// each value as Apply does; the first bad line is a *LineError naming it.
// Like Apply, it does not check the cross-knob rules: call Validate.
func (c Config) ApplyFile(text string) (Config, error) {
	lines, err := ParseFileLines(text)
	if err != nil {
		return nil, err
	}
	out := c.Clone()
	for _, l := range lines {
		name, value, _ := strings.Cut(l.Assignment, "=")
		if err := out.Set(strings.TrimSpace(name), value); err != nil {
			return nil, &LineError{Line: l.N, Err: err}
		}
	}
	return out, nil
}

// FormatFile writes c's differences from the distro defaults as a knob file.
func FormatFile(c Config, comment string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(comment), "\n") {
		if l != "" {
			b.WriteString("# " + l + "\n")
		}
	}
	for _, a := range c.Overrides() {
		b.WriteString(a + "\n")
	}
	return b.String()
}
