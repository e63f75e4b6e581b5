package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// TestTuneTextLiveStart: a tune that started from a live site's
// configuration calls its "before" column live, and one that started from
// the distro's defaults keeps calling it start.
func TestTuneTextLiveStart(t *testing.T) {
	for from, want := range map[string]string{"live": "live", "": "start"} {
		res := &results.Tune{ID: "x", App: "site", Workload: "front", StartFrom: from,
			Holdout: &results.Holdout{Rounds: 2, StartRPS: 100, RecommendedRPS: 120, ThroughputRatio: 1.2}}
		var b bytes.Buffer
		if err := TuneText(&b, res); err != nil {
			t.Fatal(err)
		}
		var header string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "holdout ") {
				header = l
			}
		}
		if f := strings.Fields(header); len(f) < 3 || f[1] != want || f[2] != "recommended" {
			t.Errorf("start from %q: holdout header %q, want %s", from, header, want)
		}
	}
}
