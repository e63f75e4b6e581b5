package livehost

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/liveapply"
)

// TestReloadProbeStepJudgesOnlyTheChange: the probe's health check fails
// on a failed request of the change's reload, once, and never in an undo
// (CI stop 33: MariaDB refused a value before the probe's check ran, and
// the undo blamed the change's reload on the rollback).
func TestReloadProbeStepJudgesOnlyTheChange(t *testing.T) {
	failed := ProbeRun{Requests: 18, Failed: 1, First: errors.New("answered 500")}
	undoCtx := liveapply.UndoingContext(context.Background())
	for _, tc := range []struct {
		name string
		runs []ProbeRun
		ctxs []context.Context
		want []string // "" for nil
	}{
		{"clean reload", []ProbeRun{{Requests: 20}}, []context.Context{context.Background()}, []string{""}},
		{"failed reload", []ProbeRun{failed}, []context.Context{context.Background()}, []string{"1 of 18 probe requests failed"}},
		{"judged once", []ProbeRun{failed}, []context.Context{context.Background(), context.Background()}, []string{"failed", ""}},
		{"undo only", []ProbeRun{failed, {Requests: 20}}, []context.Context{undoCtx}, []string{""}},
		{"nothing probed", nil, []context.Context{context.Background()}, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &ReloadProbe{runs: tc.runs}
			st := p.Step()
			for i, ctx := range tc.ctxs {
				err := st.Healthy(ctx)
				switch {
				case tc.want[i] == "" && err != nil:
					t.Errorf("check %d: %v, want none", i, err)
				case tc.want[i] != "" && (err == nil || !strings.Contains(err.Error(), tc.want[i])):
					t.Errorf("check %d: %v, want %q", i, err, tc.want[i])
				}
			}
		})
	}
}
