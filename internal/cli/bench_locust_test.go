package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/locust"
)

func TestEngineFlagsRefused(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "k6"}, `--engine "k6": want phptune or locust`},
		{[]string{"--workers", "2"}, "go with --engine locust"},
		{[]string{"--engine", "locust", "--expect-workers", "1"}, "--master-bind and --expect-workers go together"},
		{[]string{"--engine", "locust", "--master-bind", "127.0.0.1:5557"}, "--master-bind and --expect-workers go together"},
		{[]string{"--engine", "locust", "-n", "100"}, "give -d instead of -n"},
		{[]string{"--engine", "locust", "--rate", "10..20"}, "not a ramp or steps"},
		{[]string{"--engine", "locust", "--no-keepalive"}, "leave --no-keepalive out"},
	} {
		args := append([]string{"bench", "--no-save"}, c.args...)
		if !strings.Contains(strings.Join(c.args, " "), "fcgi") {
			args = append(args, "http://127.0.0.1:1/")
		}
		_, errs, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("bench %v: exit %d, want 2 and %q in:\n%s", c.args, code, c.want, errs)
		}
	}
	_, errs, code := runCLI(t, "bench", "--engine", "locust", "--no-save", "fcgi://127.0.0.1:9000/srv/index.php")
	if code != 2 || !strings.Contains(errs, "HTTP only") {
		t.Errorf("fcgi target: exit %d\n%s", code, errs)
	}
}

// TestBenchLocustIOLab is the bar on the io lab (a static pool of 8,
// 20 ms per request): Locust with two workers against phptune's generator,
// interleaved, 3 rounds each; Locust's count against php-fpm's accepted
// connections; no errors; a secret header in no file and no record; a
// master waiting for a worker that never comes; export locust's files
// run as written and import locust stores their statistics.
func TestBenchLocustIOLab(t *testing.T) {
	home := labtest.Home(t)
	t.Chdir(t.TempDir())
	if _, err := locust.Install(context.Background(), home, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runCLI(t, "lab", "up", "--name", "lio", "--app", "io", "--set", "pm=static", "--set", "pm.max_children=8"); code != 0 {
		t.Fatalf("lab up: %s", errs)
	}
	l, err := lab.Open("lio")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "topsecret-7c1e9"
	bench := func(engine string) results.Bench {
		args := []string{"bench", "--lab", "lio", "-c", "16", "-d", "6s", "--json", "--observe-interval", "500ms"}
		if engine == "locust" {
			args = append(args, "--engine", "locust", "--workers", "2", "-H", "X-Api-Key: "+secret)
		}
		out, errs, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("bench %s: exit %d\n%s", engine, code, errs)
		}
		if strings.Contains(out+errs, secret) {
			t.Errorf("bench %s printed the secret header", engine)
		}
		var b results.Bench
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	var own, loc []float64
	var lastOwn results.Bench
	for round := 0; round < 3; round++ {
		b := bench("phptune")
		own = append(own, b.ThroughputRPS)
		lastOwn = b
		c := bench("locust")
		// Every response counted by status, as phptune's generator counts.
		if c.StatusCodes["200"] != c.Requests || len(c.StatusCodes) != 1 || c.StatusUnknown != 0 {
			t.Errorf("round %d: Locust's status codes %v (%d unknown) for %d requests", round+1, c.StatusCodes, c.StatusUnknown, c.Requests)
		}
		loc = append(loc, c.ThroughputRPS)
		if c.Engine != "locust" || c.EngineVersion != locust.PinnedVersion() || c.Workers != 2 || len(c.WorkerCPUSeconds) != 2 || !c.LatencyRounded {
			t.Errorf("record: engine %q %q workers %d CPU %v rounded %v", c.Engine, c.EngineVersion, c.Workers, c.WorkerCPUSeconds, c.LatencyRounded)
		}
		if c.Errors != 0 {
			t.Errorf("round %d: Locust errors %v", round+1, c.ErrorsByClass)
		}
		// php-fpm's accepted connections over the observed span: Locust's
		// requests plus one per status read of the observer.
		if o := c.Observation; o == nil || len(o.Samples) < 2 || len(o.Samples[0].FPM) == 0 {
			t.Errorf("round %d: no php-fpm samples", round+1)
		} else {
			first, last := o.Samples[0].FPM[0].AcceptedConn, o.Samples[len(o.Samples)-1].FPM[0].AcceptedConn
			delta := last - first - int64(len(o.Samples)-1)
			if d := float64(delta-c.Requests) / float64(c.Requests); d > 0.01 || d < -0.01 {
				t.Errorf("round %d: Locust counted %d requests, php-fpm accepted %d (%.2f%%)", round+1, c.Requests, delta, 100*d)
			}
			t.Logf("round %d: phptune %.1f req/s, Locust %.1f req/s (%d requests, php-fpm accepted %d); Locust workers' CPU %v s, %.0f req per CPU-s",
				round+1, b.ThroughputRPS, c.ThroughputRPS, c.Requests, delta, c.WorkerCPUSeconds, c.Generator.RequestsPerCPUSecond)
		}
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	if r := mean(loc) / mean(own); r < 0.9 || r > 1.1 {
		t.Errorf("Locust %.1f req/s against phptune's %.1f (ratio %.3f), want within 10%%", mean(loc), mean(own), r)
	}
	t.Logf("throughput: phptune %v mean %.1f; Locust --workers 2 %v mean %.1f", own, mean(own), loc, mean(loc))

	// No file of phptune's home (results database, reports, labs) holds
	// the secret, and neither does the working directory (reports).
	wd, _ := os.Getwd()
	for _, dir := range []string{home, wd} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || strings.Contains(p, "/locust/venv/") {
				return nil
			}
			if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds the secret header's value", p)
			}
			return nil
		})
	}

	// A master waiting for a worker that never comes.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	_, errs, code := runCLI(t, "bench", "--lab", "lio", "--no-save", "--engine", "locust", "-c", "2", "-d", "2s",
		"--master-bind", "127.0.0.1:"+strconv.Itoa(port), "--expect-workers", "1", "--worker-wait", "3s")
	if code != 1 || !strings.Contains(errs, "did not all join the master") || !strings.Contains(errs, "locust -f - --worker --master-host 127.0.0.1") {
		t.Errorf("no worker: exit %d\n%s", code, errs)
	}

	// export locust: the files run as written; import locust reads them.
	exported := filepath.Join(home, "exported")
	if out, errs, code := runCLI(t, "export", "locust", exported, "--lab", "lio", "-c", "4", "-H", "X-Api-Key: "+secret); code != 0 {
		t.Fatalf("export locust: exit %d\n%s%s", code, out, errs)
	}
	for _, name := range []string{"locustfile.py", "README.md", "kubernetes.yaml", "compose.yaml"} {
		data, err := os.ReadFile(filepath.Join(exported, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("exported %s holds the secret", name)
		}
	}
	if py, err := exec.Command(locust.Python, "-c", `import yaml, sys
print(" ".join(d["kind"] for d in yaml.safe_load_all(open(sys.argv[1]))))
print(" ".join(sorted(yaml.safe_load(open(sys.argv[2]))["services"])))`, filepath.Join(exported, "kubernetes.yaml"), filepath.Join(exported, "compose.yaml")).CombinedOutput(); err != nil {
		t.Errorf("YAML: %v\n%s", err, py)
	} else if string(py) != "ConfigMap Deployment Service Deployment\nmaster worker\n" {
		t.Errorf("YAML kinds and services:\n%s", py)
	}
	// Run it as the lab's account (it reads the exported directory).
	stats, err := os.Create("stats.json")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(locust.Bin(home), "-f", filepath.Join(exported, "locustfile.py"), "--headless", "-u", "4", "-t", "5s", "--host", l.URL, "--json", "--only-summary")
	cmd.Dir = os.TempDir()
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "PYTHONDONTWRITEBYTECODE=1", "PHPTUNE_SECRET_1=" + secret}
	cmd.Stdout = stats
	var lerr bytes.Buffer
	cmd.Stderr = &lerr
	if os.Geteuid() == 0 {
		u, err := user.Lookup(lab.StackUser)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the exported locustfile: %v\n%s", err, lerr.String())
	}
	stats.Close()
	out, errs, code := runCLI(t, "import", "locust", "stats.json", "--target", l.URL+"/", "--users", "4", "--json")
	if code != 0 {
		t.Fatalf("import locust: exit %d\n%s", code, errs)
	}
	var imp results.Bench
	if err := json.Unmarshal([]byte(out), &imp); err != nil {
		t.Fatal(err)
	}
	if imp.Requests < 50 || imp.Errors != 0 || imp.Engine != "locust" || !strings.Contains(errs, "import: stored as run bench-") {
		t.Errorf("imported: %d requests, %d errors, engine %q\n%s", imp.Requests, imp.Errors, imp.Engine, errs)
	}
	if out, errs, code := runCLI(t, "report", imp.ID, "--format", "json"); code != 0 || !strings.Contains(out, `"engine": "locust"`) {
		t.Errorf("report of the imported run: exit %d\n%.400s\n%s", code, out, errs)
	}
	// Locust's --json has no status: the record says so.
	if imp.StatusUnknown != imp.Requests || !strings.Contains(strings.Join(imp.Warnings, "\n"), "status codes are not known") {
		t.Errorf("imported: %d of %d requests' status unknown, warnings %q", imp.StatusUnknown, imp.Requests, imp.Warnings)
	}
	// compare --runs: phptune's own run against the imported one, side
	// by side, nothing started.
	out, errs, code = runCLI(t, "compare", "--runs", lastOwn.ID, imp.ID)
	if code != 0 || !strings.Contains(out, lastOwn.ID) || !strings.Contains(out, imp.ID) || !strings.Contains(out, "locust") || !strings.Contains(out, "±") {
		t.Errorf("compare --runs: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("compare --runs:\n%s", out)
}

// TestBenchLocustMixWeights: the WordPress mix workload through Locust
// (master and two workers) reproduces its weights within 3 points over at
// least 2,000 requests, counted server-side from nginx's access log, and
// Locust counts every request the server logged.
func TestBenchLocustMixWeights(t *testing.T) {
	home := labtest.Home(t)
	t.Chdir(t.TempDir())
	if _, err := locust.Install(context.Background(), home, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runCLI(t, "lab", "up", "--name", "lmix", "--app", "wordpress", "--set", "nginx.access_log=on"); code != 0 {
		t.Fatalf("lab up: %s", errs)
	}
	l, err := lab.Open("lmix")
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(context.Background(), l, "mix")
	if err != nil {
		t.Fatal(err)
	}
	want, weights := map[string]float64{}, 0
	for _, r := range w.Requests {
		weights += r.Weight
	}
	for _, r := range w.Requests {
		want[r.Method+" "+r.Path] += 100 * float64(r.Weight) / float64(weights)
	}
	logPath := filepath.Join(l.Dir, "log", "nginx-access.log")
	before, _ := os.ReadFile(logPath)
	var counted int64
	for round := 0; round < 6; round++ {
		out, errs, code := runCLI(t, "bench", "--lab", "lmix", "--workload", "mix", "--engine", "locust", "--workers", "2",
			"-c", "16", "-d", "40s", "--no-save", "--no-observe", "--json")
		if code != 0 {
			t.Fatalf("bench: exit %d\n%s", code, errs)
		}
		var b results.Bench
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatal(err)
		}
		if b.Errors != 0 {
			t.Errorf("errors %v", b.ErrorsByClass)
		}
		counted += b.Requests
		if counted >= 2000 {
			break
		}
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	got, total := map[string]float64{}, 0.0
	for _, line := range strings.Split(string(data[len(before):]), "\n") {
		// 127.0.0.1 - - [date] "GET /path HTTP/1.1" 200 ... "python/gevent-http-client-..."
		if !strings.Contains(line, "gevent-http-client") {
			continue
		}
		_, req, ok := strings.Cut(line, `"`)
		if !ok {
			continue
		}
		f := strings.Fields(req)
		if len(f) < 2 {
			continue
		}
		got[f[0]+" "+f[1]]++
		total++
	}
	if total < 2000 || int64(total) != counted {
		t.Fatalf("nginx logged %.0f of Locust's requests, Locust counted %d (want at least 2000, equal)", total, counted)
	}
	t.Logf("nginx logged %.0f requests from Locust, Locust counted %d", total, counted)
	for k, share := range want {
		g := 100 * got[k] / total
		t.Logf("%-70s want %5.1f%% got %5.1f%%", k, share, g)
		if g < share-3 || g > share+3 {
			t.Errorf("%s: %.1f%% of %.0f requests, want %.1f±3", k, g, total, share)
		}
	}
}

// TestParseEngine: every engine's name parses to the engine that prints
// it back, and any other name is refused with the list of engines.
func TestParseEngine(t *testing.T) {
	for _, e := range []engine{engineOwn, engineLocust} {
		if got, err := parseEngine(e.String()); err != nil || got != e {
			t.Errorf("parseEngine(%q) = %v, %v", e, got, err)
		}
	}
	for _, name := range []string{"", "k6", "Locust", "phptune "} {
		if _, err := parseEngine(name); err == nil || !strings.Contains(err.Error(), "want phptune or locust") {
			t.Errorf("parseEngine(%q): %v, want the list of engines", name, err)
		}
	}
}
