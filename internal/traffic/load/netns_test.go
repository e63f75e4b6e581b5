package load

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/testkit/netnstest"
)

// serveHTTP serves body with status on ln until the test ends.
func serveHTTP(t testing.TB, ln net.Listener, status int, body string) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// nsTarget starts an HTTP server answering 200 in a new network namespace
// and one answering 500 on the same address of the host, and returns the
// namespace and a target for the one inside.
func nsTarget(t testing.TB) (*netnstest.Namespace, Target) {
	ns := netnstest.New(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveHTTP(t, host, http.StatusInternalServerError, "the host's")
	addr := host.Addr().String()
	serveHTTP(t, ns.Listen(t, addr), http.StatusOK, "inside")
	return ns, Target{Protocol: "http", Network: "tcp", Address: addr, NetNS: ns.File}
}

// threadsIn counts this process's threads in the network namespace ns.
func threadsIn(t *testing.T, ns *os.File) int {
	t.Helper()
	var want unix.Stat_t
	if err := unix.Fstat(int(ns.Fd()), &want); err != nil {
		t.Fatal(err)
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/ns/net")
	n := 0
	for _, p := range tasks {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino {
			n++
		}
	}
	return n
}

// TestNetNSTarget: a target in another network namespace gets every
// request, with and without keep-alive (a socket per request then, all
// made inside), while the host's server on the same address gets none;
// the run leaves no thread of its own in the namespace.
func TestNetNSTarget(t *testing.T) {
	ns, target := nsTarget(t)
	for _, ka := range []bool{true, false} {
		t.Run(fmt.Sprintf("keepalive=%v", ka), func(t *testing.T) {
			o := Options{Target: target, Requests: []Request{{Path: "/"}}, Connections: 8, N: 3000,
				KeepAlive: ka, Timeout: 5 * time.Second, Expect: "^inside$"}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 3000 || res.Errors != 0 || res.StatusCodes["200"] != 3000 {
				t.Fatalf("requests %d errors %d codes %v classes %v", res.Requests, res.Errors, res.StatusCodes, res.ErrorsByClass)
			}
			if !ka && res.ConnectionsOpened != 3000 {
				t.Fatalf("opened %d connections without keep-alive", res.ConnectionsOpened)
			}
			if n := threadsIn(t, ns.File); n != 1 {
				t.Errorf("%d threads are in the namespace after the run; want only the test's holder", n)
			}
		})
	}
}

// TestNetNSTargetRefusesAPlainFile: a namespace file that is not one
// fails the run before any request, naming the target.
func TestNetNSTargetRefusesAPlainFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("entering a network namespace needs root")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "not-a-namespace"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := Options{Target: Target{Protocol: "http", Network: "tcp", Address: "127.0.0.1:1", NetNS: f},
		Requests: []Request{{Path: "/"}}, N: 1}
	if _, err := Run(context.Background(), o); err == nil {
		t.Fatal("ran")
	} else {
		t.Log(err)
	}
}

// BenchmarkNewConnections sends b.N requests without keep-alive (a new
// connection each) to a Go server on the host and to one in another
// network namespace (sockets from the run's maker), and reports the rate.
func BenchmarkNewConnections(b *testing.B) {
	_, inside := nsTarget(b)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	serveHTTP(b, host, http.StatusOK, "host")
	for _, tc := range []struct {
		name   string
		target Target
	}{
		{"host", Target{Protocol: "http", Network: "tcp", Address: host.Addr().String()}},
		{"netns", inside},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := Options{Target: tc.target, Requests: []Request{{Path: "/"}}, Connections: 16,
				N: int64(b.N), Timeout: 5 * time.Second}
			res, err := Run(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			if res.Errors != 0 {
				b.Fatalf("errors %v", res.ErrorsByClass)
			}
			b.ReportMetric(res.ThroughputRPS, "req/s")
		})
	}
}
