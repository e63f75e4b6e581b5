package tune

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// TestKernelEvidence: a backlog above somaxconn is not claimed: the change
// carries its effective value, the environment both figures, and a warning
// says what was measured; --apply-sysctl's value is the one in force.
func TestKernelEvidence(t *testing.T) {
	rec, err := knob.Defaults().Apply([]string{"listen.backlog=1024", "nginx.listen_backlog=1024"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		k         *results.KernelLimits
		effective string
		warned    bool
	}{
		{"capped at 128", &results.KernelLimits{Sysctl: map[string]string{"net.core.somaxconn": "128"}}, "128, capped by net.core.somaxconn", true},
		{"room enough", &results.KernelLimits{Sysctl: map[string]string{"net.core.somaxconn": "4096"}}, "", false},
		{"raised for the run", &results.KernelLimits{Sysctl: map[string]string{"net.core.somaxconn": "128"},
			Applied: []results.SysctlChange{{Name: "net.core.somaxconn", From: "128", To: "1024"}}}, "", false},
		{"unread", &results.KernelLimits{Sysctl: map[string]string{}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &results.Tune{Environment: &results.Environment{KernelLimits: tc.k},
				Changes: []results.Effect{{Knob: "listen.backlog", From: "511", To: "1024"}, {Knob: "pm", From: "dynamic", To: "static"}}}
			var warns []string
			kernelEvidence(res, rec, 1000, func(f string, a ...any) { warns = append(warns, fmt.Sprintf(f, a...)) })
			if res.Changes[0].Effective != tc.effective || res.Changes[1].Effective != "" {
				t.Errorf("effective %q, %q", res.Changes[0].Effective, res.Changes[1].Effective)
			}
			if tc.warned != (len(warns) == 2) || (!tc.warned && len(warns) > 0) {
				t.Fatalf("warnings %q", warns)
			}
			if tc.warned && !strings.Contains(warns[0], "listen.backlog=1024 (for 1000 connections) was capped at 128 by net.core.somaxconn") {
				t.Errorf("warning %q", warns[0])
			}
			if tc.name != "unread" && len(tc.k.Backlogs) != 2 {
				t.Errorf("backlogs %+v", tc.k.Backlogs)
			}
		})
	}
}
