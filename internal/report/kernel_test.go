package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// TestTuneTextKernel: the summary shows the kernel limits, the backlogs
// asked and given, and a capped change's effective value.
func TestTuneTextKernel(t *testing.T) {
	res := &results.Tune{ID: "x", App: "hello", Workload: "front",
		Changes: []results.Effect{{Knob: "listen.backlog", From: "511", To: "1024", Verdict: "not measured", Effective: "128, capped by net.core.somaxconn"}},
		Environment: &results.Environment{KernelLimits: &results.KernelLimits{
			Sysctl:   map[string]string{"net.core.somaxconn": "128", "net.ipv4.ip_local_port_range": "32768 60999"},
			NoFile:   []results.NoFileLimit{{Process: "phptune", Soft: 1024, Hard: 4096}},
			Backlogs: []results.Backlog{{Knob: "listen.backlog", Asked: 1024, Effective: 128, Somaxconn: 128}},
		}}}
	var b bytes.Buffer
	if err := TuneText(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"1024   not measured   (the kernel gave 128, capped by net.core.somaxconn)", "kernel limits (read, not changed unless --apply-sysctl):",
		"  sysctl: somaxconn 128, ip_local_port_range 32768-60999 (28232 ports)", "phptune 1024/4096", "listen.backlog: asked 1024, capped at 128 by somaxconn"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("lacks %q:\n%s", w, b.String())
		}
	}
}
