package report

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestCompareRuns(t *testing.T) {
	native := func(id, target string) *results.Bench {
		return &results.Bench{ID: id, Target: target, Model: "closed", Connections: 16, Requests: 1000, Errors: 10,
			ThroughputRPS: 400, Latency: results.Latency{P50Ms: 20, P95Ms: 40, P99Ms: 80},
			StatusCodes: map[string]int64{"200": 990, "502": 10}}
	}
	locust := func(id, target string) *results.Bench {
		return &results.Bench{ID: id, Target: target, Model: "closed", Connections: 16, Requests: 900, Engine: "locust", EngineVersion: "2.47.0",
			Workers: 2, LatencyRounded: true, ThroughputRPS: 360, Latency: results.Latency{P50Ms: 21, P95Ms: 150, P99Ms: 1200},
			StatusUnknown: 900}
	}
	for _, c := range []struct {
		name          string
		runs          []StoredBench
		force         bool
		refused       string // a part of the refusal; "" none
		notes, forced []string
	}{
		{name: "a lab's new port is the same target",
			runs:  []StoredBench{{Bench: native("a", "http://127.0.0.1:43491/"), Workload: "front"}, {Bench: locust("b", "http://localhost:8080/")}},
			notes: []string{"b: the status of 900 of its 900 requests is not known", "latency ratios set Locust's rounded buckets"}},
		{name: "an imported run without a target is on trust",
			runs:  []StoredBench{{Bench: native("a", "http://10.0.0.5/")}, {Bench: locust("b", "(imported from Locust)")}},
			notes: []string{"b's target is not known", "the status of 900", "latency ratios"}},
		{name: "different targets are refused",
			runs:    []StoredBench{{Bench: native("a", "http://10.0.0.5/")}, {Bench: locust("b", "http://10.0.0.6/")}},
			refused: "a loaded http://10.0.0.5/, b http://10.0.0.6/"},
		{name: "another port of a remote host is another target",
			runs:    []StoredBench{{Bench: native("a", "http://10.0.0.5:8080/")}, {Bench: native("b", "http://10.0.0.5:8081/")}},
			refused: "a loaded"},
		{name: "different workloads are refused",
			runs:    []StoredBench{{Bench: native("a", "http://127.0.0.1:1/"), Workload: "front"}, {Bench: native("b", "http://127.0.0.1:2/"), Workload: "mix"}},
			refused: "a ran the workload front, b mix"},
		{name: "--force lets them through, and says so",
			runs:   []StoredBench{{Bench: native("a", "http://127.0.0.1:1/"), Workload: "front"}, {Bench: native("b", "http://127.0.0.1:2/"), Workload: "mix"}},
			force:  true,
			forced: []string{"a ran the workload front, b mix"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CompareRuns(c.runs, c.force)
			var nc *NotComparableError
			if c.refused != "" {
				if !errors.As(err, &nc) || !strings.Contains(err.Error(), c.refused) {
					t.Fatalf("err %v, want a refusal with %q", err, c.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(got.Notes, "\n")
			for _, n := range c.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q, want one with %q", got.Notes, n)
				}
			}
			if strings.Join(got.Forced, "\n") != strings.Join(c.forced, "\n") {
				t.Errorf("forced %q, want %q", got.Forced, c.forced)
			}
		})
	}
}

func TestCompareRunsRatios(t *testing.T) {
	a := &results.Bench{ID: "a", Model: "closed", Requests: 100, Errors: 5, ThroughputRPS: 400, Latency: results.Latency{P50Ms: 20, P99Ms: 80}}
	b := &results.Bench{ID: "b", Model: "closed", Engine: "locust", LatencyRounded: true, Requests: 100, ThroughputRPS: 360,
		Latency: results.Latency{P50Ms: 21, P95Ms: 150, P99Ms: 1200}}
	got, err := CompareRuns([]StoredBench{{Bench: a}, {Bench: b}}, false)
	if err != nil {
		t.Fatal(err)
	}
	r0, r1 := got.Runs[0], got.Runs[1]
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	if r0.Engine != "phptune" || r0.Latency != "hdrhistogram" || r0.ThroughputRatio != 1 || r0.ErrorRate != 0.05 || r0.RoundingMs != nil {
		t.Errorf("first %+v", r0)
	}
	if !near(r1.ThroughputRatio, 0.9) || !near(r1.P50Ratio, 1.05) || r1.P95Ratio != 0 || !near(r1.P99Ratio, 15) {
		t.Errorf("ratios %v %v %v %v (p95: the first has none)", r1.ThroughputRatio, r1.P50Ratio, r1.P95Ratio, r1.P99Ratio)
	}
	if r1.Latency != "locust_buckets" || len(r1.RoundingMs) != 3 || r1.RoundingMs[0] != 0.5 || r1.RoundingMs[1] != 5 || r1.RoundingMs[2] != 50 {
		t.Errorf("latency %q rounding %v", r1.Latency, r1.RoundingMs)
	}
	if _, err := CompareRuns([]StoredBench{{Bench: a}}, false); err == nil {
		t.Error("one run compared")
	}
}

func TestLocustRounding(t *testing.T) {
	for ms, want := range map[float64]float64{0: 0.5, 99: 0.5, 100: 5, 999: 5, 1000: 50, 9999: 50, 10000: 500} {
		if got := LocustRounding(ms); got != want {
			t.Errorf("LocustRounding(%v) = %v, want %v", ms, got, want)
		}
	}
}

// A run whose web server logged PHP's messages says so in a line of its
// own; the others are not listed.
func TestCompareRunsPHPErrors(t *testing.T) {
	run := func(id string, php *results.PHPErrors) StoredBench {
		return StoredBench{Bench: &results.Bench{ID: id, Target: "http://127.0.0.1:1/", Model: "closed", Connections: 4, Requests: 100,
			ThroughputRPS: 50, ServerErrors: &results.ServerErrors{PHP: php}}}
	}
	php := &results.PHPErrors{Classes: []results.PHPErrorClass{{Class: "warning", Count: 3, Files: []results.PHPErrorFile{{File: "\x1b[2Jindex.php", Count: 3, Example: "w"}}}}}
	c, err := CompareRuns([]StoredBench{run("first", nil), run("second", php)}, false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := RunsComparisonText(&b, c); err != nil {
		t.Fatal(err)
	}
	want := "PHP's own messages in the web server's log (runs without any not listed)\n  second  PHP logged 3 warnings (top: \\x1b[2Jindex.php 3) during the run\n"
	if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "  first   PHP") {
		t.Errorf("comparison:\n%s\nwant it to hold:\n%s", b.String(), want)
	}
}
