package search_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/search"
	"github.com/phptune/phptune/internal/decide/search/sim"
	"github.com/phptune/phptune/internal/model/results"
)

// fatals is a run's record of n fatal errors of PHP's in file.
func fatals(n int64, file, example string) *results.ServerErrors {
	return &results.ServerErrors{PHP: &results.PHPErrors{Classes: []results.PHPErrorClass{{Class: "fatal", Count: n,
		Files: []results.PHPErrorFile{{File: file, Count: n, Example: example}}}}}}
}

const undefined = "Uncaught Error: Call to undefined function imap_open()"

func TestBreaks(t *testing.T) {
	cases := []struct {
		name     string
		inc, own *results.Bench
		want     string
	}{
		{"clean", &results.Bench{}, &results.Bench{}, ""},
		{"missing run", nil, &results.Bench{ServerErrors: fatals(3, "page.php", undefined)}, ""},
		{"new fatal", &results.Bench{}, &results.Bench{ServerErrors: fatals(42, "page.php", undefined)},
			"42 fatal PHP errors in its trial that the incumbent's did not log, first: " + undefined + " in page.php"},
		{"one new fatal", &results.Bench{ServerErrors: &results.ServerErrors{}}, &results.Bench{ServerErrors: fatals(1, "", "Allowed memory size exhausted")},
			"1 fatal PHP error in its trial that the incumbent's did not log, first: Allowed memory size exhausted"},
		{"the same fatal on both", &results.Bench{ServerErrors: fatals(40, "page.php", undefined)}, &results.Bench{ServerErrors: fatals(44, "page.php", undefined)}, ""},
		{"another fatal than the incumbent's", &results.Bench{ServerErrors: fatals(40, "page.php", undefined)}, &results.Bench{ServerErrors: fatals(2, "poly.php", "Cannot redeclare function array_find()")},
			"2 fatal PHP errors in its trial that the incumbent's did not log, first: Cannot redeclare function array_find() in poly.php"},
		{"a terminal escape in the message", &results.Bench{}, &results.Bench{ServerErrors: fatals(1, "a.php", "x\x1b[2Jy")},
			`1 fatal PHP error in its trial that the incumbent's did not log, first: x\x1b[2Jy in a.php`},
		{"title changed", &results.Bench{}, &results.Bench{PageDrift: `the page's title is now "Error" (it was "My Site" at the start)`},
			`its page is not the site's: the page's title is now "Error" (it was "My Site" at the start)`},
		{"both pages changed", &results.Bench{PageDrift: "the page now answers 500 (it answered 200 at the start)"}, &results.Bench{PageDrift: "the page now answers 500 (it answered 200 at the start)"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := search.Breaks(c.inc, c.own); got != c.want {
				t.Errorf("Breaks:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestRaceRejectsBrokenChallenger: a challenger far faster than the
// incumbent (validate_timestamps=off at +40% on a CPU-bound page) is adopted — unless its
// trials log fatal PHP errors the incumbent's do not, or its page's title
// changes: then it is rejected, and its verdict says why.
func TestRaceRejectsBrokenChallenger(t *testing.T) {
	w := sim.CPUBound()
	w.VTOffGain, w.CPUNoise, w.Noise, w.StealProb, w.TCPCost, w.SwitchCost, w.JITGain = 0.4, 0.01, 0.01, 0, 0, 0, 0
	cases := []struct {
		name    string
		mark    func(inc bool, b *results.Bench)
		adopted bool
		verdict string
	}{
		{"works", func(bool, *results.Bench) {}, true, ""},
		{"fatal errors", func(inc bool, b *results.Bench) {
			if !inc {
				b.ServerErrors = fatals(42, "page.php", undefined)
			}
		}, false, "rejected: 42 fatal PHP errors in its trial that the incumbent's did not log, first: " + undefined + " in page.php"},
		{"fatal errors on both", func(_ bool, b *results.Bench) { b.ServerErrors = fatals(42, "page.php", undefined) }, true, ""},
		{"another title", func(inc bool, b *results.Bench) {
			if !inc {
				b.PageDrift = `the page's title is now "Fatal error" (it was "My Site" at the start)`
			}
		}, false, `rejected: its page is not the site's: the page's title is now "Fatal error"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := domain(t, search.Options{Conns: 20, Cores: 2, Challenges: raceChallenges[2:4]})
			st := sim.New(w, 7)
			ctx := context.Background()
			for batch := d.Ask(); len(batch) > 0; batch = d.Ask() {
				for _, cand := range batch {
					if err := st.Apply(ctx, cand.Config); err != nil {
						t.Fatal(err)
					}
					b, err := st.Measure(ctx, cand.Conns, 10*time.Second, 2*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					if cand.Phase == search.PhaseCategorical {
						c.mark(!strings.HasPrefix(cand.Label, "vt=off "), b)
					}
					d.Tell(cand, search.Outcome{Bench: b})
				}
			}
			dec := decisionOf(d.Recommend(), "vt=off")
			if dec.Adopted != c.adopted || !strings.HasPrefix(dec.Verdict, c.verdict) {
				t.Errorf("vt=off: adopted %v, verdict %q; want adopted %v, verdict %q", dec.Adopted, dec.Verdict, c.adopted, c.verdict)
			}
			if !c.adopted && d.Recommend().Config["opcache.validate_timestamps"] == "off" {
				t.Errorf("the recommendation has the rejected challenger's change")
			}
		})
	}
}
