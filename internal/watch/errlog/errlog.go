// Package errlog reads the servers' own error logs — nginx's error.log,
// php-fpm's log, Apache's error log — and sorts their lines into classes
// with a cause in plain words and a fix naming phptune's knob, so that an
// error count from the load generator comes with its reason: "312 of 318
// 502s were nginx's connect() to the fpm socket failing with EAGAIN".
//
// It does no I/O of its own: a Scanner takes lines (or a reader the caller
// opened), and Explain relates the counts to the generator's. The lines
// are the lab account's to write, so they are hostile input: every parser
// is bounded, keeps no more than a short printable example, and never
// trusts a field to be well formed.
package errlog

import (
	"fmt"
	"strconv"

	"github.com/phptune/phptune/internal/base/termsafe"
)

// Source is the log a line came from.
type Source string

// The logs phptune classifies.
const (
	Nginx  Source = "nginx"
	FPM    Source = "php-fpm"
	Apache Source = "apache"
)

// Sources lists them in the order results show them.
var Sources = []Source{Nginx, Apache, FPM}

// Settings are the lab's knob values the causes and fixes quote
// ("listen.backlog" -> "128"), and what the kernel caps backlogs at.
type Settings struct {
	Knobs map[string]string
	// Somaxconn is net.core.somaxconn (0: not read); the kernel cuts every
	// listen backlog to it.
	Somaxconn int
}

func (s Settings) knob(name, def string) string {
	if v := s.Knobs[name]; v != "" {
		return v
	}
	return def
}

// Class is one kind of error line.
type Class struct {
	// Name is stable: results and scripts key on it.
	Name string
	// Source is the log it is found in; "" for PHP's own errors, which
	// the web server logs (nginx through FastCGI's stderr, Apache's
	// proxy_fcgi or mod_php).
	Source Source
	// Status is the HTTP status the client got for each request a line
	// stands for (502, 503, 504, 500); 0 when a line is not one failed
	// request (a limit reached, a worker's death, a warning).
	Status int
	// ClientErrors are the generator's error classes (not statuses) the
	// lines go with: nginx closing connections it has no room for shows
	// as reset and closed_early at the client.
	ClientErrors []string
	// What says in a few words what the line reports, to follow a count:
	// "nginx's connect() to the fpm socket failed with EAGAIN".
	What string
	// Cause and Fix are sentences built from the lab's settings.
	Cause func(Settings) string
	Fix   func(Settings) string
}

func text(s string) func(Settings) string { return func(Settings) string { return s } }

// backlog says what a listen backlog really was: the kernel cuts it to
// somaxconn.
func backlog(s Settings, knob, def string) string {
	v := s.knob(knob, def)
	n, err := strconv.Atoi(v)
	if s.Somaxconn > 0 && err == nil && n > s.Somaxconn {
		return fmt.Sprintf("%s=%s, cut by the kernel to net.core.somaxconn=%d", knob, v, s.Somaxconn)
	}
	return knob + "=" + v
}

// classes are every class, in the order results list them.
var classes = []Class{
	{
		Name: "nginx_fpm_backlog_full", Source: Nginx, Status: 502,
		What: "nginx's connect() to the fpm socket failing with EAGAIN",
		Cause: func(s Settings) string {
			return fmt.Sprintf("the fpm socket's backlog (%s) was full: every worker (pm.max_children=%s) was busy and the queue of waiting connections had no room left, so nginx answered 502 at once",
				backlog(s, "listen.backlog", "511"), s.knob("pm.max_children", "5"))
		},
		Fix: text("raise listen.backlog and net.core.somaxconn (the kernel caps the backlog at it), or add workers (pm.max_children) if the CPU and memory allow"),
	},
	{
		Name: "nginx_fpm_refused", Source: Nginx, Status: 502,
		What:  "nginx's connect() to php-fpm refused",
		Cause: text("nothing accepted on php-fpm's address (connection refused): php-fpm was not running, was restarting, or (over TCP) its port was not listening"),
		Fix:   text("check php-fpm's log for why it stopped (phptune lab logs NAME php-fpm); a socket left by a dead master refuses every connection"),
	},
	{
		Name: "nginx_fpm_socket_missing", Source: Nginx, Status: 502,
		What:  "nginx's connect() finding no fpm socket",
		Cause: text("php-fpm's socket file did not exist: php-fpm was not running or listens elsewhere"),
		Fix:   text("start php-fpm, or point nginx's fastcgi_pass at the socket php-fpm's listen names"),
	},
	{
		Name: "nginx_fpm_connect_failed", Source: Nginx, Status: 502,
		What:  "nginx's connect() to php-fpm failing",
		Cause: text("nginx could not connect to php-fpm for another reason (the errno is in the example line)"),
		Fix:   text("read the example line's errno; phptune lab logs NAME shows the rest"),
	},
	{
		Name: "nginx_upstream_connect_timeout", Source: Nginx, Status: 504,
		What:  "nginx timing out connecting to php-fpm",
		Cause: text("php-fpm did not accept within fastcgi_connect_timeout: over TCP a full backlog drops the handshake and the connection waits for retries"),
		Fix: func(s Settings) string {
			return fmt.Sprintf("raise listen.backlog (%s) and net.core.somaxconn, or use a unix socket (listen=unix), which fails at once instead of waiting", backlog(s, "listen.backlog", "511"))
		},
	},
	{
		Name: "nginx_upstream_read_timeout", Source: Nginx, Status: 504,
		What:  "nginx timing out waiting for php-fpm's answer",
		Cause: text("php-fpm took longer than nginx's fastcgi_read_timeout (60 s by default) to start answering: the request waited for a worker or ran that long"),
		Fix: func(s Settings) string {
			return fmt.Sprintf("find the slow requests (the pool's slowlog, the observer's fpm workers); add workers (pm.max_children=%s) when they waited in the queue; nginx's fastcgi_read_timeout is not a phptune knob", s.knob("pm.max_children", "5"))
		},
	},
	{
		Name: "nginx_fpm_worker_gone", Source: Nginx, Status: 502,
		What:  "nginx losing its php-fpm worker mid-request",
		Cause: text("the php-fpm worker serving the request went away before answering (connection reset or closed): it was killed, crashed, or ended by request_terminate_timeout; php-fpm's log says which"),
		Fix:   text("php-fpm's own log says why when it could (a worker exited on a signal, execution timed out); nothing there means php-fpm as a whole was killed; a worker killed with SIGKILL under a memory cap is the OOM killer: fewer workers or a larger --memory-max"),
	},
	{
		Name: "nginx_no_live_upstreams", Source: Nginx, Status: 502,
		What:  "nginx finding no live upstream server",
		Cause: text("every server of nginx's upstream block was marked failed (max_fails within fail_timeout), so nginx did not even try one"),
		Fix:   text("fix what failed first (the connect() classes); raise max_fails or lower fail_timeout so one busy moment does not take a pool out"),
	},
	{
		Name: "nginx_worker_connections", Source: Nginx, ClientErrors: []string{"reset", "closed_early", "connect_timeout"},
		What: "nginx running out of worker_connections",
		Cause: func(s Settings) string {
			return fmt.Sprintf("an nginx worker had all its connections in use (nginx.worker_connections=%s, each proxied request takes two: client and php-fpm) and closed new ones; nginx logs this once per burst, not per connection",
				s.knob("nginx.worker_connections", "768"))
		},
		Fix: text("raise nginx.worker_connections (at least twice the client connections per worker) and the open files limit with it"),
	},
	{
		Name: "nginx_open_files", Source: Nginx, Status: 500,
		What:  "nginx out of file descriptors",
		Cause: text("an nginx worker hit its open files limit (errno 24) opening a socket to php-fpm or a file, and answered 500"),
		Fix:   text("raise the open files limit of nginx's workers (the knob nginx.worker_rlimit_nofile, within the process's hard RLIMIT_NOFILE) above twice nginx.worker_connections"),
	},
	{
		Name: "nginx_open_files_accept", Source: Nginx, ClientErrors: []string{"connect_timeout", "read_timeout"},
		What:  "nginx out of file descriptors for new client connections",
		Cause: text("accept() failed with errno 24: an nginx worker was at its open files limit, so clients waited in the listen queue unanswered"),
		Fix:   text("raise the open files limit of nginx's workers (the knob nginx.worker_rlimit_nofile, within the process's hard RLIMIT_NOFILE)"),
	},
	{
		Name: "nginx_other", Source: Nginx,
		What:  "other nginx errors",
		Cause: text("nginx logged errors phptune does not classify (see the example)"),
		Fix:   text("read them with phptune lab logs NAME nginx"),
	},
	{
		Name: "apache_max_request_workers", Source: Apache,
		What: "Apache reaching MaxRequestWorkers",
		Cause: func(s Settings) string {
			return fmt.Sprintf("every request slot was busy (apache.max_request_workers=%s): new connections waited in the listen queue; Apache logs this once per spell at the limit, not per request",
				s.knob("apache.max_request_workers", "150"))
		},
		Fix: text("raise apache.max_request_workers (with server_limit and, for event, threads_per_child) if the CPU and memory allow; with prefork + mod_php each slot is a PHP worker"),
	},
	{
		Name: "apache_fpm_backlog_full", Source: Apache, Status: 503,
		What: "Apache's connect() to the fpm socket failing with EAGAIN",
		Cause: func(s Settings) string {
			return fmt.Sprintf("the fpm socket's backlog (%s) was full", backlog(s, "listen.backlog", "511"))
		},
		Fix: text("raise listen.backlog and net.core.somaxconn, or add workers (pm.max_children)"),
	},
	{
		Name: "apache_fpm_refused", Source: Apache, Status: 503,
		What:  "Apache's connect() to php-fpm refused",
		Cause: text("nothing accepted on php-fpm's address (connection refused): php-fpm was not running or was restarting"),
		Fix:   text("check php-fpm's log for why it stopped (phptune lab logs NAME php-fpm)"),
	},
	{
		Name: "apache_fpm_connect_failed", Source: Apache, Status: 503,
		What:  "Apache failing to connect to php-fpm",
		Cause: text("mod_proxy_fcgi could not connect to php-fpm (the errno, when Apache logged one, is in the example)"),
		Fix:   text("read the example line; phptune lab logs NAME shows the rest"),
	},
	{
		Name: "apache_fpm_worker_gone", Source: Apache, Status: 503,
		What:  "Apache losing its php-fpm worker mid-request",
		Cause: text("mod_proxy_fcgi read no FastCGI header: the php-fpm worker went away before answering (killed, crashed, or ended by request_terminate_timeout)"),
		Fix:   text("php-fpm's own log says why when it could (a worker exited on a signal, execution timed out); nothing there means php-fpm as a whole was killed"),
	},
	{
		Name: "apache_other", Source: Apache,
		What:  "other Apache errors",
		Cause: text("Apache logged errors phptune does not classify (see the example)"),
		Fix:   text("read them with phptune lab logs NAME apache"),
	},
	{
		Name: "php_memory_limit", Status: 500,
		What: "PHP running out of memory_limit",
		Cause: func(s Settings) string {
			return fmt.Sprintf("a request needed more than PHP's memory_limit (%s) and PHP stopped it with a fatal error", s.knob("memory_limit", "128M"))
		},
		Fix: text("raise memory_limit if the page really needs it (and size pm.max_children to the memory that leaves), or find what allocates"),
	},
	{
		Name: "php_max_execution_time", Status: 500,
		What:  "PHP exceeding max_execution_time",
		Cause: text("a request used more CPU time than PHP's max_execution_time (30 s by default; set_time_limit() changes it) and PHP stopped it"),
		Fix:   text("find the slow script (the example names it); max_execution_time is not a phptune knob"),
	},
	{
		Name: "php_fatal", Status: 500,
		What:  "PHP fatal errors",
		Cause: text("the application stopped with a PHP fatal error (the example says which)"),
		Fix:   text("fix the application; the page measured is an error page"),
	},
	{
		Name:  "php_message",
		What:  "PHP warnings and notices",
		Cause: text("PHP wrote warnings or notices to php-fpm's stderr, which the web server logs as errors; the responses themselves were not failures"),
		Fix:   text("fix them in the application: each one costs a log write under load"),
	},
	{
		Name: "fpm_max_children_reached", Source: FPM,
		What: "php-fpm reaching pm.max_children",
		Cause: func(s Settings) string {
			return fmt.Sprintf("the pool wanted more workers than pm.max_children=%s, so requests queued in the socket's backlog (%s); php-fpm logs this once per spell at the limit, not per request",
				s.knob("pm.max_children", "5"), backlog(s, "listen.backlog", "511"))
		},
		Fix: text("raise pm.max_children if the CPU and memory allow (phptune tune sizes it), or keep it and give the queue room (listen.backlog)"),
	},
	{
		Name: "fpm_seems_busy", Source: FPM,
		What: "php-fpm warning it seems busy",
		Cause: func(s Settings) string {
			return fmt.Sprintf("a dynamic pool had no idle worker and was spawning more (pm.start_servers=%s, pm.min_spare_servers=%s, pm.max_spare_servers=%s): requests waited while workers started",
				s.knob("pm.start_servers", "2"), s.knob("pm.min_spare_servers", "1"), s.knob("pm.max_spare_servers", "3"))
		},
		Fix: text("raise pm.start_servers and pm.min_spare_servers, or use pm=static with the pool sized for the load"),
	},
	{
		Name: "fpm_worker_signal", Source: FPM,
		What:  "php-fpm workers dying on a signal",
		Cause: text("a worker was killed by a signal (SIGKILL: the OOM killer or a person; SIGSEGV: a crash; SIGTERM: request_terminate_timeout or a person); the request it served was lost"),
		Fix:   text("SIGKILL under a memory cap: fewer workers or more memory; SIGSEGV: a PHP or extension bug; SIGTERM after 'execution timed out': a slow request"),
	},
	{
		Name: "fpm_execution_timed_out", Source: FPM,
		What:  "php-fpm ending requests at request_terminate_timeout",
		Cause: text("a request ran past the pool's request_terminate_timeout and php-fpm killed its worker (the client got a 502 or 503 from the web server)"),
		Fix:   text("find the slow script (the example names it); request_terminate_timeout is not a phptune knob"),
	},
	{
		Name: "fpm_worker_exit_error", Source: FPM,
		What:  "php-fpm workers exiting with an error code",
		Cause: text("a worker exited with a non-zero code; the request it served may have been lost"),
		Fix:   text("read php-fpm's log around the example (phptune lab logs NAME php-fpm)"),
	},
	{
		Name: "fpm_worker_recycled", Source: FPM,
		What: "php-fpm replacing workers",
		Cause: func(s Settings) string {
			return fmt.Sprintf("workers exited normally to be replaced: after pm.max_requests=%s requests each (0: never), or idle ones a dynamic or ondemand pool let go; each new worker starts cold", s.knob("pm.max_requests", "0"))
		},
		Fix: text("raise pm.max_requests (0 never recycles) unless the application leaks memory; the listening socket is the master's, so connections queued on it outlive a worker's replacement"),
	},
	{
		Name: "fpm_other", Source: FPM,
		What:  "other php-fpm warnings and errors",
		Cause: text("php-fpm logged warnings or errors phptune does not classify (see the example)"),
		Fix:   text("read them with phptune lab logs NAME php-fpm"),
	},
}

// Lookup returns the class called name.
func Lookup(name string) (Class, bool) {
	for _, c := range classes {
		if c.Name == name {
			return c, true
		}
	}
	return Class{}, false
}

func classIndex(name string) int {
	for i, c := range classes {
		if c.Name == name {
			return i
		}
	}
	panic("errlog: unknown class " + name)
}

// exampleLimit bounds the example line a count keeps.
const exampleLimit = 400

// Example makes a log line safe to keep and show: cut to a few hundred
// bytes, control characters, escape sequences and bytes that are not
// UTF-8 shown as escapes (termsafe.Line).
func Example(line string) string { return safeCut(line, exampleLimit) }

// safeCut is s with its control characters, escape sequences and bytes
// that are not UTF-8 shown as escapes (termsafe.Line), cut to limit bytes
// (and an ellipsis) at a rune's start.
func safeCut(s string, limit int) string {
	// Escaped first, then cut: an escape makes the text longer, and the
	// result must stay within limit.
	s = termsafe.Line(s)
	if len(s) > limit {
		cut := limit
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
