package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestBenchRefusesBadFlagsBeforeConnecting: every invalid command line is a
// usage error naming the flag, and no connection reaches the server.
func TestBenchRefusesBadFlagsBeforeConnecting(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
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
	garbage := filepath.Join(t.TempDir(), "garbage.log")
	if err := os.WriteFile(garbage, []byte("not\na log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--expect", "<title>(", url}, "--expect"},
		{[]string{"bench", "--workload-from-log", "/nonexistent.log", url}, "--workload-from-log"},
		{[]string{"bench", "--workload-from-log", garbage, url}, "none of its 2 lines"},
		{[]string{"bench", "--workload-from-log", garbage, "--scenario", garbage, url}, "give one of"},
		{[]string{"bench", "--workload-from-log", garbage, "-m", "POST", url}, "bring their own requests"},
		{[]string{"bench", "--workload", "mix", url}, "--workload goes with --lab"},
		{[]string{"bench", "--allow-post", url}, "--allow-post goes with"},
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
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	t.Chdir(t.TempDir()) // the HTML report goes to the working directory
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
	if strings.Contains(errb.String(), "\r") || strings.Contains(errb.String(), "req/s") {
		t.Fatalf("progress written to a non-terminal stderr: %q", errb.String())
	}
	if !strings.Contains(errb.String(), "stored as run "+b.ID) {
		t.Errorf("the run was not stored: %q", errb.String())
	}
	if _, err := os.Stat("phptune-report-" + b.ID + ".html"); err != nil {
		t.Errorf("no report written: %v", err)
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

// TestPrintBenchObserverSummary: the text output summarises the observation
// (CPU per request by component, worker PSS, warnings).
func TestPrintBenchObserverSummary(t *testing.T) {
	b := &results.Bench{Target: "http://127.0.0.1:1/", Requests: 100, DurationS: 1,
		Observation: &results.Observation{IntervalS: 1, Samples: make([]results.Sample, 3), Derived: results.Derived{
			CPUSecondsPerRequest: map[string]float64{"php-fpm workers": 0.002, "nginx workers": 0.0001, "generator": 0.00005, "stack": 0.0021},
			WorkerPSSP50B:        10 << 20, WorkerPSSP95B: 12 << 20, WorkerPSSMaxB: 13 << 20, OtherPSSB: 40 << 20, WorkerImbalance: 0.5,
			Warnings: []string{"CPU steal reached 30%"},
		}}}
	var out bytes.Buffer
	_ = report.BenchText(&out, b)
	for _, want := range []string{"Observer     3 samples every 1.0s", "php-fpm workers 2.000", "nginx workers 0.100", "generator 0.050", "stack 2.100",
		"p50 10.0 MiB, p95 12.0 MiB, max 13.0 MiB", "rest of the stack 40.0 MiB", "busiest worker 50%", "WARNING: CPU steal reached 30%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestBenchLabObserverFlags: bench --lab observes by default (text summary),
// not with --no-observe, and refuses a uselessly short interval.
func TestBenchLabObserverFlags(t *testing.T) {
	labtest.Home(t)
	t.Chdir(t.TempDir())
	if _, errs, code := runCLI(t, "lab", "up", "--name", "obsflags", "--app", "hello"); code != 0 {
		t.Fatalf("lab up: %s", errs)
	}
	defer lab.Down("obsflags")
	if _, errs, code := runCLI(t, "bench", "--lab", "obsflags", "--observe-interval", "10ms", "-d", "1s"); code != 2 || !strings.Contains(errs, "--observe-interval") {
		t.Errorf("--observe-interval 10ms: exit %d, %s", code, errs)
	}
	out, errs, code := runCLI(t, "bench", "--lab", "obsflags", "--no-save", "-c", "4", "-d", "2s", "--warmup", "1s", "--observe-interval", "500ms")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"Observer ", "CPU ms per request", "php-fpm workers ", "generator ", "Worker PSS   p50 ",
		"  Server logs  nginx ", ", php-fpm ", "  Log errors   "} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s were nginx") || strings.Contains(out, "(502)") {
		t.Errorf("a run that kept up has server errors:\n%s", out)
	}
	out, errs, code = runCLI(t, "bench", "--lab", "obsflags", "--no-save", "--no-observe", "-c", "2", "-d", "500ms", "--json")
	if code != 0 {
		t.Fatalf("bench --no-observe: exit %d\n%s", code, errs)
	}
	var b results.Bench
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Observation != nil || b.Requests == 0 {
		t.Errorf("--no-observe: %d requests, observation %+v", b.Requests, b.Observation)
	}
	// The servers' logs are read without the observer too.
	if b.ServerErrors == nil || len(b.ServerErrors.Logs) != 2 {
		t.Errorf("--no-observe: server errors %+v", b.ServerErrors)
	}

	// The page is shown before the load; --expect on the lab.
	out, errs, code = runCLI(t, "bench", "--lab", "obsflags", "--no-save", "--no-observe", "-c", "2", "-n", "200", "--expect", "Hello, w.rld")
	if code != 0 || !strings.Contains(errs, "bench: page http://") || !strings.Contains(errs, "/ answered 200, 14 bytes, no <title>") ||
		strings.Contains(out, "unexpected_body") {
		t.Errorf("bench --expect matching: exit %d\n%s\n%s", code, errs, out)
	}
	out, errs, code = runCLI(t, "bench", "--lab", "obsflags", "--no-save", "--no-observe", "--fcgi", "-c", "2", "-n", "200", "--expect", "Goodbye")
	if code != 0 || !strings.Contains(out, "Errors       unexpected_body 200") || !strings.Contains(out, `GET / answered 200 with a body starting "Hello, world!\n"`) {
		t.Errorf("bench --expect not matching, over FastCGI: exit %d\n%s\n%s", code, errs, out)
	}
}

// TestBenchWorkloadFromLogAndExpect: a log's dynamic paths are shown, then
// replayed in proportion; a page that does not match --expect is an
// unexpected_body error in the JSON.
func TestBenchWorkloadFromLogAndExpect(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	var front, setup, static atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.RequestURI() {
		case "/?p=1":
			front.Add(1)
			fmt.Fprint(w, "<title>My blog</title><p>Post</p>")
		case "/setup.php":
			setup.Add(1)
			fmt.Fprint(w, "<title>Setup error</title>")
		default:
			static.Add(1)
			w.WriteHeader(404)
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	line := func(method, target string, status int) string {
		return fmt.Sprintf("203.0.113.7 - - [12/Mar/2024:08:15:02 +0000] \"%s %s HTTP/1.1\" %d 512 \"-\" \"Mozilla/5.0\"\n", method, target, status)
	}
	log := strings.Repeat(line("GET", "/?p=1", 200), 3) + line("GET", "/setup.php", 200) + line("GET", "/style.css?ver=2", 200) +
		line("POST", "/wp-comments-post.php", 302) + "garbage\n"
	logFile := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(logFile, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "bench", "--no-save", "--json", "-c", "2", "-n", "800", "--workload-from-log", logFile, "--expect", "My blog",
		"http://"+ln.Addr().String()+"/")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{"workload from " + logFile + ": 7 lines, 4 requests to replay", "1 static files", "1 methods other than GET and HEAD (add --allow-post",
		"1 malformed lines (the first is line 7)", "the top 2 of 2 distinct paths cover 100.0%", "75.0%  GET    /?p=1"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	var b results.Bench
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if static.Load() != 0 || front.Load()+setup.Load() != 800 || setup.Load() < 120 || setup.Load() > 280 {
		t.Fatalf("server saw front %d setup %d static %d", front.Load(), setup.Load(), static.Load())
	}
	if b.ErrorsByClass["unexpected_body"] != setup.Load() || b.Errors != setup.Load() {
		t.Fatalf("errors %d %v, setup page served %d times", b.Errors, b.ErrorsByClass, setup.Load())
	}
}
