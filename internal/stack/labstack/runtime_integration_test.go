package labstack

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/workload"
)

// TestRuntimeRead brings up a real WordPress lab, measures its front page
// briefly and checks that the measurement carries the caches' figures:
// opcache holds WordPress's scripts, the realpath cache has entries, and
// InnoDB's data and page requests were read as the lab's database root.
func TestRuntimeRead(t *testing.T) {
	labtest.Home(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, lab.Options{Name: "rt", App: "wordpress"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(ctx, l, workload.Front)
	if err != nil {
		t.Fatal(err)
	}
	st := New(l, w)
	st.ObserveInterval = 500 * time.Millisecond
	b, err := st.Measure(ctx, 2, 2*time.Second, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	rt := b.Runtime
	js, _ := json.Marshal(rt)
	t.Logf("runtime: %s", js)
	if rt == nil || len(rt.Errors) > 0 {
		t.Fatalf("runtime not read: %s", js)
	}
	op := rt.Opcache
	if op == nil || !op.Enabled || op.CachedScripts < 10 || op.UsedB <= 0 || op.MaxCachedKeys < op.CachedKeys || op.InternedUsedB <= 0 || op.MemoryConsumptionB != 128<<20 {
		t.Fatalf("opcache: %s", js)
	}
	if rp := rt.Realpath; rp == nil || rp.Entries < 1 || rp.UsedB <= 0 || rp.SizeB != 4<<20 || rp.Reads != realpathReads {
		t.Fatalf("realpath cache: %s", js)
	}
	in := rt.InnoDB
	if in == nil || in.DataB <= 0 || in.BufferPoolB != 128<<20 || in.PagesTotal <= 0 || in.ReadRequests <= 0 || in.PageSizeB != 16<<10 {
		t.Fatalf("innodb: %s", js)
	}
}
