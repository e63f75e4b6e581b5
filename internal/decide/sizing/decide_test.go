package sizing

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

const mb = 1 << 20

// wordpressOpcache is the opcache a real WordPress lab reported after its
// front page was loaded (testdata/status-wordpress.json).
func wordpressOpcache() *results.OpcacheStatus {
	return &results.OpcacheStatus{Enabled: true, MemoryConsumptionB: 128 * mb, UsedB: 24318944, FreeB: 109898784,
		InternedBufferB: 8 * mb, InternedUsedB: 4056048, InternedStrings: 35550, CachedScripts: 341, CachedKeys: 341, MaxCachedKeys: 16229,
		MaxAcceleratedFiles: 10000, JIT: &results.JITStatus{}}
}

// bench is a trial's measurement with runtime figures and an observer's
// view of nginx's workers.
func bench(rt *results.Runtime, nginxCPUPerReq, stackCPUPerReq float64, workers int) *results.Bench {
	b := &results.Bench{Requests: 1000, DurationS: 5, ThroughputRPS: 200, Runtime: rt}
	if workers > 0 {
		b.Observation = &results.Observation{
			Samples: []results.Sample{{Groups: []results.GroupSample{{Name: "nginx workers", Processes: workers, PSSB: 3 * mb}}}},
			Derived: results.Derived{CPUSecondsPerRequest: map[string]float64{"nginx workers": nginxCPUPerReq, "stack": stackCPUPerReq}},
		}
	}
	return b
}

func decide(t *testing.T, set map[string]string, b *results.Bench, db bool) (knob.Config, map[string]results.SizeDecision) {
	t.Helper()
	cfg := knob.Defaults()
	for k, v := range set {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	out, ds := Decide(Inputs{Config: cfg, Readings: []Reading{{Trial: 7, Bench: b}}, Cores: 2})
	m := map[string]results.SizeDecision{}
	for _, d := range ds {
		if _, dup := m[d.Knob]; dup {
			t.Fatalf("two decisions on %s", d.Knob)
		}
		m[d.Knob] = d
		if d.Reason == "" || d.Action == "" {
			t.Fatalf("decision without reason or action: %+v", d)
		}
		if d.To != out[d.Knob] {
			t.Fatalf("%s: decision says %s, configuration %s", d.Knob, d.To, out[d.Knob])
		}
		if (d.From != d.To) != (d.Action == ActionRaised || d.Action == ActionSet) {
			t.Fatalf("%s: %s → %s but action %s", d.Knob, d.From, d.To, d.Action)
		}
	}
	if err := out.Validate(); err != nil {
		t.Fatalf("decided configuration is invalid: %v", err)
	}
	return out, m
}

func TestDecide(t *testing.T) {
	full := wordpressOpcache()
	full.UsedB, full.FreeB = 110*mb, 18*mb // scripts 102 MiB of 120
	restarts := wordpressOpcache()
	restarts.OOMRestarts, restarts.CacheFull = 2, true
	interned := wordpressOpcache()
	interned.InternedUsedB = 7 * mb
	keys := wordpressOpcache()
	keys.CachedKeys, keys.CachedScripts = 13000, 6500
	hashRestart := wordpressOpcache()
	hashRestart.HashRestarts = 1
	jit := wordpressOpcache()
	jit.JIT = &results.JITStatus{Enabled: true, On: true, BufferB: 64 * mb, BufferFreeB: 4 * mb}
	jitRoom := wordpressOpcache()
	jitRoom.JIT = &results.JITStatus{Enabled: true, On: true, BufferB: 64 * mb, BufferFreeB: 60 * mb}
	realpath := &results.RealpathStatus{UsedB: 81671, Entries: 634, SizeB: 4 * mb, Reads: 3}
	realpathFull := &results.RealpathStatus{UsedB: 3500 << 10, Entries: 20000, SizeB: 4 * mb, Reads: 3}
	innodb := &results.InnoDBStatus{DataB: 294912, IndexB: 507904, BufferPoolB: 128 * mb, PagesData: 670, PagesTotal: 8112, PageSizeB: 16 << 10, ReadRequests: 14185}
	bigData := &results.InnoDBStatus{DataB: 150 * mb, IndexB: 40 * mb, BufferPoolB: 128 * mb, PagesData: 8100, PagesTotal: 8112, ReadRequests: 100000, Reads: 9000}
	missing := &results.InnoDBStatus{DataB: 60 * mb, IndexB: 30 * mb, BufferPoolB: 128 * mb, PagesData: 8000, PagesTotal: 8112, ReadRequests: 100000, Reads: 5000}

	for _, tc := range []struct {
		name    string
		set     map[string]string
		rt      *results.Runtime
		db      bool
		nginx   [3]float64 // nginx CPU/req, stack CPU/req, workers
		want    map[string]string
		reasons map[string]string // knob -> text the reason must hold
	}{
		{name: "wordpress as measured: everything kept", rt: &results.Runtime{Opcache: wordpressOpcache(), Realpath: realpath, InnoDB: innodb}, db: true, nginx: [3]float64{0.0004, 0.02, 2},
			want: map[string]string{KnobOpcacheMemory: "128", KnobInternedStrings: "8", KnobMaxFiles: "10000", KnobRealpath: "4M", KnobBufferPool: "128M", KnobNginxWorkers: "auto"},
			reasons: map[string]string{KnobOpcacheMemory: "kept 128: scripts use 15.2 MiB of the 120 MiB beside the interned strings (13%)", KnobInternedStrings: "kept 8: interned strings use 3.9 MiB of 8 MiB (48%)",
				KnobMaxFiles: "kept 10000: 341 keys (341 scripts) in 16229 slots (2%)", KnobRealpath: "kept 4M: the fullest worker's cache holds 634 entries in 80 KiB of 4 MiB (2%)",
				KnobBufferPool:   "kept 128M: InnoDB data + indexes 784 KiB (1% of the pool); 670 of 8112 pages hold data; hit rate 100.00% over 14185 page requests",
				KnobNginxWorkers: "kept auto: nginx's 2 workers used 0.08 cores, 4.0% of a core each, 2.0% of the stack's CPU"}},
		{name: "scripts near full", rt: &results.Runtime{Opcache: full}, want: map[string]string{KnobOpcacheMemory: "224"},
			reasons: map[string]string{KnobOpcacheMemory: "raised 128 → 224: scripts use 102 MiB of the 120 MiB beside the interned strings (85%)"}},
		{name: "out-of-memory restarts double the whole area", rt: &results.Runtime{Opcache: restarts}, want: map[string]string{KnobOpcacheMemory: "256", KnobMaxFiles: "10000"},
			reasons: map[string]string{KnobOpcacheMemory: "2 out-of-memory restarts, cache full (so the need is at least the whole area)"}},
		{name: "interned strings near full grow memory with them", rt: &results.Runtime{Opcache: interned}, want: map[string]string{KnobInternedStrings: "16", KnobOpcacheMemory: "136"},
			reasons: map[string]string{KnobInternedStrings: "raised 8 → 16: interned strings use 7 MiB of 8 MiB (88%)", KnobOpcacheMemory: "grows by 8 MiB inside it"}},
		{name: "keys near full", rt: &results.Runtime{Opcache: keys}, want: map[string]string{KnobMaxFiles: "32531", KnobOpcacheMemory: "128"}},
		{name: "a hash restart", rt: &results.Runtime{Opcache: hashRestart}, want: map[string]string{KnobMaxFiles: "32531"}},
		{name: "JIT buffer near full", set: map[string]string{KnobJITBuffer: "64M"}, rt: &results.Runtime{Opcache: jit}, want: map[string]string{KnobJITBuffer: "128M"},
			reasons: map[string]string{KnobJITBuffer: "raised 64M → 128M: the JIT wrote 60 MiB of its 64 MiB buffer (94%)"}},
		{name: "JIT buffer with room", set: map[string]string{KnobJITBuffer: "64M"}, rt: &results.Runtime{Opcache: jitRoom}, want: map[string]string{KnobJITBuffer: "64M"},
			reasons: map[string]string{KnobJITBuffer: "kept 64M: the JIT wrote 4 MiB of its 64 MiB buffer (6%)"}},
		{name: "JIT on but not running", set: map[string]string{KnobJITBuffer: "64M"}, rt: &results.Runtime{Opcache: wordpressOpcache()},
			reasons: map[string]string{KnobJITBuffer: "not read: opcache_get_status reports the JIT off"}},
		{name: "realpath cache near full", rt: &results.Runtime{Realpath: realpathFull}, want: map[string]string{KnobRealpath: "7M"}},
		{name: "data larger than the pool", rt: &results.Runtime{InnoDB: bigData}, db: true, want: map[string]string{KnobBufferPool: "384M"},
			reasons: map[string]string{KnobBufferPool: "raised 128M → 384M: InnoDB data + indexes 190 MiB (148% of the pool)"}},
		{name: "a full pool that misses", rt: &results.Runtime{InnoDB: missing}, db: true, want: map[string]string{KnobBufferPool: "256M"},
			reasons: map[string]string{KnobBufferPool: "hit rate 95.00%"}},
		{name: "nginx saturated with one worker on two cores", set: map[string]string{KnobNginxWorkers: "1"}, nginx: [3]float64{0.0045, 0.01, 1},
			want: map[string]string{KnobNginxWorkers: "auto"}, reasons: map[string]string{KnobNginxWorkers: "set 1 → auto: nginx's 1 workers used 0.90 cores, 90.0% of a core each"}},
		{name: "nginx saturated on every core", nginx: [3]float64{0.009, 0.012, 2}, want: map[string]string{KnobNginxWorkers: "auto"},
			reasons: map[string]string{KnobNginxWorkers: "with a worker per core already"}},
		{name: "opcache off in the recommendation", set: map[string]string{"opcache.enable": "off"}, rt: &results.Runtime{Opcache: full},
			want: map[string]string{KnobOpcacheMemory: "128"}, reasons: map[string]string{KnobOpcacheMemory: "not read: opcache is off in the recommendation"}},
		{name: "status script failed", rt: &results.Runtime{Errors: []string{"status script: answered 404"}},
			reasons: map[string]string{KnobOpcacheMemory: "not read: status script: answered 404", KnobRealpath: "not read: status script: answered 404"}},
		{name: "a simulated stack reports nothing",
			reasons: map[string]string{KnobOpcacheMemory: "not read", KnobBufferPool: "not read: the stack reported no InnoDB figures", KnobNginxWorkers: "not read: the observer measured no nginx workers"}},
		{name: "a lab without MariaDB", rt: &results.Runtime{Opcache: wordpressOpcache()},
			reasons: map[string]string{KnobBufferPool: "not read: the stack runs no MariaDB"}},
		{name: "MariaDB unreadable", rt: &results.Runtime{Opcache: wordpressOpcache(), Errors: []string{"mariadb: access denied"}},
			reasons: map[string]string{KnobBufferPool: "not read: mariadb: access denied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ds := decide(t, tc.set, bench(tc.rt, tc.nginx[0], tc.nginx[1], int(tc.nginx[2])), tc.db)
			for k, v := range tc.want {
				if out[k] != v {
					t.Errorf("%s = %s, want %s (%s)", k, out[k], v, ds[k].Reason)
				}
			}
			for k, r := range tc.reasons {
				if !strings.Contains(ds[k].Reason, r) {
					t.Errorf("%s: reason %q lacks %q", k, ds[k].Reason, r)
				}
			}
			if d := ds[KnobBufferPool]; (d.Action != ActionNotRead) != tc.db {
				t.Errorf("buffer pool %s (%s), stack with MariaDB: %v", d.Action, d.Reason, tc.db)
			}
			_, jitDecided := ds[KnobJITBuffer]
			if jitDecided != (tc.set[KnobJITBuffer] != "") {
				t.Errorf("JIT buffer decided: %v", jitDecided)
			}
		})
	}
}

// TestBufferPoolBudget: a raise that makes memory resident is bounded by
// the memory budget, and refused when nothing fits.
func TestBufferPoolBudget(t *testing.T) {
	big := &results.InnoDBStatus{DataB: 400 * mb, IndexB: 100 * mb, PagesData: 8100, PagesTotal: 8112}
	cfg := knob.Defaults()
	for _, tc := range []struct {
		budget, predicted int64
		want, reason      string
	}{
		{0, 0, "1G", "raised 128M → 1G"},
		{1024 * mb, 500 * mb, "640M", "the memory budget 1024 MiB allows 640M"},
		{1024 * mb, 1000 * mb, "128M", "it should be 1G, but the memory budget 1024 MiB leaves 24 MiB"},
	} {
		out, ds := Decide(Inputs{Config: cfg, Readings: []Reading{{Trial: 1, Bench: bench(&results.Runtime{InnoDB: big}, 0, 0, 0)}}, Cores: 2,
			MemoryBudgetB: tc.budget, PredictedMemB: tc.predicted})
		var d results.SizeDecision
		for _, x := range ds {
			if x.Knob == KnobBufferPool {
				d = x
			}
		}
		if out[KnobBufferPool] != tc.want || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("budget %d: %s (%s), want %s with %q", tc.budget, out[KnobBufferPool], d.Reason, tc.want, tc.reason)
		}
	}
}

// TestDecideHostileFigures: absurd figures from a hostile app are clamped
// to the knobs' ranges, never out of them.
func TestDecideHostileFigures(t *testing.T) {
	op := wordpressOpcache()
	op.UsedB, op.InternedUsedB, op.CachedKeys, op.OOMRestarts, op.CacheFull = 1<<50, 1<<50, 1<<50, 1<<50, true
	op.JIT = &results.JITStatus{On: true, BufferB: 1 << 50}
	rt := &results.Runtime{Opcache: op, Realpath: &results.RealpathStatus{UsedB: 1 << 50, SizeB: 1}, InnoDB: &results.InnoDBStatus{DataB: 1 << 50, IndexB: 1 << 50}}
	out, _ := decide(t, map[string]string{KnobJITBuffer: "64M"}, bench(rt, 1e6, 1, 1), true)
	for k, want := range map[string]string{KnobOpcacheMemory: "4096", KnobInternedStrings: "4095", KnobMaxFiles: "1000000", KnobRealpath: "256M", KnobBufferPool: "64G", KnobJITBuffer: "1G"} {
		if out[k] != want {
			t.Errorf("%s = %s, want %s", k, out[k], want)
		}
	}
}
