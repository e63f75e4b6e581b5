package locust

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/traffic/load"
)

func TestCheck(t *testing.T) {
	tcp := load.Target{Protocol: "http", Network: "tcp", Address: "127.0.0.1:8080"}
	ok := load.Options{Target: tcp, Duration: 5 * time.Second, KeepAlive: true}
	for _, c := range []struct {
		name string
		edit func(*load.Options)
		want string // "" accepted
	}{
		{"closed", func(*load.Options) {}, ""},
		{"warm-up: a throwaway run", func(o *load.Options) { o.Warmup = 2 * time.Second }, ""},
		{"constant rate", func(o *load.Options) { o.Pacer = load.ConstantPacer{Rate: 50} }, ""},
		{"unix socket", func(o *load.Options) { o.Target.Network, o.Target.Address = "unix", "/srv/lab/http.sock" }, "unix socket"},
		{"fastcgi", func(o *load.Options) { o.Target.Protocol = "fcgi" }, "HTTP only"},
		{"count", func(o *load.Options) { o.N = 10 }, "give -d instead of -n"},
		{"short", func(o *load.Options) { o.Duration = 500 * time.Millisecond }, "at least 1s"},
	} {
		o := ok
		c.edit(&o)
		err := Check(o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestWorkloadOfHost(t *testing.T) {
	reqs := []load.Request{
		{Method: "GET", Path: "/"},
		{Method: "POST", Path: "/c", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}},
	}
	for _, c := range []struct {
		name, address, host, want string
	}{
		{"the address", "127.0.0.1:8080", "127.0.0.1:8080", ""},
		{"none", "127.0.0.1:8080", "", ""},
		{"the site's name (--host)", "127.0.0.1:8080", "shop.example", "shop.example"},
	} {
		o := load.Options{Target: load.Target{Protocol: "http", Address: c.address, Host: c.host}, Requests: reqs, Connections: 4}
		w := WorkloadOf(o, nil)
		for i, r := range w.Requests {
			if got := r.Header.Get("Host"); got != c.want {
				t.Errorf("%s: request %d's Host %q, want %q", c.name, i, got, c.want)
			}
		}
		if reqs[0].Header != nil || reqs[1].Header.Get("Host") != "" {
			t.Fatalf("%s: WorkloadOf changed the caller's requests", c.name)
		}
		if c.want != "" && w.Requests[1].Header.Get("Content-Type") == "" {
			t.Errorf("%s: the request's own headers were lost", c.name)
		}
	}
}

func TestEngineBenchFlags(t *testing.T) {
	for _, c := range []struct {
		e    Engine
		want string
	}{
		{Engine{}, "--engine locust"},
		{Engine{Workers: 2}, "--engine locust --workers 2"},
	} {
		if got := c.e.BenchFlags(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}
