package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/phptune/phptune/internal/results"
)

// TestBenchRefusesBadFlagsBeforeConnecting: every invalid command line is a
// usage error naming the flag, and no connection reaches the server.
func TestBenchRefusesBadFlagsBeforeConnecting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	url := "http://" + ln.Addr().String() + "/"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "no target"},
		{[]string{"bench", "-c", "0", url}, "-c 0"},
		{[]string{"bench", "-n", "5", "-c", "10", url}, "-c 10 is more than -n 5"},
		{[]string{"bench", "-n", "100", "-d", "5s", url}, "-n or -d"},
		{[]string{"bench", "--rate", "abc", url}, "--rate"},
		{[]string{"bench", "--rate", "100", "-n", "1000", url}, "--rate"},
		{[]string{"bench", "-H", "NoColon", url}, "-H"},
		{[]string{"bench", "--cpus", "x", url}, "--cpus"},
		{[]string{"bench", "-c", "1000000", url}, "ulimit -n"},
		{[]string{"bench", "http://10.1.2.3:80/"}, "--allow-remote"},
		{[]string{"bench", "ftp://127.0.0.1/"}, "scheme"},
		{[]string{"bench", "https://127.0.0.1/"}, "https"},
		{[]string{"bench", "http://example.com/"}, "IP address"},
		{[]string{"bench", "fcgi://127.0.0.1:9000/relative/../x.php"}, "absolute"},
		{[]string{"bench", "fcgi://unix:/nonexistent/dir/x.php"}, "socket"},
		{[]string{"bench", "--fcgi", url}, "--lab"},
		{[]string{"bench", "--fcgi-keep-conn", url}, "FastCGI"},
		{[]string{"bench", "--lab", "nosuchlab-xyz"}, "--lab"},
		{[]string{"bench", "--scenario", "/nonexistent", url}, "--scenario"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := Run(context.Background(), tc.args, &out, &errb)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d connections were made by refused command lines", n)
	}
}

func TestBenchJSONAndText(t *testing.T) {
	var hits atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "Hello, world!\n")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/index.php"

	var out, errb bytes.Buffer
	if err := Run(context.Background(), []string{"bench", "--json", "-c", "2", "-n", "500", url}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	var b results.Bench
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if b.Kind != results.KindBench || b.SchemaVersion != results.SchemaVersion || b.Requests != 500 || b.Errors != 0 || b.Protocol != "http" {
		t.Fatalf("%+v", b)
	}
	if errb.Len() != 0 {
		t.Fatalf("progress written to a non-terminal stderr: %q", errb.String())
	}
	out.Reset()
	if err := Run(context.Background(), []string{"bench", "-c", "2", "-d", "500ms", url}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Requests", "Latency ms", "p99", "requests per CPU-second", "200: "} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("text output lacks %q:\n%s", want, out.String())
		}
	}
}
