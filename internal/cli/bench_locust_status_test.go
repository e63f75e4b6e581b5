package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/traffic/locust"
)

// TestBenchLocustStatusCodes: bench --engine locust with two workers on a
// lab whose page answers 200, 404 or 500 as asked records the statuses
// nginx logged it sent (its access log), each 4xx and 5xx also in its
// error class.
func TestBenchLocustStatusCodes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a lab of its own needs root")
	}
	home := labtest.Home(t)
	t.Chdir(t.TempDir())
	if _, err := locust.Install(context.Background(), home, io.Discard); err != nil {
		t.Fatal(err)
	}
	app, err := os.MkdirTemp(labtest.TempParent(), "phptune-status-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(app)
	os.Chmod(app, 0o755)
	os.WriteFile(filepath.Join(app, "index.php"), []byte(`<?php $c = (int)($_GET['code'] ?? 200); if ($c < 200 || $c > 599) { $c = 200; } http_response_code($c); echo "<title>Status</title>$c";`), 0o644)
	// A relative name: a workload starting with / is a path to load.
	scenario := "status.scenario"
	os.WriteFile(scenario, []byte("8 GET /?code=200\n1 GET /?code=404\n1 GET /?code=500\n"), 0o644)
	if _, errs, code := runCLI(t, "lab", "up", "--name", "lstatus", "--docroot", app, "--set", "nginx.access_log=on"); code != 0 {
		t.Fatalf("lab up: %s", errs)
	}
	l, err := lab.Open("lstatus")
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(l.Dir, "log", "nginx-access.log")
	before, _ := os.ReadFile(logPath)
	out, errs, code := runCLI(t, "bench", "--lab", "lstatus", "--workload", scenario, "--engine", "locust", "--workers", "2",
		"-c", "4", "-d", "4s", "--no-save", "--no-observe", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, errs)
	}
	var b results.Bench
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]int64{}
	for _, line := range strings.Split(string(data[len(before):]), "\n") {
		// 127.0.0.1 - - [date] "GET /?code=404 HTTP/1.1" 404 ... "python/gevent-http-client-..."
		if !strings.Contains(line, "gevent-http-client") {
			continue
		}
		parts := strings.SplitN(line, `"`, 3)
		if len(parts) < 3 {
			continue
		}
		if f := strings.Fields(parts[2]); len(f) > 0 {
			logged[f[0]]++
		}
	}
	t.Logf("%d requests, %d errors; the record's status codes %v, classes %v; nginx logged %v", b.Requests, b.Errors, b.StatusCodes, b.ErrorsByClass, logged)
	var sum int64
	for _, code := range []string{"200", "404", "500"} {
		if b.StatusCodes[code] == 0 || b.StatusCodes[code] != logged[code] {
			t.Errorf("status %s: the record counts %d, nginx logged %d", code, b.StatusCodes[code], logged[code])
		}
		sum += b.StatusCodes[code]
	}
	if sum != b.Requests || len(b.StatusCodes) != 3 || b.StatusUnknown != 0 {
		t.Errorf("status codes %v (%d unknown) for %d requests", b.StatusCodes, b.StatusUnknown, b.Requests)
	}
	if b.ErrorsByClass["status_4xx"] != b.StatusCodes["404"] || b.ErrorsByClass["status_5xx"] != b.StatusCodes["500"] || b.Errors != b.StatusCodes["404"]+b.StatusCodes["500"] {
		t.Errorf("errors %d, classes %v, against statuses %v", b.Errors, b.ErrorsByClass, b.StatusCodes)
	}
}
