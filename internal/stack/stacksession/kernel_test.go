package stacksession

import (
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

func TestKernelNeedsRestart(t *testing.T) {
	for _, c := range []struct {
		name string
		run  *sysctl.Run
		want bool
	}{
		{"no run", nil, false},
		{"nothing raised", &sysctl.Run{}, false},
		{"somaxconn", &sysctl.Run{Changes: []results.SysctlChange{{Name: sysctl.Somaxconn, From: "128", To: "4096"}}}, true},
		{"syn backlog", &sysctl.Run{Changes: []results.SysctlChange{{Name: sysctl.TCPMaxSynBacklog, From: "128", To: "4096"}}}, true},
		{"file-max only", &sysctl.Run{Changes: []results.SysctlChange{{Name: "fs.file-max", From: "1", To: "2"}}}, false},
	} {
		if got := KernelNeedsRestart(c.run); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCompleteKernelLimits: what --apply-sysctl raised is listed, the
// host's own value kept, and a configuration's backlogs added; a nil
// result is left alone.
func TestCompleteKernelLimits(t *testing.T) {
	CompleteKernelLimits("/nonexistent", nil, nil, nil, nil)
	k := &results.KernelLimits{Sysctl: map[string]string{sysctl.Somaxconn: "4096"}}
	run := &sysctl.Run{Changes: []results.SysctlChange{{Name: sysctl.Somaxconn, From: "128", To: "4096"}}}
	CompleteKernelLimits("/nonexistent", k, nil, run, nil)
	if len(k.Applied) != 1 || k.Sysctl[sysctl.Somaxconn] != "128" || k.Backlogs != nil {
		t.Fatalf("limits %+v", k)
	}
	CompleteKernelLimits("/nonexistent", k, nil, nil, knob.Defaults())
	if len(k.Backlogs) == 0 {
		t.Errorf("no backlogs for the defaults: %+v", k)
	}
}
