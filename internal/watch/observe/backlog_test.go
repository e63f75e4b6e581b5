package observe

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// TestBacklogWarnings: a socket whose kernel backlog is below the one its
// configuration asked for is named once, with both figures.
func TestBacklogWarnings(t *testing.T) {
	fpm := func(asked, got int64) results.ListenQueue {
		return results.ListenQueue{Socket: "/lab/fpm.sock", Owner: ComponentFPM, Backlog: got, AskedBacklog: asked}
	}
	for _, tc := range []struct {
		name    string
		samples []results.Sample
		want    string // "" none
	}{
		{"capped", []results.Sample{{Queues: []results.ListenQueue{fpm(8192, 4096)}}, {Queues: []results.ListenQueue{fpm(8192, 4096)}}},
			"php-fpm's socket /lab/fpm.sock asked for a listen backlog of 8192 but the kernel gave it 4096: listen(2) caps the backlog at net.core.somaxconn"},
		{"got what it asked", []results.Sample{{Queues: []results.ListenQueue{fpm(511, 511)}}}, ""},
		{"backlog unknown (/proc/net/tcp)", []results.Sample{{Queues: []results.ListenQueue{fpm(8192, -1)}}}, ""},
		{"asked unknown", []results.Sample{{Queues: []results.ListenQueue{fpm(0, 128)}}}, ""},
	} {
		got := strings.Join(backlogWarnings(tc.samples), "\n")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || strings.Count(got, "\n") > 0 {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
