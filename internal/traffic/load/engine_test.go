package load

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer accepts connections and runs handle on each; it counts
// requests as handle reports them.
type rawServer struct {
	ln    net.Listener
	count atomic.Int64
	wg    sync.WaitGroup
}

func newRawServer(t *testing.T, handle func(s *rawServer, c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	var conns sync.Map
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(s, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
		s.wg.Wait()
	})
	return s
}

// readRequest reads one request head (and a Content-Length body).
func readRequest(br *bufio.Reader) (string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, req.Body)
	return req.Header.Get("Connection"), nil
}

// okServer answers every request with a small 200, honouring
// Connection: close.
func okServer(t *testing.T, body string) *rawServer {
	return newRawServer(t, func(s *rawServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			conn, err := readRequest(br)
			if err != nil {
				return
			}
			s.count.Add(1)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			if conn == "close" {
				return
			}
		}
	})
}

func httpOpts(s *rawServer) Options {
	addr := s.ln.Addr().String()
	return Options{
		Target:   Target{Protocol: "http", Network: "tcp", Address: addr},
		Requests: []Request{{Path: "/"}},
		Timeout:  2 * time.Second,
	}
}

func TestClosedModelCountsMatchServer(t *testing.T) {
	for _, ka := range []bool{true, false} {
		t.Run(fmt.Sprintf("keepalive=%v", ka), func(t *testing.T) {
			s := okServer(t, "hello")
			o := httpOpts(s)
			o.Connections, o.N, o.KeepAlive = 4, 2000, ka
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 2000 || res.Errors != 0 || res.StatusCodes["200"] != 2000 {
				t.Fatalf("requests %d errors %d codes %v classes %v", res.Requests, res.Errors, res.StatusCodes, res.ErrorsByClass)
			}
			if got := s.count.Load(); got != res.RequestsSent || got != 2000 {
				t.Fatalf("server saw %d, generator sent %d", got, res.RequestsSent)
			}
			if !ka && res.ConnectionsOpened != 2000 {
				t.Fatalf("opened %d connections without keep-alive", res.ConnectionsOpened)
			}
			if res.Latency.P99Ms <= 0 || res.Generator.CPUSeconds <= 0 || len(res.LatencyDistribution) == 0 {
				t.Fatalf("missing latency or cost: %+v %+v", res.Latency, res.Generator)
			}
		})
	}
}

func TestDurationWarmupAndSeries(t *testing.T) {
	s := okServer(t, "x")
	o := httpOpts(s)
	o.Connections, o.Duration, o.Warmup, o.KeepAlive = 2, 1500*time.Millisecond, 300*time.Millisecond, true
	var progress, marks atomic.Int32
	var atMark atomic.Int64
	o.Progress = func(Progress) { progress.Add(1) }
	// A slow mark: the measured window waits for it and keeps its length.
	o.OnMeasure = func() { marks.Add(1); time.Sleep(200 * time.Millisecond); atMark.Store(s.count.Load()) }
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// OnMeasure ran once, when the warm-up ended: the server had seen the
	// warm-up's requests then. Every request counted was sent after it
	// returned, so the server saw at least the counted ones after the
	// mark, and at most one more per connection (in flight at the mark).
	after := s.count.Load() - atMark.Load()
	if marks.Load() != 1 || atMark.Load() == 0 || after < res.Requests || after > res.Requests+int64(o.Connections) {
		t.Fatalf("OnMeasure called %d times, server at the mark %d, at the end %d, measured %d", marks.Load(), atMark.Load(), s.count.Load(), res.Requests)
	}
	if res.DurationS != 1.5 {
		t.Fatalf("measured %v s, want the window's 1.5 s", res.DurationS)
	}
	if len(res.Series) != 2 {
		t.Fatalf("%d seconds in the series, want 2", len(res.Series))
	}
	var sum int64
	for _, s := range res.Series {
		sum += s.Requests
	}
	if sum != res.Requests || res.Requests == 0 {
		t.Fatalf("series sum %d != requests %d", sum, res.Requests)
	}
	// The warm-up's requests reached the server but not the result.
	if s.count.Load() <= res.Requests {
		t.Fatalf("server %d, measured %d: warm-up not excluded?", s.count.Load(), res.Requests)
	}
	if progress.Load() == 0 {
		t.Fatal("no progress callback")
	}
}

// TestMisbehavingServers: each failure mode ends as its error class, within
// the timeout, without hanging the run.
func TestMisbehavingServers(t *testing.T) {
	tests := []struct {
		name   string
		handle func(s *rawServer, c net.Conn)
		class  string
	}{
		{"closes mid-response", func(s *rawServer, c net.Conn) {
			br := bufio.NewReader(c)
			if _, err := readRequest(br); err == nil {
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"))
			}
		}, ClassClosed},
		{"closes before answering", func(s *rawServer, c net.Conn) {
			readRequest(bufio.NewReader(c))
		}, ClassClosed},
		{"stalls", func(s *rawServer, c net.Conn) {
			readRequest(bufio.NewReader(c))
			time.Sleep(3 * time.Second)
		}, ClassReadTimeout},
		{"oversized headers", func(s *rawServer, c net.Conn) {
			if _, err := readRequest(bufio.NewReader(c)); err == nil {
				c.Write([]byte("HTTP/1.1 200 OK\r\n"))
				big := "X-Big: " + strings.Repeat("a", 1000) + "\r\n"
				for i := 0; i < 100; i++ {
					if _, err := c.Write([]byte(big)); err != nil {
						return
					}
				}
			}
		}, ClassProtocol},
		{"content-length too short", func(s *rawServer, c net.Conn) {
			if _, err := readRequest(bufio.NewReader(c)); err == nil {
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\ntoo long"))
				time.Sleep(200 * time.Millisecond)
			}
		}, ClassProtocol},
		{"garbage", func(s *rawServer, c net.Conn) {
			if _, err := readRequest(bufio.NewReader(c)); err == nil {
				c.Write([]byte("SSH-2.0-OpenSSH\r\n\r\n"))
			}
		}, ClassProtocol},
		{"resets", func(s *rawServer, c net.Conn) {
			if _, err := readRequest(bufio.NewReader(c)); err == nil {
				c.(*net.TCPConn).SetLinger(0)
			}
		}, ClassReset},
		{"500", func(s *rawServer, c net.Conn) {
			if _, err := readRequest(bufio.NewReader(c)); err == nil {
				c.Write([]byte("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}
		}, ClassStatus5xx},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, tc.handle)
			o := httpOpts(s)
			o.Connections, o.N, o.KeepAlive, o.Timeout = 2, 6, true, 500*time.Millisecond
			start := time.Now()
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > 8*time.Second {
				t.Fatalf("took %v", el)
			}
			if res.Errors != 6 || res.ErrorsByClass[tc.class] != 6 {
				t.Fatalf("errors %d by class %v, want 6 %s", res.Errors, res.ErrorsByClass, tc.class)
			}
		})
	}
}

func TestConnectRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	o := Options{Target: Target{Protocol: "http", Network: "tcp", Address: addr}, Requests: []Request{{Path: "/"}},
		Connections: 2, Duration: 300 * time.Millisecond}
	res, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.ErrorsByClass[ClassConnectRefused] == 0 {
		t.Fatalf("no connect_refused in %+v", res)
	}
}

func TestOpenModelAvoidsCoordinatedOmission(t *testing.T) {
	// A server that takes 50 ms per request on one connection, asked for
	// 100 requests/second: requests queue behind each other, and their
	// latency from the intended send time must show that queueing.
	s := newRawServer(t, func(s *rawServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := readRequest(br); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
			s.count.Add(1)
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		}
	})
	o := httpOpts(s)
	o.Connections, o.Duration, o.KeepAlive, o.Pacer = 1, time.Second, true, ConstantPacer{Rate: 100}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "open" || res.RateAskedRPS < 99 || res.RateAskedRPS > 101 {
		t.Fatalf("model %s asked %v", res.Model, res.RateAskedRPS)
	}
	// About 20 answered per second, far below the asked 100.
	if res.RateAchievedRPS > 40 {
		t.Fatalf("achieved %v", res.RateAchievedRPS)
	}
	// The last requests waited most of the second: p99 far above 50 ms.
	if res.Latency.MaxMs < 400 {
		t.Fatalf("max latency %v ms: queueing hidden", res.Latency.MaxMs)
	}
	if len(res.Warnings) == 0 {
		t.Fatal("no warning about unsent requests")
	}
}

// TestOpenModelNothingUnsentWithFreeConnections: with connections to
// spare every request due in the window is sent, the last ones too (a
// capacity step counts an unsent request as late: one lost at the
// window's end failed passing steps).
func TestOpenModelNothingUnsentWithFreeConnections(t *testing.T) {
	s := okServer(t, "ok")
	for i := 0; i < 20; i++ {
		o := httpOpts(s)
		o.Connections, o.Duration, o.KeepAlive, o.Pacer = 64, 200*time.Millisecond, true, ConstantPacer{Rate: 3000 + 17*float64(i)}
		// A machine that stalls this process for 20 ms (steal, a build
		// beside the tests) has every connection waiting at once, and
		// then requests are rightly unsent: such a run is measured once
		// more, and only a rate that loses requests twice fails.
		for try := 1; ; try++ {
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.RequestsUnsent == 0 && res.RequestsUnanswered == 0 {
				break
			}
			if try == 2 {
				t.Fatalf("run %d at %v rps, twice: %d unsent, %d unanswered with 64 connections for a fast server", i, o.Pacer, res.RequestsUnsent, res.RequestsUnanswered)
			}
			t.Logf("run %d at %v rps: %d unsent, %d unanswered; measured again", i, o.Pacer, res.RequestsUnsent, res.RequestsUnanswered)
		}
	}
}

func TestOpenModelRate(t *testing.T) {
	s := okServer(t, "ok")
	o := httpOpts(s)
	o.Connections, o.Duration, o.KeepAlive, o.Pacer = 4, time.Second, true, ConstantPacer{Rate: 500}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 450 || res.Requests > 520 {
		t.Fatalf("%d requests at 500/s for 1s", res.Requests)
	}
}

func TestWeightedRequestsAndPost(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	s := newRawServer(t, func(s *rawServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(req.Body)
			mu.Lock()
			seen[req.Method+" "+req.URL.Path+" "+string(b)]++
			mu.Unlock()
			c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"))
		}
	})
	reqs, err := ParseScenario(strings.NewReader("# test\n3 GET /a\n1 POST /b x=1&y=2\n    X-Test: yes\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := httpOpts(s)
	o.Requests, o.Connections, o.N, o.KeepAlive = reqs, 2, 4000, true
	res, err := Run(context.Background(), o)
	if err != nil || res.Errors != 0 {
		t.Fatalf("%v %v", err, res.ErrorsByClass)
	}
	a, b := seen["GET /a "], seen["POST /b x=1&y=2"]
	if a+b != 4000 || b < 800 || b > 1200 {
		t.Fatalf("seen %v", seen)
	}
}

func TestFastCGIAgainstGoServer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "fpm.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go fcgi.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if fcgi.ProcessEnv(r)["SCRIPT_FILENAME"] != "/srv/www/index.php" {
			w.WriteHeader(404)
		}
		io.WriteString(w, "Hello, world!\n")
	}))
	for _, ka := range []bool{false, true} {
		n.Store(0)
		o := Options{Target: Target{Protocol: "fcgi", Network: "unix", Address: sock, DocRoot: "/srv/www"},
			Requests: []Request{{Path: "/index.php"}}, Connections: 3, N: 1500, KeepAlive: ka, Timeout: 2 * time.Second}
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 1500 || res.Errors != 0 || n.Load() != 1500 {
			t.Fatalf("keepalive=%v: requests %d errors %v server %d", ka, res.Requests, res.ErrorsByClass, n.Load())
		}
	}
}

func TestValidate(t *testing.T) {
	good := Options{Target: Target{Protocol: "http", Network: "tcp", Address: "127.0.0.1:1"}, Requests: []Request{{Path: "/"}}, Duration: time.Second}
	tests := []struct {
		name string
		mod  func(o *Options)
	}{
		{"protocol", func(o *Options) { o.Target.Protocol = "ftp" }},
		{"no requests", func(o *Options) { o.Requests = nil }},
		{"relative path", func(o *Options) { o.Requests = []Request{{Path: "x"}} }},
		{"no stop", func(o *Options) { o.Duration = 0 }},
		{"rate with n", func(o *Options) { o.Pacer = ConstantPacer{Rate: 1}; o.N = 5 }},
		{"fcgi without script", func(o *Options) { o.Target.Protocol = "fcgi" }},
		{"negative", func(o *Options) { o.Connections = -1 }},
		{"bad expect", func(o *Options) { o.Expect = "a(" }},
		{"namespace for a unix socket", func(o *Options) {
			o.Target.Network, o.Target.Address, o.Target.NetNS = "unix", "/run/x.sock", os.Stdin
		}},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		o := good
		tc.mod(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestPacers(t *testing.T) {
	tests := []struct {
		spec string
		mean float64
	}{
		{"100", 100}, {"100..300", 200}, {"100,300", 200},
	}
	for _, tc := range tests {
		p, err := ParseRate(tc.spec, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m := MeanRate(p, 10*time.Second); m < tc.mean*0.99 || m > tc.mean*1.01 {
			t.Errorf("%s: mean %v", tc.spec, m)
		}
		prev := time.Duration(-1)
		for k := int64(0); k < 5000; k++ {
			at := p.Intended(k)
			if at < prev {
				t.Fatalf("%s: not monotonic at %d", tc.spec, k)
			}
			prev = at
		}
	}
	for _, bad := range []string{"", "0", "-5", "a..b", "1,,2", "NaN"} {
		if _, err := ParseRate(bad, time.Second); err == nil {
			t.Errorf("rate %q accepted", bad)
		}
	}
}

func TestStatusClass(t *testing.T) {
	tests := []struct {
		status, expect int
		ok             bool
		class          class
	}{
		{200, 0, true, 0},
		{204, 0, true, 0},
		{206, 0, true, 0},
		{301, 0, false, cRedirect},
		{302, 0, false, cRedirect},
		{304, 0, false, cRedirect},
		{404, 0, false, cStatus4xx},
		{503, 0, false, cStatus5xx},
		{302, 302, true, 0},
		{301, 302, false, cRedirect},
		{200, 302, false, cUnexpectedStatus},
		{409, 302, false, cStatus4xx},
		{500, 302, false, cStatus5xx},
		{404, 404, true, 0},
	}
	for _, tc := range tests {
		cl, ok := statusClass(tc.status, tc.expect)
		if ok != tc.ok || (!ok && cl != tc.class) {
			t.Errorf("statusClass(%d, expect %d) = %s, %v; want %s, %v", tc.status, tc.expect, classNames[cl], ok, classNames[tc.class], tc.ok)
		}
	}
}

func TestParseScenarioExpectStatus(t *testing.T) {
	reqs, err := ParseScenario(strings.NewReader("8 GET /\n1 POST /wp-comments-post.php comment=Hi\n    X-Bench: 1\n    => 302\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].ExpectStatus != 0 || reqs[1].ExpectStatus != 302 || reqs[1].Header.Get("X-Bench") != "1" {
		t.Fatalf("%+v", reqs)
	}
}

func FuzzParseScenario(f *testing.F) {
	for _, s := range []string{"1 GET /", "8 GET /\n1 POST /p a=b\n  => 302\n  X: y", "1 GET /\n  => 99", "  => 302"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		reqs, err := ParseScenario(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, q := range reqs {
			if q.Weight <= 0 || q.Path == "" || q.Path[0] != '/' || (q.ExpectStatus != 0 && (q.ExpectStatus < 100 || q.ExpectStatus > 599)) {
				t.Fatalf("%q gave %+v", in, q)
			}
		}
	})
}

func TestParseScenarioErrors(t *testing.T) {
	for _, bad := range []string{"", "GET /", "0 GET /", "1 G3T /", "1 GET x", "  X: y\n1 GET /", "1 GET /\n  bad header", "1 GET /\n  => 99", "1 GET /\n  => x", "  => 302"} {
		if _, err := ParseScenario(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLargeBodiesToASlowReader: a request larger than the socket buffers
// to a server that reads it slowly cannot be written at once; the
// generator must resume writing when the socket drains (EPOLLOUT is only
// asked for then), with and without keep-alive.
func TestLargeBodiesToASlowReader(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 4<<20)
	s := newRawServer(t, func(s *rawServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			buf := make([]byte, 64<<10)
			var n int64
			for {
				time.Sleep(time.Millisecond) // a slow reader
				k, err := req.Body.Read(buf)
				n += int64(k)
				if err != nil {
					break
				}
			}
			if n != int64(len(body)) {
				return
			}
			s.count.Add(1)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			if req.Header.Get("Connection") == "close" {
				return
			}
		}
	})
	for _, ka := range []bool{true, false} {
		before := s.count.Load()
		o := httpOpts(s)
		o.Requests = []Request{{Method: "POST", Path: "/upload", Body: body}}
		o.Connections, o.N, o.KeepAlive, o.Timeout = 2, 6, ka, 20*time.Second
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 6 || res.Errors != 0 || s.count.Load()-before != 6 {
			t.Errorf("keep-alive %v: %d requests, %d errors %v, server saw %d", ka, res.Requests, res.Errors, res.ErrorsByClass, s.count.Load()-before)
		}
	}
}

func TestRawAddr(t *testing.T) {
	for _, tt := range []struct {
		sa   unix.Sockaddr
		want []byte
	}{
		{&unix.SockaddrInet4{Port: 8080, Addr: [4]byte{127, 0, 0, 1}}, []byte{2, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
		{&unix.SockaddrUnix{Name: "/run/a.sock"}, append([]byte{1, 0}, "/run/a.sock\x00"...)},
		{&unix.SockaddrUnix{Name: "@abs"}, []byte{1, 0, 0, 'a', 'b', 's'}},
	} {
		got, err := newRawAddr(tt.sa)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%+v: got %v %v, want %v", tt.sa, []byte(got), err, tt.want)
		}
	}
	a6, err := newRawAddr(&unix.SockaddrInet6{Port: 443, Addr: [16]byte{15: 1}})
	if err != nil || len(a6) != unix.SizeofSockaddrInet6 || a6[0] != unix.AF_INET6 || a6[2] != 1 || a6[3] != 0xbb || a6[23] != 1 {
		t.Errorf("inet6: %v %v", []byte(a6), err)
	}
	if _, err := newRawAddr(&unix.SockaddrUnix{Name: strings.Repeat("x", 200)}); err == nil {
		t.Error("a 200-byte unix path accepted")
	}
}

// TestPeerCheckRefusesAStrangersSocket: a FastCGI target whose listener is
// not the expected account is refused before any request is written.
func TestPeerCheckRefusesAStrangersSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "fpm.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			got <- n
			c.Close()
		}
	}()
	o := Options{
		Target:      Target{Protocol: "fcgi", Network: "unix", Address: sock, DocRoot: "/srv", CheckPeer: true, PeerUID: os.Geteuid() + 4242},
		Requests:    []Request{{Method: "GET", Path: "/index.php"}},
		Connections: 1, Duration: 200 * time.Millisecond,
	}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not as the lab's account") {
		t.Fatalf("Run = %v, want the stranger refused", err)
	}
	select {
	case n := <-got:
		if n > 0 {
			t.Fatalf("%d bytes were sent to the stranger", n)
		}
	case <-time.After(100 * time.Millisecond):
	}
	o.Target.PeerUID = os.Geteuid()
	o.Duration = 100 * time.Millisecond
	if _, err := Run(context.Background(), o); err != nil && strings.Contains(err.Error(), "lab's account") {
		t.Fatalf("own socket refused: %v", err)
	}
}

// pageServer answers each path with its own response, chunked or not.
func pageServer(t *testing.T) *rawServer {
	big := strings.Repeat("x", 70<<10)
	return newRawServer(t, func(s *rawServer, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			var resp string
			switch req.URL.Path {
			case "/good":
				resp = "HTTP/1.1 200 OK\r\nContent-Length: 38\r\n\r\n<title>Blog</title><p>Welcome back</p>"
			case "/chunked": // "Welcome" split across chunks
				resp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n<p>Welc\r\n8\r\nome</p>\n\r\n0\r\n\r\n"
			case "/setup":
				resp = "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n<title>Setup error</title>data dir gone."
			case "/late": // the word beyond ExpectBodyLimit
				resp = fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%sWelcome", len(big)+7, big)
			case "/redirect":
				resp = "HTTP/1.1 302 Found\r\nLocation: /good\r\nContent-Length: 0\r\n\r\n"
			case "/head":
				resp = "HTTP/1.1 200 OK\r\nContent-Length: 38\r\n\r\n"
			default:
				resp = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\nerror"
			}
			io.WriteString(c, resp)
			if req.Header.Get("Connection") == "close" {
				return
			}
		}
	})
}

func TestExpect(t *testing.T) {
	s := pageServer(t)
	tests := []struct {
		path, method string
		expectStatus int
		unexpected   bool
		class        string // the error class, "" for success
	}{
		{"/good", "GET", 0, false, ""},
		{"/chunked", "GET", 0, false, ""},
		{"/setup", "GET", 0, true, ClassUnexpectedBody},
		{"/late", "GET", 0, true, ClassUnexpectedBody},
		// A redirect is not the page: an error with or without --expect,
		// unless the request expects it (a comment POST's 302), and then
		// its placeholder body is not matched.
		{"/redirect", "GET", 0, false, ClassRedirect},
		{"/redirect", "POST", 302, false, ""},
		{"/good", "POST", 302, false, ClassUnexpectedStatus},
		{"/head", "HEAD", 0, false, ""},
		{"/error", "GET", 0, false, ClassStatus5xx},
	}
	for _, tc := range tests {
		for _, ka := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/%s/%d/keepalive=%v", tc.method, tc.path, tc.expectStatus, ka), func(t *testing.T) {
				o := httpOpts(s)
				o.Requests = []Request{{Method: tc.method, Path: tc.path, ExpectStatus: tc.expectStatus}}
				o.Connections, o.N, o.KeepAlive, o.Expect = 2, 200, ka, `Wel+come`
				res, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				want := int64(0)
				if tc.class != "" {
					want = 200
				}
				if res.Requests != 200 || res.Errors != want || (tc.class != "" && res.ErrorsByClass[tc.class] != 200) {
					t.Fatalf("requests %d errors %d %v", res.Requests, res.Errors, res.ErrorsByClass)
				}
				warned := strings.Contains(strings.Join(res.Warnings, "\n"), "did not match --expect")
				if warned != tc.unexpected {
					t.Fatalf("warnings %q", res.Warnings)
				}
				if tc.path == "/setup" && !strings.Contains(res.Warnings[0], `GET /setup answered 200 with title "Setup error"`) {
					t.Fatalf("warning does not name the page: %q", res.Warnings[0])
				}
			})
		}
	}
	// Without Expect nothing is matched: the setup page is a success; a
	// redirect is still an error, counted with its status.
	o := httpOpts(s)
	o.Requests, o.N = []Request{{Path: "/setup"}}, 50
	if res, err := Run(context.Background(), o); err != nil || res.Errors != 0 {
		t.Fatalf("%v %v", err, res.ErrorsByClass)
	}
	o.Requests = []Request{{Path: "/redirect", Weight: 1}, {Path: "/good", Weight: 1}}
	res, err := Run(context.Background(), o)
	if err != nil || res.Errors != res.ErrorsByClass[ClassRedirect] || res.Errors != res.StatusCodes["302"] || res.StatusCodes["200"]+res.Errors != 50 {
		t.Fatalf("a mix of redirects and pages: %v %v %v", err, res.ErrorsByClass, res.StatusCodes)
	}
	o.Expect = "(unclosed"
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not a valid regular expression") {
		t.Fatalf("bad expression: %v", err)
	}
}

func TestExpectFastCGI(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "fpm.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go fcgi.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/setup.php" {
			io.WriteString(w, "<title>Database connection error</title>")
			return
		}
		io.WriteString(w, "<title>Blog</title>")
		w.(http.Flusher).Flush() // the body in two STDOUT records
		io.WriteString(w, strings.Repeat("p", 1000)+"Welcome")
	}))
	for _, tc := range []struct {
		path string
		errs int64
	}{{"/index.php", 0}, {"/setup.php", 300}} {
		for _, ka := range []bool{false, true} {
			o := Options{Target: Target{Protocol: "fcgi", Network: "unix", Address: sock, DocRoot: "/srv/www"},
				Requests: []Request{{Path: tc.path}}, Connections: 3, N: 300, KeepAlive: ka, Timeout: 2 * time.Second, Expect: "Welcome"}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 300 || res.Errors != tc.errs || res.ErrorsByClass[ClassUnexpectedBody] != tc.errs {
				t.Fatalf("%s keepalive=%v: requests %d errors %d %v", tc.path, ka, res.Requests, res.Errors, res.ErrorsByClass)
			}
		}
	}
}
