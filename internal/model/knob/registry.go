package knob

import (
	"fmt"
	"sort"
	"strings"
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
		Help: "pools on sockets of their own behind an nginx upstream (one master; each pool has its own accept queue and workers), pm.max_children and the spares split between them; at most pm.max_children"},
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

// byName finds a knob of the registry by its name.
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

// suggest proposes a knob whose name is close to name, as a parenthesis to
// append to an error, or "".
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
