// Package load is phptune's load generator: HTTP/1.1 and FastCGI, closed
// model (a fixed number of connections, each sending its next request when
// the previous one is answered) and open model (requests sent at a given
// rate whatever the server does, latency measured from each request's
// intended send time so a slow server cannot hide its queueing: no
// coordinated omission).
//
// The hot path is an epoll loop per thread over raw non-blocking sockets:
// requests are serialised once, responses are parsed incrementally by
// httpwire and fcgi without allocating, so the generator costs the machine
// less than the server it measures. Latencies go into HdrHistograms
// (constant memory whatever the request count).
//
// The tuner and the CLI call Run:
//
//	res, err := load.Run(ctx, load.Options{
//		Target:      load.Target{Protocol: "http", Network: "tcp", Address: "127.0.0.1:8080", Host: "127.0.0.1:8080"},
//		Requests:    []load.Request{{Method: "GET", Path: "/index.php"}},
//		Connections: 10,
//		Duration:    10 * time.Second,
//		KeepAlive:   true,
//	})
package load

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"time"
)

// Target is where the load goes.
type Target struct {
	// Protocol is "http" or "fcgi".
	Protocol string
	// Network is "tcp" or "unix"; Address is "127.0.0.1:8080" or a socket
	// path.
	Network, Address string
	// Host is the HTTP Host header (and HTTP_HOST over FastCGI); defaults
	// to Address for tcp and "localhost" for unix.
	Host string
	// DocRoot is used over FastCGI when a Request has no ScriptFilename:
	// SCRIPT_FILENAME = DocRoot + Path (without the query).
	DocRoot string
	// Display is how results name the target (the URL the user typed).
	Display string
	// CheckPeer, for a unix socket, makes every connection check that the
	// listener runs as PeerUID (SO_PEERCRED) before a request is written:
	// a lab's socket sits in a directory its account can write, so it could
	// be swapped for a link to another server's. A mismatch fails the run.
	CheckPeer bool
	PeerUID   int
	// NetNS, when set, is a network namespace (an open nsfs file, such as
	// a lab's OpenNetNS gives) that the tcp Address is in: every
	// connection's socket is made there, by a thread of the run's own
	// that stays in the namespace for the run (netnsdial.SocketMaker), so
	// the generator reaches a sealed lab's TCP listener with no relay in
	// the path. The caller keeps it open until Run returns. Not for unix
	// sockets: a path is reached from any namespace that sees it.
	NetNS *os.File
}

// Request is one kind of request; Options.Requests may hold several, chosen
// at random in proportion to their weights.
type Request struct {
	// Weight is the relative frequency (1 when 0).
	Weight int
	// Method is GET when empty.
	Method string
	// Path is the request target: "/index.php?x=1".
	Path string
	// Header adds request headers. Host, Content-Length and Connection
	// are set by the generator.
	Header http.Header
	// Body is sent with Content-Length (form POSTs: set Content-Type to
	// application/x-www-form-urlencoded in Header).
	Body []byte
	// ScriptFilename overrides SCRIPT_FILENAME over FastCGI.
	ScriptFilename string
	// ExpectStatus is the status this request answers when it works; 0
	// means any 2xx. Any other status is an error of its class (redirect,
	// status_4xx, status_5xx, or unexpected_status for a 2xx): WordPress's
	// comment POST answers 302 back to the post on success, so the comment
	// workload sets 302, and a page that answers a redirect to the site's
	// real URL is counted as the error it is, not timed as the page.
	ExpectStatus int
}

// Progress is a snapshot passed to Options.Progress about once a second.
type Progress struct {
	Elapsed   time.Duration // since the start, warm-up included
	Warmup    bool          // still warming up
	Requests  int64         // completed in the measured part so far
	Errors    int64
	RPS       float64 // over the last interval
	P99LastMs float64 // p99 of the last full second (0 if unknown)
}

// Options configure Run. Zero values are filled with the defaults named on
// each field; Validate reports what is wrong before anything connects.
type Options struct {
	Target Target
	// Requests to send; at least one.
	Requests []Request
	// Connections is the number of concurrent connections (default 1).
	Connections int
	// Threads is the number of event loops, each on its own OS thread
	// (default: the number of CPUs the process may run on, at most
	// Connections).
	Threads int
	// Duration of the measured part. With N set and Duration zero the run
	// lasts until N requests are done.
	Duration time.Duration
	// N, when set, stops after N requests in the measured part (closed
	// model only).
	N int64
	// Warmup runs the same load first and discards its results.
	Warmup time.Duration
	// Pacer selects the open model: requests are sent at its schedule.
	// Nil means the closed model.
	Pacer Pacer
	// KeepAlive reuses connections (HTTP keep-alive, FCGI_KEEP_CONN).
	// Without it every request opens a new connection.
	KeepAlive bool
	// Timeout bounds connecting and each response (default 10s); a request
	// that exceeds it is a connect_timeout or read_timeout error.
	Timeout time.Duration
	// Drain is how long, after the measured part, answers to requests
	// sent in it are still awaited (default: 2 s, at most Timeout); a
	// request still unanswered then is counted in RequestsUnanswered.
	// A capacity step with a latency bound above 2 s needs longer.
	Drain time.Duration
	// CheckLength counts responses whose body length differs from the
	// first successful response to the same request as length_mismatch
	// errors (ab's default; off by default because dynamic pages vary).
	CheckLength bool
	// Expect, when set, is a regular expression (Go syntax, RE2) that the
	// body of every 2xx response with a body must match; one that does not
	// is an unexpected_body error. It is matched against the first
	// ExpectBodyLimit bytes of the body (after chunked framing is removed;
	// the generator asks for no compression). Responses to HEAD and 204
	// have no body to match; a 3xx, 4xx or 5xx a request does not expect
	// is already an error (redirect, status_4xx, status_5xx) with or
	// without Expect, and a status a request expects (Request.ExpectStatus:
	// a comment POST's 302, whose body is a placeholder) is not matched.
	// Empty: no body byte is kept and nothing is matched.
	Expect string
	// FailOnStderr counts FastCGI responses with FCGI_STDERR output (PHP
	// notices, warnings, errors) as fcgi_stderr errors (default: counted
	// in errors_by_class only, the request is a success).
	FailOnStderr bool
	// Progress, when set, is called about once a second from a separate
	// goroutine. It must return quickly.
	Progress func(Progress)
	// OnMeasure, when set, is called once when the warm-up ends (not at
	// all without a warm-up), from the goroutine that runs the clock. The
	// measured part begins when it returns (a timer's latency after the
	// warm-up's end, at the earliest), so no request it counts was sent
	// before the call. It must return quickly: a lab marks where its error
	// logs end, so that only the measured part's lines are read.
	OnMeasure func()
	// Command is recorded in the result as the command line that
	// reproduces it.
	Command string
}

// Validate checks o and returns an error naming the field at fault.
func (o *Options) Validate() error {
	switch o.Target.Protocol {
	case "http", "fcgi":
	default:
		return fmt.Errorf("target protocol %q: use http or fcgi", o.Target.Protocol)
	}
	switch o.Target.Network {
	case "tcp", "unix":
	default:
		return fmt.Errorf("target network %q: use tcp or unix", o.Target.Network)
	}
	if o.Target.Address == "" {
		return fmt.Errorf("target address is empty")
	}
	if o.Target.NetNS != nil && o.Target.Network != "tcp" {
		return fmt.Errorf("target network %q with a network namespace: a namespace is for a tcp address (a unix socket's path is reached from every namespace that sees it)", o.Target.Network)
	}
	if o.Target.Host != "" {
		if err := CheckHost(o.Target.Host); err != nil {
			return fmt.Errorf("target Host header: %w", err)
		}
	}
	if len(o.Requests) == 0 {
		return fmt.Errorf("no requests: give at least one URL path")
	}
	for i, r := range o.Requests {
		if r.Weight < 0 {
			return fmt.Errorf("request %d (%s): negative weight %d", i+1, r.Path, r.Weight)
		}
		if r.Path == "" || r.Path[0] != '/' {
			return fmt.Errorf("request %d: path %q must start with /", i+1, r.Path)
		}
		if r.ExpectStatus != 0 && (r.ExpectStatus < 100 || r.ExpectStatus > 599) {
			return fmt.Errorf("request %d (%s): expected status %d is not an HTTP status (want 100 to 599, or 0 for any 2xx)", i+1, r.Path, r.ExpectStatus)
		}
		if o.Target.Protocol == "fcgi" && r.ScriptFilename == "" && o.Target.DocRoot == "" {
			return fmt.Errorf("request %d (%s): FastCGI needs a script filename or a document root", i+1, r.Path)
		}
	}
	if _, err := CompileExpect(o.Expect); err != nil {
		return err
	}
	if o.Connections < 0 || o.Threads < 0 || o.N < 0 || o.Duration < 0 || o.Warmup < 0 || o.Timeout < 0 || o.Drain < 0 {
		return fmt.Errorf("connections, threads, requests, durations, timeout and drain must not be negative")
	}
	if o.Duration == 0 && o.N == 0 {
		return fmt.Errorf("give a duration or a number of requests")
	}
	if o.Pacer != nil && o.N > 0 {
		return fmt.Errorf("the open model (a rate) runs for a duration, not a number of requests")
	}
	if o.Pacer != nil && o.Duration == 0 {
		return fmt.Errorf("the open model (a rate) needs a duration")
	}
	return nil
}

func (o *Options) defaults(cpus int) {
	if o.Connections == 0 {
		o.Connections = 1
	}
	if o.Threads == 0 {
		o.Threads = cpus
	}
	if o.Threads > o.Connections {
		o.Threads = o.Connections
	}
	if o.Threads < 1 {
		o.Threads = 1
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Drain == 0 {
		o.Drain = 2 * time.Second
	}
	if o.Target.Host == "" {
		if o.Target.Network == "tcp" {
			o.Target.Host = o.Target.Address
		} else {
			o.Target.Host = "localhost"
		}
	}
	if o.Target.Display == "" {
		o.Target.Display = o.Target.Protocol + "://" + o.Target.Address
	}
}

// ExpectBodyLimit is how much of a body Options.Expect is matched against:
// 64 KiB holds the head and the start of the content of any page, and
// bounds the generator's memory to 64 KiB per connection.
const ExpectBodyLimit = 64 << 10

// CompileExpect compiles an Options.Expect expression; "" gives nil. The
// error names the expression and what is wrong with it.
func CompileExpect(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("expect %q is not a valid regular expression (Go RE2 syntax): %v", expr, err)
	}
	return re, nil
}
