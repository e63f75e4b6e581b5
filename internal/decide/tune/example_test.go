package tune_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
)

// A tune wired to a stack. For a real tune the Stack is the lab plus the
// load generator and the observer; here it is the simulated io page.
func Example() {
	dir, _ := os.MkdirTemp("", "phptune")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()

	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stack := sim.New(sim.IOWait(), 1)
	stack.Clock = &clock // simulated time; a real tune leaves Now nil
	t := &tune.Tuner{Stack: stack, Store: db, Now: func() time.Time { return clock }}
	res, err := t.Run(ctx, tune.Options{ID: "example", App: "io", Conns: 50, Cores: 2,
		Limits: results.Limits{MaxErrorRate: 0.001}, TimeBudget: 15 * time.Minute})
	if err != nil {
		panic(err) // *tune.InterruptedError on Ctrl-C: t.Resume(ctx, "example") continues
	}
	// The io page waits 20 ms on MariaDB: the pool is sized near the
	// workload's 50 connections (the knee's exact size moves with the
	// simulated noise), far past the distro's 5 workers.
	fmt.Printf("pm=%s, max_children ≥ 40: %v, holdout ≥ 6×: %v\n", res.Recommended["pm"], knob.Config(res.Recommended).Int("pm.max_children") >= 40, res.Holdout.ThroughputRatio >= 6)
	// Output: pm=static, max_children ≥ 40: true, holdout ≥ 6×: true
}
