package tune

import (
	"context"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/decide/sizing"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
)

// cachedStack is a simulated stack whose opcache holds 100 MiB of scripts
// whatever its size: full at the distro's 128 MiB (120 beside the interned
// strings), half empty once raised.
type cachedStack struct {
	*sim.Stack
	applied knob.Config
}

func (c *cachedStack) Apply(ctx context.Context, cfg knob.Config) error {
	c.applied = cfg.Clone()
	return c.Stack.Apply(ctx, cfg)
}

func (c *cachedStack) Measure(ctx context.Context, conns int, d, warm time.Duration) (*results.Bench, error) {
	b, err := c.Stack.Measure(ctx, conns, d, warm)
	if b != nil {
		size := c.applied.Int("opcache.memory_consumption") << 20
		used := int64(100<<20) + 8<<20 // PHP 8.2 counts the interned strings buffer as used
		b.Runtime = &results.Runtime{Opcache: &results.OpcacheStatus{Enabled: true, MemoryConsumptionB: size, UsedB: used, FreeB: size - used,
			InternedBufferB: 8 << 20, InternedUsedB: 3 << 20, CachedScripts: 900, CachedKeys: 900, MaxCachedKeys: 16229}}
	}
	return b, err
}

// TestSizingRaisesBeforeTheHoldout: a near-full opcache seen in the
// recommendation's trials is raised before the holdout, which measures the
// raised size; every other knob of the step is kept or not read, with its
// reason, in the result and the evidence; a resumed tune decides the same.
func TestSizingRaisesBeforeTheHoldout(t *testing.T) {
	f := newFixture(t, sim.IOWait(), 21, "")
	f.tuner.Stack = &cachedStack{Stack: f.stack}
	ctx := context.Background()
	tn, err := f.tuner.Run(ctx, Options{ID: "sized", App: "io", Workload: "front", Conns: 50, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]results.SizeDecision{}
	for _, d := range tn.Sizing {
		got[d.Knob] = d
	}
	mem := got["opcache.memory_consumption"]
	if mem.Action != sizing.ActionRaised || mem.From != "128" || mem.To != "208" || tn.Recommended["opcache.memory_consumption"] != "208" || len(mem.Trials) == 0 {
		t.Fatalf("opcache memory: %+v, recommended %s", mem, tn.Recommended["opcache.memory_consumption"])
	}
	if d := got["opcache.max_accelerated_files"]; d.Action != sizing.ActionKept || !strings.Contains(d.Reason, "900 keys") {
		t.Errorf("keys: %+v", d)
	}
	for _, k := range []string{"realpath_cache_size", "mariadb.innodb_buffer_pool_size", "nginx.worker_processes"} {
		if d := got[k]; d.Action != sizing.ActionNotRead || !strings.HasPrefix(d.Reason, "not read: ") || d.To != d.From {
			t.Errorf("%s: %+v", k, d)
		}
	}
	holdout := 0
	for _, tr := range tn.Trials {
		if tr.Phase == PhaseHoldout && tr.Config["pm.max_children"] == tn.Recommended["pm.max_children"] && tr.Config["pm"] == tn.Recommended["pm"] {
			holdout++
			if !maps.Equal(tr.Config, tn.Recommended) {
				t.Fatalf("holdout trial %d ran %v, not the sized recommendation", tr.N, knob.Diff(tn.Recommended, tr.Config))
			}
		}
	}
	if holdout == 0 {
		t.Fatal("no holdout trial of the recommendation")
	}
	found := false
	for _, c := range tn.Changes {
		found = found || c.Knob == "opcache.memory_consumption" && c.To == "208"
	}
	if !found {
		t.Errorf("the raise is not among the changes: %+v", tn.Changes)
	}
	for _, w := range tn.Warnings {
		if strings.Contains(w, "still too small") {
			t.Errorf("the raised size was still too small in the holdout: %s", w)
		}
	}
	if ev := tn.Files["evidence.txt"]; !strings.Contains(ev, "raised 128 → 208: scripts use 100 MiB of the 120 MiB") || !strings.Contains(ev, "not read: the observer measured no nginx workers") {
		t.Errorf("evidence:\n%s", ev)
	}

	// Resumed from its stored trials (as if interrupted at the very end),
	// the run decides the same without measuring anything again: the
	// readings are stored with the trials.
	if err := f.db.SetStatus(ctx, "sized", store.StatusInterrupted); err != nil {
		t.Fatal(err)
	}
	measured := f.stack.Measures
	again, err := f.tuner.Resume(ctx, "sized")
	if err != nil {
		t.Fatal(err)
	}
	if f.stack.Measures != measured || again.Recommended["opcache.memory_consumption"] != "208" || !reflect.DeepEqual(again.Sizing, tn.Sizing) {
		t.Errorf("resumed (%d new measurements): %+v", f.stack.Measures-measured, again.Sizing)
	}
}

// TestSizingNotReadOnSimulatedStack: the simulated stack reports no cache
// figures: every knob of the step stays and says it was not read.
func TestSizingNotReadOnSimulatedStack(t *testing.T) {
	f := newFixture(t, sim.CPUBound(), 22, "")
	tn, err := f.tuner.Run(context.Background(), Options{ID: "sim", App: "strings", Workload: "front", Conns: 20, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(tn.Sizing) < 6 {
		t.Fatalf("sizing: %+v", tn.Sizing)
	}
	for _, d := range tn.Sizing {
		if d.Action != sizing.ActionNotRead || d.From != d.To {
			t.Errorf("%+v", d)
		}
	}
}
