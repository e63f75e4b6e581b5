package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

func TestTuneRefusesBadInputBeforeStarting(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"tune"}, "give exactly one of --lab, --app, --docroot and --site"},
		{[]string{"tune", "--app", "hello", "--lab", "x"}, "give exactly one"},
		{[]string{"tune", "--app", "nope"}, `--app "nope" is not a built-in app`},
		{[]string{"tune", "--app", "hello", "--set", "pm=fast"}, `knob pm: value "fast"`},
		{[]string{"tune", "--app", "hello", "--set", "pm.max_children=2"}, "max_spare_servers <= max_children"},
		{[]string{"tune", "--app", "hello", "--slo", "p50<3ms"}, "--slo"},
		{[]string{"tune", "--app", "hello", "--max-errors", "150%"}, "--max-errors"},
		{[]string{"tune", "--app", "hello", "--memory-budget", "lots"}, "--memory-budget"},
		{[]string{"tune", "--app", "hello", "--objective", "fast"}, "--objective"},
		{[]string{"tune", "--app", "hello", "--objective", "capacity", "--slo", "p99<500"}, `--slo "p99<500": "p99<500": duration "500" has no unit`},
		{[]string{"tune", "--app", "hello", "--objective", "capacity", "--slo", "p97<1s"}, "choose p50, p90, p95, p99 or p99.9"},
		{[]string{"tune", "--app", "hello", "--objective", "capacity", "--slo", "p99<1s,errors<1%", "--max-errors", "0"}, "both limit the errors"},
		{[]string{"tune", "--app", "hello", "--workload", "comment"}, "--workload comment"},
		{[]string{"tune", "--app", "hello", "-c", "0"}, "--connections"},
		{[]string{"tune", "--app", "hello", "--trial-duration", "10ms"}, "--trial-duration"},
		{[]string{"tune", "--app", "hello", "--holdout-rounds", "1"}, "--holdout-rounds"},
		{[]string{"tune", "--app", "hello", "--time-budget", "1m"}, "--time-budget 1m0s is too small to search: the least tune (1 drift, 1 search and 4 holdout trials) takes 6 trials of about 15s each, 1m30s"},
		{[]string{"tune", "--app", "hello", "--search-trials", "-1"}, "--search-trials -1: give a positive number"},
		{[]string{"tune", "--app", "hello", "--search-trials", "14", "--strategy", "grid"}, "not with --strategy grid"},
		{[]string{"tune", "--resume", "x", "--app", "hello"}, "--resume continues a run"},
		{[]string{"tune", "--app", "hello", "--challenges", "pm=fast"}, `--challenges: challenge "pm=fast": "pm=fast"`},
		{[]string{"tune", "--app", "hello", "--challenges", "opcache.jit=tracing;opcache.jit_buffer_size=lots"}, `"opcache.jit_buffer_size=lots"`},
		{[]string{"tune", "--app", "hello", "--challenges", "nope"}, `--challenges: unknown challenge "nope"`},
		{[]string{"tune", "--app", "hello", "--baselines", "folklore"}, `--baselines: unknown baseline "folklore"`},
		{[]string{"tune", "--app", "hello", "--curve", "5,lots"}, `--curve: "lots" is not a number of connections`},
		{[]string{"tune", "--app", "hello", "--server", "iis"}, `knob server: value "iis"`},
		{[]string{"tune", "--lab", "x", "--server", "apache-event-fpm"}, "--server picks the web server of a lab of its own"},
		{[]string{"tune", "--app", "hello", "--server", "apache-prefork-modphp", "--set", "pm=static"}, "belongs to server"},
		{[]string{"tune", "--app", "hello", "--engine", "locust", "--workers", "1"}, "--engine locust: tune cannot run its trials on Locust"},
		{[]string{"tune", "--app", "hello", "--engine", "locust"}, "phptune compare --app APP --engine locust"},
		{[]string{"tune", "--app", "hello", "--workers", "1"}, "--workers, --master-bind and --expect-workers go with --engine locust"},
		{[]string{"tune", "--app", "hello", "--engine", "k6"}, `--engine "k6": want phptune or locust`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			_, errs, code := runCLI(t, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (usage); stderr: %s", code, errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, errs)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "labs")); len(entries) != 0 {
		t.Errorf("refused tunes left labs behind: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(home, "results.db")); err == nil {
		t.Errorf("a refused tune created the results database")
	}
}

// TestTuneHelloEndToEnd runs a small real tune of the hello app: it is
// interrupted part-way (as Ctrl-C would), leaves nothing running, resumes
// from the stored trials, and writes a recommendation that lab up accepts.
func TestTuneHelloEndToEnd(t *testing.T) {
	home := labtest.Home(t)
	out := filepath.Join(home, "out")
	// The workload carries a secret in its query: it is loaded, never
	// stored, and --resume asks for it again.
	workload := "/index.php?session=Zt-sess-1"
	args := []string{"tune", "--app", "hello", "-c", "8", "--time-budget", "40s", "--workload", workload, "--redact", "X-Tenant",
		"--trial-duration", "1s", "--trial-warmup", "500ms", "--holdout-rounds", "2", "--curve", "4,16", "-o", out}

	// Interrupted after a few trials.
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	progress := &lockedWriter{}
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && strings.Count(progress.String(), "trial ") < 3 {
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
	}()
	err := Run(ctx, args, &stdout, progress)
	var ie *tune.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("interrupted tune returned %v, want an InterruptedError; stderr:\n%s", err, progress.String())
	}
	if !strings.Contains(err.Error(), "phptune tune --resume "+ie.RunID) {
		t.Errorf("the error does not say how to resume: %v", err)
	}
	if !strings.Contains(err.Error(), "--workload") {
		t.Errorf("the error does not say that --resume needs the workload again: %v", err)
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Fatalf("the interrupted tune left labs running: %+v", hs)
	}
	db, err := store.Open(context.Background(), filepath.Join(home, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	done, _ := db.Trials(context.Background(), ie.RunID)
	db.Close()
	if len(done) == 0 {
		t.Fatalf("no trial was stored before the interruption")
	}

	// Resumed to the end, once the workload is given again.
	if _, errs, code := runCLI(t, "tune", "--resume", ie.RunID, "-o", out); code != 2 || !strings.Contains(errs, "give the workload again with --workload") {
		t.Errorf("resume without the redacted workload: exit %d\n%s", code, errs)
	}
	// Only the shape can be checked: the secret itself was never stored.
	if _, errs, code := runCLI(t, "tune", "--resume", ie.RunID, "--workload", "/other.php?session=Zt-sess-1", "-o", out); code != 2 || !strings.Contains(errs, "which this one is not") {
		t.Errorf("resume with another workload: exit %d\n%s", code, errs)
	}
	stdout.Reset()
	stderr.Reset()
	// Without -o: the files go where the first session was writing them.
	if err := Run(context.Background(), []string{"tune", "--resume", ie.RunID, "--workload", workload}, &stdout, &stderr); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "(stored)"); n < len(done) {
		t.Errorf("resume re-measured stored trials: %d reused, %d were stored\n%s", n, len(done), stderr.String())
	}
	for _, want := range []string{"holdout", "throughput rps", "latency p99 ms", "verdict:", "files in " + out} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, f := range []string{"recommended.knobs", "php-fpm-pool.conf", "php.ini", "nginx.conf", "result.json", "summary.txt", "evidence.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing output file: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "my.cnf")); err == nil {
		t.Errorf("my.cnf written for hello, which has no database")
	}
	var res results.Tune
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Holdout == nil || res.Holdout.Rounds < 1 || res.Holdout.StartRPS <= 0 {
		t.Errorf("no holdout in the result: %+v", res.Holdout)
	}
	// The curve: start and recommended at 4 and 16 connections, or the
	// warning that the time budget left them out.
	curve := map[int]int{}
	for _, tr := range res.Trials {
		if tr.Phase == tune.PhaseCurve {
			curve[tr.Connections]++
		}
	}
	if len(curve) == 0 && !strings.Contains(strings.Join(res.Warnings, "\n"), "curve trials") {
		t.Errorf("neither curve trials nor a warning about them: %q", res.Warnings)
	}
	for n := range curve {
		if n != 4 && n != 16 {
			t.Errorf("curve trial at %d connections, asked for 4 and 16", n)
		}
	}
	t.Logf("curve trials by connections: %v", curve)
	observed := 0
	for _, tr := range res.Trials {
		if tr.Bench != nil && tr.Bench.Observation != nil && len(tr.Bench.Observation.Samples) > 0 {
			observed++
		}
	}
	if observed == 0 {
		t.Errorf("no trial carries observer samples")
	}
	if res.Environment == nil || res.Environment.Versions["php"] == "" {
		t.Errorf("environment missing: %+v", res.Environment)
	}
	// The workload's secret is in no file and not in the database.
	if res.Workload != "/index.php?session=<redacted>" || !strings.Contains(res.Command, "session=<redacted>") {
		t.Errorf("result: workload %q, command %q", res.Workload, res.Command)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	files = append(files, filepath.Join(home, "results.db"), filepath.Join(home, "results.db-wal"))
	for _, f := range files {
		if data, _ := os.ReadFile(f); bytes.Contains(data, []byte("Zt-sess-1")) {
			t.Errorf("%s holds the workload's secret", f)
		}
	}
	if strings.Contains(stdout.String(), "Zt-sess-1") {
		t.Errorf("the summary shows the workload's secret")
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Fatalf("the tune left labs running: %+v", hs)
	}

	// The knob file brings up the recommended stack.
	if _, errs, code := runCLI(t, "lab", "up", "--name", "rec", "--app", "hello", "--knobs", filepath.Join(out, "recommended.knobs")); code != 0 {
		t.Fatalf("lab up --knobs recommended.knobs: exit %d\n%s", code, errs)
	}
	l, err := lab.Open("rec")
	if err != nil {
		t.Fatal(err)
	}
	if diff := knob.Diff(l.Config, knob.Config(res.Recommended)); len(diff) != 0 {
		t.Errorf("lab up --knobs runs %v, not the recommendation", diff)
	}
	if err := lab.Down("rec"); err != nil {
		t.Fatal(err)
	}
}

// lockedWriter is a buffer safe to read while the command writes to it.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestCompare(t *testing.T) {
	home := labtest.Home(t)
	for _, bad := range [][]string{
		{"compare"},
		{"compare", "--app", "nope", "default"},
		{"compare", "--rounds", "0", "default"},
		{"compare", "/nonexistent.knobs"},
		{"compare", "--workload", "comment", "default"},
	} {
		if _, errs, code := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", bad, code, errs)
		}
	}
	knobs := filepath.Join(home, "static4.knobs")
	if err := os.WriteFile(knobs, []byte("pm=static\npm.max_children=4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "compare", "--app", "hello", "-c", "4", "-d", "1s", "--warmup", "200ms", "--rounds", "2", "--json",
		"--workload", "/index.php?session=Zc-sess-1", "default", "s4="+knobs)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, errs)
	}
	if strings.Contains(out, "Zc-sess-1") {
		t.Errorf("compare --json shows the workload's secret:\n%s", out)
	}
	var res results.Compare
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out)
	}
	if res.Workload != "/index.php?session=<redacted>" {
		t.Errorf("compare --json: workload %q", res.Workload)
	}
	if len(res.Summary) != 2 || res.Summary[1].Label != "s4" || res.Summary[1].MedianRPS <= 0 || res.Summary[0].RatioRPS != 1 {
		t.Errorf("summary: %+v", res.Summary)
	}
	if len(res.Configs[1].RPS) != 2 || res.Configs[1].Config["pm"] != "static" {
		t.Errorf("config s4 measured %d rounds with pm=%s", len(res.Configs[1].RPS), res.Configs[1].Config["pm"])
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Errorf("compare left labs running: %+v", hs)
	}
}

// TestBenchLabObservedStoredReported: bench --lab carries the observer's
// samples, is stored, and report renders it again.
func TestBenchLabObservedStoredReported(t *testing.T) {
	labtest.Home(t)
	t.Chdir(t.TempDir())
	if _, errs, code := runCLI(t, "lab", "up", "--name", "obs", "--app", "hello", "--set", "pm=static", "--set", "pm.max_children=2"); code != 0 {
		t.Fatalf("lab up: %s", errs)
	}
	defer lab.Down("obs")
	out, errs, code := runCLI(t, "bench", "--lab", "obs", "-c", "6", "-d", "2s", "--warmup", "500ms", "--observe-interval", "500ms", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, errs)
	}
	var b results.Bench
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	o := b.Observation
	if o == nil || len(o.Samples) < 3 {
		t.Fatalf("bench --lab carries no observation: %+v", o)
	}
	groups := map[string]bool{}
	for _, g := range o.Samples[len(o.Samples)-1].Groups {
		groups[g.Name] = true
	}
	for _, g := range []string{"nginx workers", "php-fpm workers", "php-fpm master", "generator"} {
		if !groups[g] {
			t.Errorf("no %q group in the samples: %v", g, groups)
		}
	}
	if o.Derived.CPUSecondsPerRequest["php-fpm workers"] <= 0 || o.Derived.WorkerPSSP95B <= 0 {
		t.Errorf("derived figures missing: %+v", o.Derived)
	}
	if b.Environment == nil || b.Environment.Versions["nginx"] == "" {
		t.Errorf("no environment: %+v", b.Environment)
	}
	if !strings.Contains(errs, "stored as run "+b.ID) {
		t.Fatalf("not stored: %s", errs)
	}
	list, _, _ := runCLI(t, "report", "--list")
	if !strings.Contains(list, b.ID) {
		t.Errorf("report --list lacks %s:\n%s", b.ID, list)
	}
	text, errs, code := runCLI(t, "report", b.ID, "--format", "text")
	if code != 0 || !strings.Contains(text, "Throughput") || !strings.Contains(text, "Worker PSS") {
		t.Errorf("report --format text: exit %d\n%s\n%s", code, text, errs)
	}
	if _, errs, code := runCLI(t, "report", "nope"); code != 2 || !strings.Contains(errs, "phptune report --list") {
		t.Errorf("unknown run: exit %d, %s", code, errs)
	}
	htmlPath, errs, code := runCLI(t, "report", "latest", "-o", "again.html")
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(htmlPath), "again.html") {
		t.Errorf("report latest -o: exit %d %q %s", code, htmlPath, errs)
	}
}

// TestTuneDocRootAsTheAppsAccount tunes an app whose data directory belongs
// to www-data (as Debian's packaged apps keep theirs) with --user www-data,
// end to end: the lab runs as that account, every trial answers, and the
// holdout is measured.
func TestTuneDocRootAsTheAppsAccount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--user needs root")
	}
	u, err := user.Lookup("www-data")
	if err != nil {
		t.Skip("no www-data account")
	}
	home := labtest.Home(t)
	app, err := os.MkdirTemp("", "phptune-app-") // outside phptune's private home
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(app)
	os.Chmod(app, 0o755)
	os.MkdirAll(filepath.Join(app, "data"), 0o755)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	os.Chown(filepath.Join(app, "data"), uid, gid)
	os.Chmod(filepath.Join(app, "data"), 0o700)
	os.WriteFile(filepath.Join(app, "index.php"), []byte(`<?php
if (@file_put_contents(__DIR__ . '/data/hits', "x", FILE_APPEND) === false) { http_response_code(500); exit("cannot write data/"); }
echo "<title>Counter</title>ok";`), 0o644)
	out := filepath.Join(home, "out")
	stdout, stderr, code := runCLI(t, "tune", "--docroot", app, "--user", "www-data", "--expect", "ok", "-c", "4", "--time-budget", "40s",
		"--trial-duration", "1s", "--trial-warmup", "300ms", "--holdout-rounds", "2", "--curve", "none", "--baselines", "none", "--profile", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `title "Counter"`) {
		t.Errorf("the page check was not printed:\n%s", stderr)
	}
	// --profile: one round of phptune profile on the start, as the app's
	// account, before the search; its files beside the tune's.
	if !strings.Contains(stderr, "profiling the starting configuration") {
		t.Errorf("--profile did not profile:\n%s", stderr)
	}
	for _, f := range []string{"profile.json", "profile.html"} {
		if _, err := os.Stat(filepath.Join(out, "profile", f)); err != nil {
			t.Errorf("--profile: %v", err)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Tune
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Holdout == nil || res.Holdout.Rounds < 1 {
		t.Fatalf("no holdout: %+v", res.Holdout)
	}
	for _, tr := range res.Trials {
		if tr.Bench != nil && tr.Bench.Errors > 0 {
			t.Errorf("trial %d had %d errors %v: the app could not write its data as www-data", tr.N, tr.Bench.Errors, tr.Bench.ErrorsByClass)
		}
	}
	if st, err := os.Stat(filepath.Join(app, "data", "hits")); err != nil || st.Sys().(*syscall.Stat_t).Uid != uint32(uid) {
		t.Errorf("the app's data was not written by www-data: %v", err)
	}
}

// TestTuneRefusesARedirectingSite: a site whose every page is a 301 to its
// real URL is not tuned (exit 2, the Location and the fixes named), and a
// bench of it counts every response as a redirect error.
func TestTuneRefusesARedirectingSite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a lab of its own needs root")
	}
	home := labtest.Home(t)
	app, err := os.MkdirTemp("", "phptune-redirect-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(app)
	os.Chmod(app, 0o755)
	// The site answers its page only to its own name, as WordPress does
	// for its home URL's host.
	os.WriteFile(filepath.Join(app, "index.php"), []byte(`<?php if (parse_url('http://' . ($_SERVER['HTTP_HOST'] ?? ''), PHP_URL_HOST) !== 'site.test') { header("Location: http://site.test/", true, 301); exit; } echo "<title>Site</title>";`), 0o644)
	args := []string{"tune", "--docroot", app, "-c", "2", "--time-budget", "40s",
		"--trial-duration", "1s", "--trial-warmup", "300ms", "--holdout-rounds", "2", "--curve", "none", "--baselines", "none", "-o", filepath.Join(home, "out")}
	stdout, stderr, code := runCLI(t, args...)
	if code != 2 || !strings.Contains(stderr, `answered 301 to "http://site.test/"`) || !strings.Contains(stderr, "a redirect, not the page") ||
		!strings.Contains(stderr, "load a path that answers 200") || !strings.Contains(stderr, "--host NAME") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// With the site's name as the Host header the page is the site's, and
	// the tune runs.
	args = append(args[:len(args)-1], filepath.Join(home, "out2"), "--host", "site.test")
	stdout, stderr, code = runCLI(t, args...)
	if code != 0 || !strings.Contains(stderr, `title "Site"`) {
		t.Fatalf("with --host: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A Host that would end the header line is refused before anything starts.
	if _, stderr, code := runCLI(t, "tune", "--docroot", app, "--host", "site.test\r\nX: 1"); code != 2 || !strings.Contains(stderr, "--host") {
		t.Errorf("a bad --host: exit %d\n%s", code, stderr)
	}
}
