package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/recommend"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestServersRefusesBadInputBeforeStarting: every bad flag, unknown or
// missing server and bad added configuration is a usage error naming what
// is wrong and what to do, found before a lab, a database row or an output
// directory exists.
func TestServersRefusesBadInputBeforeStarting(t *testing.T) {
	home := t.TempDir() // no Unit build in it
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, dir, map[string]string{
		"fpm10.knobs":  "server=nginx-fpm\npm=static\npm.max_children=10\n",
		"bad.knobs":    "pm.max_children=lots\n",
		"unit20.knobs": "server=unit\nunit.processes=20\n",
		"a-file":       "not a directory\n",
	})
	quick := []string{"--servers", "nginx-fpm", "--time-budget", "10m"}
	cases := []usageCase{
		{[]string{"servers", "--servers", "nginx-fpm,lighttpd-php"}, `unknown server "lighttpd-php"`, "choose from " + strings.Join(knob.Servers, ", ")},
		{[]string{"servers", "--servers", "nginx-fpm,nginx-fpm"}, "named twice", "Try: --servers"},
		{[]string{"servers", "--servers", ","}, "no server named", "Try: --servers"},
		{append([]string{"servers", "--app", "nosuch"}, quick...), `--app "nosuch"`, "Choose one of"},
		{append([]string{"servers", "--app", "hello", "--workload", "comment"}, quick...), "--workload comment", "--app wordpress"},
		{append([]string{"servers", "-c", "0"}, quick...), "--connections 0", "Try: -c 10"},
		{append([]string{"servers", "--rounds", "1"}, quick...), "--rounds 1", "Try: --rounds 4"},
		{append([]string{"servers", "-d", "0s"}, quick...), "-d and --trial-duration", "Try: -d 10s"},
		{append([]string{"servers", "--trial-warmup", "-1s"}, quick...), "not negative", "Try:"},
		{[]string{"servers", "--servers", "nginx-fpm", "--time-budget", "0s"}, "--time-budget must be positive", "Try: --time-budget 60m"},
		{[]string{"servers", "--servers", "nginx-fpm", "--time-budget", "2m"}, "--time-budget 2m0s is too short for 1 server:", "Try: --time-budget 5m0s"},
		{append([]string{"servers", "--max-errors", "lots"}, quick...), "--max-errors", "Try: --max-errors 0.1%"},
		{append([]string{"servers", "--memory-budget", "tiny"}, quick...), "--memory-budget", "Try: --memory-budget 2G"},
		{append([]string{"servers", "--expect", "("}, quick...), "--expect", "Try: --expect"},
		{append([]string{"servers", "--add", "fpm10.knobs"}, quick...), "write LABEL=FILE", "Try: --add unit-20=unit20.knobs"},
		{append([]string{"servers", "--add", "x=missing.knobs"}, quick...), "--add x", "Give a knob file"},
		{append([]string{"servers", "--add", "x=bad.knobs"}, quick...), "pm.max_children", "phptune knobs"},
		{append([]string{"servers", "--add", "nginx-fpm tuned=fpm10.knobs"}, quick...), `the label "nginx-fpm tuned" is already taken`, "Try: --add another-name="},
		{append([]string{"servers", "--add", "a=fpm10.knobs", "--add", "a=fpm10.knobs"}, quick...), `the label "a" is already taken`, "Try:"},
		{append([]string{"servers", "-o", "a-file"}, quick...), "-o a-file exists and is not a directory", "Try: -o DIR"},
		{[]string{"servers", "--servers", "nginx-fpm", "extra"}, "unknown command", "Try:"},
	}
	if err := lab.CheckServer(knob.UnitPHP); err != nil {
		// A server that cannot run here is refused, never dropped, with
		// how to get it; an added configuration of it too.
		cases = append(cases,
			usageCase{[]string{"servers", "--servers", "nginx-fpm,unit"}, "unit: server=unit: no unitd on PATH", "phptune build unit --source"},
			usageCase{append([]string{"servers", "--add", "u=unit20.knobs"}, quick...), "--add u runs server=unit, which cannot run here", "leave out this --add"})
	}
	if err := lab.CheckServer(knob.ApacheEventFPM); err != nil {
		cases = append(cases, usageCase{[]string{"servers", "--servers", "apache-event-fpm"}, "apt-get install apache2-bin", "phptune setup"})
	}
	checkUsageErrors(t, cases)
	checkNothingCreated(t, home, dir, "fpm10.knobs", "bad.knobs", "unit20.knobs", "a-file")
}

// TestServersHello runs phptune servers for real on the hello app with two
// servers and a tiny budget: both tuned, then tuned and default of each
// measured in two interleaved rounds; the table, the report, each
// server's files in its own syntax, the results database, no lab left.
func TestServersHello(t *testing.T) {
	home := labtest.Home(t)
	if _, err := apache.FindModPHP(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	out := filepath.Join(home, "out")
	two := []string{knob.NginxFPM, knob.ApachePreforkModPHP}
	start := time.Now()
	stdout, stderr, code := runCLI(t, "servers", "--app", "hello", "--servers", strings.Join(two, ","), "-c", "4", "--time-budget", "110s",
		"--rounds", "2", "-d", "1s", "--warmup", "200ms", "--trial-duration", "1s", "--trial-warmup", "200ms", "-o", out)
	t.Logf("phptune servers took %s", time.Since(start).Round(time.Second))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"throughput rps (95% CI)", "vs best", "CPU ms/req web+PHP+DB = stack", "PSS/worker", "busiest worker", "tuned vs default", "report: " + filepath.Join(out, "report.html")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "round 2/2") || !strings.Contains(stderr, "servers: tune nginx-fpm [") {
		t.Errorf("progress:\n%s", stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Servers
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindServers || res.RoundsRun != 2 || res.Interrupted || res.Best == "" || len(res.Servers) != 2 {
		t.Fatalf("result: kind %q, rounds %d, interrupted %v, best %q, %d servers", res.Kind, res.RoundsRun, res.Interrupted, res.Best, len(res.Servers))
	}
	measured := 0
	for _, c := range res.Configs {
		if c.Failed != "" || c.Rounds != 2 {
			t.Errorf("%s: failed %q, %d rounds", c.Label, c.Failed, c.Rounds)
			continue
		}
		measured++
		if c.Throughput.Value <= 0 || c.Throughput.High <= c.Throughput.Low || c.P99Ms.Value <= 0 {
			t.Errorf("%s: throughput %+v, p99 %+v", c.Label, c.Throughput, c.P99Ms)
		}
		if c.CPUPHPMs <= 0 || c.CPUStackMs < c.CPUPHPMs || c.Workers < 1 || c.WorkerPSSB <= 0 || c.TotalPSSB < c.WorkerPSSB || c.Imbalance <= 0 || c.Imbalance > 1 {
			t.Errorf("%s: PHP CPU %v ms, stack %v ms, %d workers, PSS %d/%d, imbalance %v", c.Label, c.CPUPHPMs, c.CPUStackMs, c.Workers, c.WorkerPSSB, c.TotalPSSB, c.Imbalance)
		}
		if c.Server == knob.NginxFPM && c.CPUWebMs <= 0 {
			t.Errorf("%s: nginx's CPU per request not counted as web", c.Label)
		}
		if (c.Label == res.Best) != (c.VsBest == nil) {
			t.Errorf("%s: vs best %+v (best %s)", c.Label, c.VsBest, res.Best)
		}
	}
	if measured < 2 {
		t.Fatalf("%d configurations measured", measured)
	}
	files := map[string][]string{
		knob.NginxFPM:            {recommend.NginxFile, recommend.PoolFile, recommend.IniFile, "recommended.knobs", "report.html"},
		knob.ApachePreforkModPHP: {recommend.ApacheFile, recommend.IniFile, "recommended.knobs", "report.html"},
	}
	for _, st := range res.Servers {
		if st.Failed != "" || st.TuneID != res.ID+"-"+st.Server || st.OutDir != filepath.Join(out, st.Server) {
			t.Errorf("%s: failed %q, tune %q, files in %q", st.Server, st.Failed, st.TuneID, st.OutDir)
		}
		for _, f := range files[st.Server] {
			if _, err := os.Stat(filepath.Join(out, st.Server, f)); err != nil {
				t.Errorf("%s: %v", st.Server, err)
			}
		}
		knobs, _ := os.ReadFile(filepath.Join(out, st.Server, "recommended.knobs"))
		if !strings.Contains(string(knobs), "server="+st.Server) && st.Server != knob.NginxFPM {
			t.Errorf("%s's recommended.knobs does not name its server:\n%s", st.Server, knobs)
		}
	}
	if _, err := os.Stat(filepath.Join(out, knob.ApachePreforkModPHP, recommend.PoolFile)); err == nil {
		t.Errorf("mod_php got a php-fpm pool file")
	}
	for _, f := range []string{"report.html", "summary.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}

	// Stored: the comparison's every run, its summary, and each tune.
	db, err := store.Open(context.Background(), filepath.Join(home, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := db.Run(context.Background(), res.ID)
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := db.Trials(context.Background(), res.ID)
	for _, s := range two {
		if tr, err := db.Run(context.Background(), res.ID+"-"+s); err != nil || tr.Status != store.StatusDone || tr.Result == nil {
			t.Errorf("the tune of %s is not stored done: %v", s, err)
		}
	}
	db.Close()
	if run.Kind != store.KindServers || run.Status != store.StatusDone || run.Servers == nil || len(trials) != 2*len(res.Configs) {
		t.Errorf("stored run: kind %q, status %q, summary %v, %d trials for %d configurations", run.Kind, run.Status, run.Servers != nil, len(trials), len(res.Configs))
	}
	text, _, code := runCLI(t, "report", res.ID, "--format", "text")
	if code != 0 || !strings.Contains(text, "phptune servers "+res.ID) || !strings.Contains(text, res.Best) {
		t.Errorf("phptune report %s: exit %d\n%s", res.ID, code, text)
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Fatalf("phptune servers left labs running: %+v", hs)
	}
}

// TestServersInterrupted: Ctrl-C during a tune takes the lab down, stores
// the run as interrupted with what was measured, writes and prints it, and
// exits as interrupted.
func TestServersInterrupted(t *testing.T) {
	home := labtest.Home(t)
	out := filepath.Join(home, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &lockedWriter{}
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && strings.Count(progress.String(), "servers: tune nginx-fpm [") < 2 {
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
	}()
	var stdout bytes.Buffer
	code := Main(ctx, []string{"servers", "--app", "hello", "--servers", "nginx-fpm", "-c", "4", "--time-budget", "60s", "--rounds", "2",
		"-d", "1s", "--warmup", "0s", "--trial-duration", "1s", "--trial-warmup", "0s", "-o", out}, &stdout, progress)
	if code != 130 {
		t.Fatalf("exit %d, want 130 (interrupted)\n%s", code, progress.String())
	}
	if !strings.Contains(progress.String(), "interrupted during the tune of nginx-fpm") {
		t.Errorf("stderr:\n%s", progress.String())
	}
	if !strings.Contains(stdout.String(), "INTERRUPTED") {
		t.Errorf("stdout does not say the run was interrupted:\n%s", stdout.String())
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Fatalf("the interrupted run left labs running: %+v", hs)
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Servers
	if err := json.Unmarshal(data, &res); err != nil || !res.Interrupted {
		t.Fatalf("result.json: %v, interrupted %v", err, res.Interrupted)
	}
	db, err := store.Open(context.Background(), filepath.Join(home, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, err := db.Run(context.Background(), res.ID)
	if err != nil || run.Status != store.StatusInterrupted || run.Servers == nil || !run.Servers.Interrupted {
		t.Errorf("stored: %v, %+v", err, run)
	}
	// The tune's finished trials are stored under its own run.
	if trs, _ := db.Trials(context.Background(), res.ID+"-nginx-fpm"); len(trs) == 0 {
		t.Errorf("no trial of the interrupted tune was stored")
	}
}
