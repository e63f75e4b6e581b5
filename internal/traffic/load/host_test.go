package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCheckHost(t *testing.T) {
	for _, h := range []string{"site.test", "www.site.test", "127.0.0.1:8080", "[::1]:80", "my_host", "SITE.TEST"} {
		if err := CheckHost(h); err != nil {
			t.Errorf("CheckHost(%q): %v", h, err)
		}
	}
	for _, h := range []string{"", "site.test\r\nX-Injected: 1", "site test", "site.test/path", "site.test?x", "s\x00", strings.Repeat("a", 256)} {
		if err := CheckHost(h); err == nil {
			t.Errorf("CheckHost(%q) accepted", h)
		} else if !strings.Contains(err.Error(), "host") {
			t.Errorf("CheckHost(%q): %v does not name the host", h, err)
		}
	}
	o := Options{Target: Target{Protocol: "http", Network: "tcp", Address: "127.0.0.1:1", Host: "a\r\nb"}, Requests: []Request{{Path: "/"}}, Duration: time.Second}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "Host header") {
		t.Errorf("Validate: %v", err)
	}
}

// FuzzCheckHost: a host CheckHost accepts cannot end the header line or
// the request line.
func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{"site.test", "a b", "x\r\ny", "[::1]:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if CheckHost(h) == nil && strings.ContainsAny(h, " \t\r\n/?#@\x00") {
			t.Fatalf("accepted %q", h)
		}
	})
}

// TestTargetHostIsSent: every request carries Target.Host as its Host
// header (--host site.test), not the address it connects to, and a Host
// given as a request header cannot replace it.
func TestTargetHostIsSent(t *testing.T) {
	var mu sync.Mutex
	hosts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts[r.Host]++
		mu.Unlock()
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	o := Options{Target: Target{Protocol: "http", Network: "tcp", Address: addr, Host: "site.test"},
		Requests: []Request{{Path: "/", Header: http.Header{"Host": {"evil.test"}}}}, Connections: 2, N: 20}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || len(hosts) != 1 || hosts["site.test"] != 20 {
		t.Errorf("errors %d, hosts seen %v", res.Errors, hosts)
	}
}
