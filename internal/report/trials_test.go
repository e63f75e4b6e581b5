package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
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
	if w, _ := trialWarnings(tn); len(w) == 0 || !strings.Contains(w[0], "generator was saturated — 1 trials (4)") {
		t.Errorf("trial warnings %q", w)
	}
}

// TestWarningsGroupedByKind: the same kind of warning over many trials is
// one line with the count and the trials; a pool sized to the connections
// being at pm.max_children is a finding, not a warning (the io tune's report
// had buried three steal warnings under 19 such lines).
func TestWarningsGroupedByKind(t *testing.T) {
	tn := &results.Tune{}
	add := func(n, conns, children int, ws ...string) {
		b := &results.Bench{Observation: &results.Observation{Derived: results.Derived{Warnings: ws}}}
		tn.Trials = append(tn.Trials, results.Trial{N: n, Connections: conns, Config: map[string]string{"pm.max_children": strconv.Itoa(children)}, Bench: b})
	}
	pool := func(k int) string {
		return fmt.Sprintf("pool www ran with every worker busy (%d of %d) in 3 samples and up to 9 connections waited in the kernel's queue: the pool is at pm.max_children", k, k)
	}
	for n := 1; n <= 19; n++ {
		add(n, 50, 50, pool(50))
	}
	add(20, 50, 5, pool(5), "CPU steal reached 23% (mean 14%): the hypervisor gave this machine's CPU to a neighbour; throughput and CPU figures of this run are unreliable, repeat it")
	add(21, 50, 50, "CPU steal reached 12% (mean 11%): the hypervisor gave this machine's CPU to a neighbour; throughput and CPU figures of this run are unreliable, repeat it")
	add(22, 50, 50, "observer: something rare")
	w, facts := trialWarnings(tn)
	if len(w) != 2 {
		t.Fatalf("warnings %q, want steal and the rare one: 2 lines", w)
	}
	if !strings.HasPrefix(w[0], "CPU steal above 10%") || !strings.Contains(w[0], "2 trials (20, 21)") {
		t.Errorf("steal: %q", w[0])
	}
	if w[1] != "trial 22: observer: something rare" {
		t.Errorf("an unknown warning: %q", w[1])
	}
	// Every pool no larger than the 50 connections is busy by design (the
	// distro's 5 workers too: that is what the tune is for).
	if len(facts) != 1 || !strings.Contains(facts[0], "20 trials") || !strings.Contains(facts[0], "expected") {
		t.Errorf("facts %q, want the 20 pools no larger than the connections as one finding", facts)
	}
	// A pool larger than the connections and still all busy is a warning.
	add(23, 10, 50, pool(50))
	if w, _ := trialWarnings(tn); len(w) != 3 || !strings.Contains(w[1], "at pm.max_children — 1 trial (23)") {
		t.Errorf("a pool above the connections, saturated: %q", w)
	}
}

// TestWebServerWarningsGrouped: lighttpd's and h2o's warnings about
// php-fpm refusing connections read as one kind across trials and
// servers, h2o at max-connections as another.
func TestWebServerWarningsGrouped(t *testing.T) {
	tn := &results.Tune{}
	add := func(n int, ws ...string) {
		b := &results.Bench{Observation: &results.Observation{Derived: results.Derived{Warnings: ws}}}
		tn.Trials = append(tn.Trials, results.Trial{N: n, Connections: 10, Config: map[string]string{"pm.max_children": "5"}, Bench: b})
	}
	add(1, "lighttpd could not connect to php-fpm 8 times (mod_fastcgi counted the backend overloaded or dead: its listen queue was full): those requests failed; raise listen.backlog, or pm.max_children if the pool is busy")
	add(2, "h2o answered 42 requests with 502 or 503 itself: it could not reach php-fpm (its listen queue full, or php-fpm gone)")
	add(4, "lighttpd sent 14891 FastCGI requests for 2439 client requests: php-fpm dropped connections (its listen queue was full) and lighttpd sent them again, failing some (lighttpd-error.log names each); raise listen.backlog, or pm.max_children if the pool is busy")
	add(3, "h2o held its max-connections (16) in 2 samples: further clients waited in the kernel's queue; raise h2o.max_connections")
	w, facts := trialWarnings(tn)
	if len(w) != 2 || len(facts) != 0 {
		t.Fatalf("warnings %q facts %q, want two kinds", w, facts)
	}
	if !strings.HasPrefix(w[0], "the web server could not reach php-fpm") || !strings.Contains(w[0], "3 trials (1, 2, 4)") {
		t.Errorf("refused connects: %q", w[0])
	}
	if !strings.HasPrefix(w[1], "h2o held its max-connections") || !strings.Contains(w[1], "1 trial (3)") {
		t.Errorf("h2o full: %q", w[1])
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
