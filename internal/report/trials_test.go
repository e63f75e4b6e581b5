package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/results"
)

func TestOrderValues(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"10", "5", "20"}, []string{"5", "10", "20"}},
		{[]string{"128M", "1G", "64M", "0"}, []string{"0", "64M", "128M", "1G"}},
		{[]string{"static", "dynamic", "ondemand"}, []string{"static", "dynamic", "ondemand"}},
	} {
		if got := orderValues(slices.Clone(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("orderValues(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestTrialObjective(t *testing.T) {
	b := &results.Bench{ThroughputRPS: 100, Latency: results.Latency{P99Ms: 9},
		Series: []results.Second{{Requests: 98}, {Requests: 102}, {Requests: 101, Errors: 1}, {Requests: 100}}}
	e := trialObjective(b, "throughput")
	if e.V != 100 || !(e.Lo < 100 && e.Hi > 100) || math.Abs((e.Hi-100)-(100-e.Lo)) > 1e-9 {
		t.Errorf("throughput %+v: want 100 inside a symmetric interval", e)
	}
	// t(0.975, 3) = 3.182; sd of 98,102,100,100 = 1.633; half-width 2.598.
	if h := e.Hi - e.V; math.Abs(h-2.598) > 0.01 {
		t.Errorf("half-width %.3f, want 2.598", h)
	}
	if e := trialObjective(&results.Bench{ThroughputRPS: 5}, "throughput"); e.Lo != 5 || e.Hi != 5 {
		t.Errorf("no seconds: %+v, want a point", e)
	}
}

func TestKnobChartsAndCurves(t *testing.T) {
	tn := loadTune(t)
	charts := knobCharts(tn)
	var names []string
	for _, c := range charts {
		names = append(names, c.Knob)
		if len(c.Values) < 2 || len(c.Points) == 0 {
			t.Errorf("knob %s: %d values, %d points", c.Knob, len(c.Values), len(c.Points))
		}
	}
	if !slices.Contains(names, "pm") || !slices.Contains(names, "pm.max_children") {
		t.Errorf("knob charts %v lack pm or pm.max_children", names)
	}
	curves := configCurves(tn)
	if len(curves) != 2 || curves[0].Label != "start" || curves[1].Label != "recommended" {
		t.Fatalf("curves %+v", curves)
	}
	for _, c := range curves {
		for _, p := range c.Points {
			if !(p.RPS.Lo <= p.RPS.V && p.RPS.V <= p.RPS.Hi) || len(p.Trials) == 0 {
				t.Errorf("%s at %d: %+v", c.Label, p.Connections, p)
			}
		}
	}
	tn.Trials[3].Bench.Generator.Saturated = true
	if w := trialWarnings(tn); len(w) == 0 || !strings.Contains(w[0], "generator was saturated in trials 4") {
		t.Errorf("trial warnings %q", w)
	}
}

// TestConcurrencyTable: curve-phase trials (start and recommended at other
// concurrencies) become points of the curves and rows of the text table.
func TestConcurrencyTable(t *testing.T) {
	tn := loadTune(t)
	var hold results.Trial
	for _, tr := range tn.Trials {
		if tr.Phase == "holdout" && tr.Bench != nil {
			hold = tr
			break
		}
	}
	if hold.Bench == nil {
		t.Fatal("the fixture has no holdout trial")
	}
	add := func(cfg map[string]string, conns int, rps float64, status string) {
		b := *hold.Bench
		b.ThroughputRPS = rps
		tn.Trials = append(tn.Trials, results.Trial{N: len(tn.Trials) + 1, Phase: "curve", Config: cfg, Connections: conns, Status: status, Bench: &b})
	}
	add(tn.Start, 100, 1111, "ok")
	add(tn.Recommended, 100, 2222, "violates") // past the SLO: still a point of the curve
	add(tn.Start, 2, 333, "ok")
	add(tn.Recommended, 2, 444, "failed")
	for _, c := range configCurves(tn) {
		var conns []int
		for _, p := range c.Points {
			conns = append(conns, p.Connections)
		}
		if !slices.Contains(conns, 100) || (c.Label == "start") != slices.Contains(conns, 2) {
			t.Errorf("%s curve at %v", c.Label, conns)
		}
	}
	var b strings.Builder
	if err := TuneText(&b, tn); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"connections", "1111.0", "2222.0", "333.0"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "444.0") {
		t.Errorf("a failed trial made it into the table:\n%s", text)
	}
}
