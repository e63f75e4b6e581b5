package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

func open(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func trial(n int, status string) Trial {
	tr := Trial{Trial: results.Trial{N: n, Phase: "knee", Config: map[string]string{"pm": "static", "pm.max_children": strconv.Itoa(n)},
		Connections: 50, Status: status}, Key: fmt.Sprintf("k%d", n), Label: "workers=" + strconv.Itoa(n),
		StartedAt: time.Unix(1000, 0), FinishedAt: time.Unix(1012, 0)}
	if status == "ok" {
		tr.Bench = &results.Bench{Kind: results.KindBench, ThroughputRPS: 1000 + float64(n),
			Observation: &results.Observation{Samples: []results.Sample{{TS: 1, Machine: results.MachineSample{StealPct: 3}}}}}
	} else {
		tr.FailReason, tr.Log = "stack failed to start", "php-fpm: ERROR: fork() failed"
	}
	return tr
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db := open(t, path)
	opts := json.RawMessage(`{"conns":50}`)
	if err := db.CreateRun(ctx, Run{ID: "r1", Command: "phptune tune", App: "io", Workload: "front", Options: opts}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(ctx, Run{ID: "r1"}); err == nil {
		t.Error("duplicate run accepted")
	}
	for _, tr := range []Trial{trial(1, "ok"), trial(2, "failed"), trial(3, "ok")} {
		if err := db.SaveTrial(ctx, "r1", tr); err != nil {
			t.Fatal(err)
		}
	}
	// Re-saving a number replaces it.
	again := trial(3, "ok")
	again.Bench.ThroughputRPS = 5
	if err := db.SaveTrial(ctx, "r1", again); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = open(t, path) // reopen: nothing lost, no migration re-run
	got, err := db.Trials(ctx, "r1")
	if err != nil || len(got) != 3 {
		t.Fatalf("trials: %d %v", len(got), err)
	}
	tests := []struct {
		i      int
		status string
		rps    float64
		log    string
	}{{0, "ok", 1001, ""}, {1, "failed", 0, "php-fpm: ERROR: fork() failed"}, {2, "ok", 5, ""}}
	for _, tt := range tests {
		g := got[tt.i]
		if g.Status != tt.status || g.Log != tt.log || g.Config["pm"] != "static" || g.Key != fmt.Sprintf("k%d", tt.i+1) {
			t.Errorf("trial %d: %+v", tt.i+1, g)
		}
		if tt.rps > 0 && (g.Bench == nil || g.Bench.ThroughputRPS != tt.rps || len(g.Bench.Observation.Samples) != 1) {
			t.Errorf("trial %d bench: %+v", tt.i+1, g.Bench)
		}
		if tt.rps == 0 && g.Bench != nil {
			t.Errorf("trial %d: failed trial has a bench", tt.i+1)
		}
	}
	r, err := db.Run(ctx, "r1")
	if err != nil || r.Status != StatusRunning || string(r.Options) != `{"conns":50}` || r.Result != nil {
		t.Fatalf("run: %+v %v", r, err)
	}
	if err := db.Finish(ctx, "r1", StatusDone, &results.Tune{ID: "r1", Kind: results.KindTune}); err != nil {
		t.Fatal(err)
	}
	r, _ = db.Run(ctx, "r1")
	if r.Status != StatusDone || r.Result == nil || r.Result.ID != "r1" {
		t.Errorf("finished run: %+v", r)
	}
	if _, err := db.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run: %v", err)
	}
	if err := db.SetStatus(ctx, "nope", StatusDone); !errors.Is(err, ErrNotFound) {
		t.Errorf("status of missing run: %v", err)
	}
	runs, _ := db.Runs(ctx)
	if len(runs) != 1 {
		t.Errorf("runs: %d", len(runs))
	}
	if err := db.SaveTrial(ctx, "nope", trial(1, "ok")); err == nil {
		t.Error("trial of a missing run accepted (foreign keys off?)")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db := open(t, path)
	if _, err := db.db.ExecContext(ctx, "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path); err == nil {
		t.Error("a newer schema was accepted")
	}
}

// TestKilledMidWrite kills a process that writes trials as fast as it can
// and checks the database afterwards: intact, and every stored trial whole.
func TestKilledMidWrite(t *testing.T) {
	if path := os.Getenv("PHPTUNE_STORE_WRITER"); path != "" {
		writer(path)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	path := filepath.Join(t.TempDir(), "results.db")
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledMidWrite$")
		cmd.Env = append(os.Environ(), "PHPTUNE_STORE_WRITER="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(300+200*round) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()

		db, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("round %d: reopening after kill: %v", round, err)
		}
		if err := db.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		trials, err := db.Trials(context.Background(), "killed")
		if err != nil {
			t.Fatalf("round %d: reading trials: %v", round, err)
		}
		for i, tr := range trials {
			if tr.N != i+1 || tr.Bench == nil && tr.Status == "ok" {
				t.Fatalf("round %d: trial %d damaged: %+v", round, i, tr)
			}
		}
		t.Logf("round %d: %d trials survived the kill", round, len(trials))
		db.Close()
	}
}

// writer appends trials forever (until killed), continuing numbering.
func writer(path string) {
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		panic(err)
	}
	_ = db.CreateRun(ctx, Run{ID: "killed"})
	have, _ := db.Trials(ctx, "killed")
	for n := len(have) + 1; ; n++ {
		tr := trial(n, "ok")
		// A big bench, like one with observer samples, so a kill lands
		// mid-write now and then.
		for i := 0; i < 200; i++ {
			tr.Bench.Observation.Samples = append(tr.Bench.Observation.Samples, results.Sample{TS: float64(i)})
		}
		if err := db.SaveTrial(ctx, "killed", tr); err != nil {
			panic(err)
		}
	}
}

func TestBenchRuns(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := &results.Bench{SchemaVersion: results.SchemaVersion, Kind: results.KindBench, ID: "bench-1", Command: "phptune bench --lab x",
		StartedAt: time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC), ThroughputRPS: 123.5, Requests: 1000}
	if err := db.SaveBench(ctx, b, "hello", "/"); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveBench(ctx, b, "hello", "/"); err == nil {
		t.Error("a second bench with the same ID was stored")
	}
	r, err := db.Run(ctx, "bench-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindBench || r.Bench == nil || r.Bench.ThroughputRPS != 123.5 || r.Result != nil || r.Status != StatusDone || r.App != "hello" {
		t.Errorf("stored bench read back as %+v (bench %+v)", r, r.Bench)
	}
	if !r.CreatedAt.Equal(b.StartedAt) {
		t.Errorf("created %v, want the bench's start %v", r.CreatedAt, b.StartedAt)
	}
	if err := db.CreateRun(ctx, Run{ID: "tune-1", App: "io"}); err != nil {
		t.Fatal(err)
	}
	if tr, _ := db.Run(ctx, "tune-1"); tr.Kind != KindTune {
		t.Errorf("tune run has kind %q", tr.Kind)
	}
}

// TestCapacityRuns: a capacity search is stored with its document in the
// result column, read back as a Capacity (not a tune), redacted.
func TestCapacityRuns(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := &results.Capacity{SchemaVersion: results.SchemaVersion, Kind: results.KindCapacity, ID: "capacity-1",
		Command: "phptune capacity --lab x -H 'X-Api-Key: S3cr3t-key'", SLO: "p99<500ms,errors<=0%", CapacityRPS: 420, FirstFailRPS: 460,
		Steps: []results.CapacityStep{{N: 1, Phase: "ramp", RateRPS: 420, Pass: true, Bench: &results.Bench{Requests: 4200}}}}
	if err := db.SaveCapacity(ctx, c, "io", "/"); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveCapacity(ctx, c, "io", "/"); err == nil {
		t.Error("a second capacity run with the same ID was stored")
	}
	r, err := db.Run(ctx, "capacity-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindCapacity || r.Capacity == nil || r.Result != nil || r.Bench != nil || r.Capacity.CapacityRPS != 420 ||
		len(r.Capacity.Steps) != 1 || r.Capacity.Steps[0].Bench.Requests != 4200 || r.Status != StatusDone || r.App != "io" {
		t.Errorf("stored capacity read back as %+v (capacity %+v)", r, r.Capacity)
	}
	if strings.Contains(r.Command, "S3cr3t") || strings.Contains(r.Capacity.Command, "S3cr3t") {
		t.Errorf("a secret was stored: %q / %q", r.Command, r.Capacity.Command)
	}
	runs, err := db.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].Capacity == nil {
		t.Errorf("Runs: %v %+v", err, runs)
	}
}

// TestServersRuns: a servers comparison is a run of its own kind, its
// runs stored as trials as they finish, its summary at the end (also an
// interrupted one's), redacted like everything else.
func TestServersRuns(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "results.db"))
	if err := db.CreateRun(ctx, Run{ID: "s1", Kind: KindServers, Command: "phptune servers --app hello", App: "hello", Workload: "/?token=abc123"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveTrial(ctx, "s1", trial(1, "ok")); err != nil {
		t.Fatal(err)
	}
	r, err := db.Run(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindServers || r.Status != StatusRunning || r.Servers != nil || r.Result != nil || strings.Contains(r.Workload, "abc123") {
		t.Errorf("a running servers comparison read back as %+v", r)
	}
	res := &results.Servers{Kind: results.KindServers, ID: "s1", Best: "nginx-fpm tuned", Interrupted: true,
		Warnings: []string{"mysql://app:hunter2-secret@localhost/app"},
		Configs:  []results.ServerConfig{{Label: "nginx-fpm tuned", Rank: 1, Throughput: results.Interval{Value: 41.5, Low: 39, High: 44}}}}
	if err := db.FinishServers(ctx, "s1", StatusInterrupted, res); err != nil {
		t.Fatal(err)
	}
	if r, err = db.Run(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusInterrupted || r.Servers == nil || r.Servers.Best != "nginx-fpm tuned" || !r.Servers.Interrupted || r.Servers.Configs[0].Throughput.High != 44 {
		t.Errorf("finished servers comparison read back as %+v (%+v)", r, r.Servers)
	}
	if strings.Contains(strings.Join(r.Servers.Warnings, " "), "hunter2") {
		t.Errorf("stored unredacted: %v", r.Servers.Warnings)
	}
	if trs, _ := db.Trials(ctx, "s1"); len(trs) != 1 {
		t.Errorf("%d trials", len(trs))
	}
	if err := db.FinishServers(ctx, "nosuch", StatusDone, res); !errors.Is(err, ErrNotFound) {
		t.Errorf("finishing an unknown run: %v", err)
	}
}

// TestPrivateFiles: the database and its WAL files are 0600 whatever the
// umask, and an existing world-readable database is made private.
func TestPrivateFiles(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	db := open(t, path)
	if err := db.CreateRun(ctx, Run{ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	checkModes := func(when string) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			if errors.Is(err, os.ErrNotExist) && p != path {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s is %v, want 0600", when, filepath.Base(p), st.Mode().Perm())
			}
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no WAL file while open (the test checks its mode): %v", err)
	}
	checkModes("new database")
	db.Close()

	// A database left world-readable by an older phptune, with a stale
	// -shm file.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-shm", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db = open(t, path)
	checkModes("reopened database")
	db.Close()
}

func TestSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.db")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "results.db")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlinked database opened: %v", err)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o644 {
		t.Errorf("the symlink's target was chmod-ed to %v", st.Mode().Perm())
	}
}

// TestOddPath: a path with ?, #, % and spaces opens exactly that file (the
// SQLite URI used to cut it at the ? and decode the %).
func TestOddPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"we?ird #1 %41%zz.db", "a b?mode=ro.db", "x#y.db"} {
		path := filepath.Join(dir, name)
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if err := db.CreateRun(ctx, Run{ID: "r1"}); err != nil {
			t.Fatalf("%q: writing: %v", name, err)
		}
		db.Close()
		st, err := os.Stat(path)
		if err != nil || st.Size() == 0 {
			t.Fatalf("%q: the database is not at its path: %v", name, err)
		}
		db = open(t, path)
		if _, err := db.Run(ctx, "r1"); err != nil {
			t.Errorf("%q: reopened without the run: %v", name, err)
		}
		db.Close()
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimSuffix(n, "-wal"), "-shm")
		if base != "we?ird #1 %41%zz.db" && base != "a b?mode=ro.db" && base != "x#y.db" {
			t.Errorf("a file outside the asked paths: %q (all: %q)", n, names)
		}
	}
}

// TestNothingStoredUnredacted writes a run, a trial, a result and a bench
// full of credentials and looks for them in the database's bytes.
func TestNothingStoredUnredacted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db := open(t, path)
	db.Redact("X-Tenant", "x-tenant", " ")
	secrets := []string{"S3-cmd-key", "S3-workload", "S3-opt", "S3-log", "S3-fail", "S3-target", "S3-uri", "S3-tenant", "S3-userpw", "S3-result", "S3-bench-cmd", "S3-cfg"}
	opts, _ := json.Marshal(map[string]any{"command": "phptune tune --workload '/shop/?session=S3-opt'", "workload": "/shop/?session=S3-opt", "conns": 50})
	if err := db.CreateRun(ctx, Run{ID: "r1", Command: "phptune bench -H 'X-Api-Key: S3-cmd-key' -H 'X-Tenant: S3-tenant'", Workload: "/shop/?session=S3-workload", Options: opts}); err != nil {
		t.Fatal(err)
	}
	tr := trial(1, "ok")
	tr.Log = "nginx: request: \"GET /?token=S3-log HTTP/1.1\""
	tr.FailReason = "mysqld: --password=S3-fail"
	tr.Config["mariadb.password"] = "S3-cfg"
	tr.Bench.Target = "http://app:S3-userpw@127.0.0.1:8080/?key=S3-target"
	tr.Bench.Command = "phptune bench --body 'log=a&pwd_pass=S3-bench-cmd'"
	tr.Bench.Observation.Samples[0].FPM = []results.FPMStatus{{Workers: []results.FPMWorker{{RequestURI: "/wp-login.php?action=rp&key=S3-uri"}}}}
	if err := db.SaveTrial(ctx, "r1", tr); err != nil {
		t.Fatal(err)
	}
	if err := db.Finish(ctx, "r1", StatusDone, &results.Tune{ID: "r1", Command: "phptune tune --set mariadb.password=S3-result", Trials: []results.Trial{tr.Trial}}); err != nil {
		t.Fatal(err)
	}
	b := *tr.Bench
	b.ID = "b1"
	if err := db.SaveBench(ctx, &b, "hello", "/?auth=S3-workload"); err != nil {
		t.Fatal(err)
	}
	if tr.Bench.Target != "http://app:S3-userpw@127.0.0.1:8080/?key=S3-target" || tr.Config["mariadb.password"] != "S3-cfg" {
		t.Error("storing changed the caller's values")
	}

	// What comes back is redacted, and says with which names.
	r, err := db.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Command, "X-Tenant: <redacted>") || r.Workload != "/shop/?session=<redacted>" || len(r.Redact) != 1 || r.Redact[0] != "X-Tenant" {
		t.Errorf("run read back: command %q, workload %q, redact %q", r.Command, r.Workload, r.Redact)
	}
	var o map[string]any
	if err := json.Unmarshal(r.Options, &o); err != nil || o["conns"] != 50.0 || o["workload"] != "/shop/?session=<redacted>" {
		t.Errorf("options read back: %s %v", r.Options, err)
	}
	got, _ := db.Trials(ctx, "r1")
	if len(got) != 1 || got[0].Bench.Target != "http://app:<redacted>@127.0.0.1:8080/?key=<redacted>" || got[0].Config["pm"] != "static" {
		t.Errorf("trial read back: %+v", got)
	}
	db.Close() // checkpoints the WAL into the file

	var raw []byte
	for _, p := range []string{path, path + "-wal"} {
		data, _ := os.ReadFile(p)
		raw = append(raw, data...)
	}
	if len(raw) == 0 {
		t.Fatal("empty database")
	}
	for _, s := range secrets {
		if i := bytes.Index(raw, []byte(s)); i >= 0 {
			t.Errorf("the database holds %s: …%q…", s, raw[max(0, i-60):min(len(raw), i+20)])
		}
	}
}

// A figure JSON cannot carry (+Inf from a ratio over nothing) does not
// lose the result: it is stored as 0.
func TestNonFiniteStoredAsZero(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := &results.Bench{SchemaVersion: results.SchemaVersion, Kind: results.KindBench, ID: "bench-inf", Command: "phptune bench",
		StartedAt: time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC), ThroughputRPS: math.Inf(1), Requests: 1}
	if err := db.SaveBench(ctx, b, "hello", "/"); err != nil {
		t.Fatalf("a bench with +Inf was not stored: %v", err)
	}
	if r, err := db.Run(ctx, "bench-inf"); err != nil || r.Bench == nil || r.Bench.ThroughputRPS != 0 {
		t.Fatalf("read back %+v, %v", r, err)
	}
}

// TestSetOption: a decision a run makes once is added to its stored
// options (a resumed run reads it back); odd names and values are refused.
func TestSetOption(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "results.db"))
	if err := db.CreateRun(ctx, Run{ID: "r", Options: json.RawMessage(`{"conns":50}`)}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetOption(ctx, "r", "race_extra_trials", 7); err != nil {
		t.Fatal(err)
	}
	r, err := db.Run(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := json.Unmarshal(r.Options, &got); err != nil || got["conns"] != 50 || got["race_extra_trials"] != 7 {
		t.Errorf("options %s (%v)", r.Options, err)
	}
	for _, tc := range []struct {
		id, name string
		value    any
	}{
		{"r", "a.b", 1}, {"r", "x') --", 1}, {"r", "", 1}, {"r", "list", []int{1}}, {"nope", "x", 1},
	} {
		if err := db.SetOption(ctx, tc.id, tc.name, tc.value); err == nil {
			t.Errorf("SetOption(%q, %q, %v) accepted", tc.id, tc.name, tc.value)
		}
	}
}
