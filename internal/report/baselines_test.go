package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// TestBaselinesShown: the summary and the HTML report show what each rule
// of thumb would set and the recommendation against it, or why it was not
// measured; a holdout that could add rounds names its per-look confidence.
func TestBaselinesShown(t *testing.T) {
	tn := loadTune(t)
	tn.Holdout.Confidence, tn.Holdout.PlannedRounds, tn.Holdout.MaxRounds = 0.9844, 4, 8
	tn.Baselines = []results.Baseline{
		{Name: "calculator", Rule: "pm.max_children = 0.9 × MemAvailable 23 GiB / average worker RSS 12.9 MiB, pm dynamic with 25%/75% spares",
			Settings:    []string{"pm.max_children=1646", "pm.start_servers=822"},
			NotMeasured: "does not fit the 1 GiB memory budget: 1,646 workers × 11 MiB (PSS p95) + 150 MiB for the rest = 17.8 GiB"},
		{Name: "2xcores", Rule: "a static pool of 2 × 2 cores", Settings: []string{"pm=static", "pm.max_children=4"},
			Rounds: 4, Ratio: 8.4, CILow: 7.1, CIHigh: 9.9, Confidence: 0.95, P99Ratio: 0.2},
	}
	text := render(t, "text", Run{Tune: tn})
	html := render(t, "html", Run{Tune: tn})
	for _, want := range []string{
		"would set pm.max_children=1646, pm.start_servers=822",
		"not measured: does not fit the 1 GiB memory budget: 1,646 workers",
		"recommended/2xcores 8.40× [7.10, 9.90] (95% CI, 4 rounds)",
		"ratio (98.4% CI)",
		"up to 8 while the interval was undecided",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	for _, want := range []string{`id="baselines"`, "<code>pm.max_children=1646</code>", "8.40× [7.10, 9.90] (4 rounds)", "does not fit the 1 GiB memory budget", "98.44% confidence intervals per look"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
