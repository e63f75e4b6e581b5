package locust

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The testdata are a real Locust 2.47 run against a server answering / with
// 200 and /nope with 404 (locust --json-file and --csv).
func TestParseStatsJSON(t *testing.T) {
	data, err := os.ReadFile("testdata/stats.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ParseStatsJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	b := Bench(res, Meta{Target: "http://127.0.0.1:18765", Users: 2})
	if b.Requests != 1366+4174 || b.Errors != 1366 || b.Engine != "locust" || !b.LatencyRounded {
		t.Fatalf("requests %d errors %d engine %q rounded %v", b.Requests, b.Errors, b.Engine, b.LatencyRounded)
	}
	if b.ErrorsByClass["locust_failure"] != 1366 {
		t.Errorf("classes %v: a JSON file has no failure messages", b.ErrorsByClass)
	}
	if b.Latency.P50Ms != 1 || b.Latency.P99Ms != 4 || b.Latency.MaxMs < 14 || b.DurationS < 2.8 || b.DurationS > 3 {
		t.Errorf("latency %+v duration %.2f", b.Latency, b.DurationS)
	}
	if len(b.Series) != 4 || b.Series[0].Requests != 316+1088 {
		t.Errorf("series %+v", b.Series)
	}
}

func TestParseCSV(t *testing.T) {
	st, _ := os.Open("testdata/run_stats.csv")
	defer st.Close()
	fl, _ := os.Open("testdata/run_failures.csv")
	defer fl.Close()
	res, err := ParseCSV(st, fl)
	if err != nil {
		t.Fatal(err)
	}
	b := Bench(res, Meta{})
	if b.Requests != 3031+994 || b.Errors != 994 || b.ErrorsByClass["status_4xx"] != 994 {
		t.Fatalf("requests %d errors %d classes %v", b.Requests, b.Errors, b.ErrorsByClass)
	}
	if b.Latency.P50Ms != 1 || b.Latency.P99Ms != 4 || b.Latency.P999Ms != 8 {
		t.Errorf("latency %+v", b.Latency)
	}
	if b.DurationS < 1.9 || b.DurationS > 2.1 {
		t.Errorf("duration %.2f (4025 requests at 2012.6/s)", b.DurationS)
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{``, `{}`, `[{"num_requests": 1, "num_failures": 2}]`, `[{"num_requests": -1}]`,
		`[{"num_requests": 1, "response_times": {"x": 1}}]`} {
		if _, err := ParseStatsJSON([]byte(in)); err == nil {
			t.Errorf("ParseStatsJSON(%q) accepted it", in)
		}
	}
	for _, in := range []string{"", "a,b\n1,2\n", "Type,Name\n"} {
		if _, err := ParseCSV(strings.NewReader(in), nil); err == nil {
			t.Errorf("ParseCSV(%q) accepted it", in)
		}
	}
}

func TestClassOf(t *testing.T) {
	for msg, want := range map[string]string{
		"CatchResponseError('status_5xx')":                      "status_5xx",
		"unexpected_body":                                       "unexpected_body",
		`CatchResponseError("redirect")`:                        "redirect",
		"LocustBadStatusCode(code=404)":                         "status_4xx",
		"LocustBadStatusCode(code=502)":                         "status_5xx",
		"ConnectionRefusedError(111, 'Connection refused')":     "connect_refused",
		"ConnectionResetError(104, 'Connection reset by peer')": "reset",
		"timeout('timed out')":                                  "read_timeout",
		"something else":                                        "locust_failure",
	} {
		if got := ClassOf(msg); got != want {
			t.Errorf("ClassOf(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestParseResult(t *testing.T) {
	doc := `{"version": "2.47.0", "workers": 2, "stats": [{"name": "GET /", "method": "GET", "start_time": 10, "last_request_timestamp": 12,
	 "num_requests": 10, "num_failures": 2, "total_response_time": 50, "min_response_time": 1, "max_response_time": 20,
	 "response_times": {"1": 5, "5": 4, "20": 1}}],
	 "errors": [{"method": "GET", "name": "GET /", "error": "CatchResponseError('status_5xx')", "occurrences": 2}]}`
	res, err := ParseResult(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	b := Bench(res, Meta{Users: 4, RateAskedRPS: 10, RateSchedule: "10"})
	if b.Workers != 2 || b.EngineVersion != "2.47.0" || b.ErrorsByClass["status_5xx"] != 2 || b.ThroughputRPS != 4 {
		t.Errorf("%+v", b)
	}
	if b.Model != "open" || b.RateAchievedRPS != 5 || !strings.Contains(strings.Join(b.Warnings, "\n"), "does not correct coordinated omission") ||
		!strings.Contains(strings.Join(b.Warnings, "\n"), "50.0% short") {
		t.Errorf("model %s achieved %.1f warnings %q", b.Model, b.RateAchievedRPS, b.Warnings)
	}
	if b.Latency.P50Ms != 1 || b.Latency.P90Ms != 5 || b.Latency.P99Ms != 20 {
		t.Errorf("latency %+v", b.Latency)
	}
}

func FuzzParseStatsJSON(f *testing.F) {
	data, _ := os.ReadFile("testdata/stats.json")
	f.Add(data)
	f.Add([]byte(`[{"num_requests": 3, "response_times": {"1.5": 2}, "num_reqs_per_sec": {"1": 3}}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := ParseStatsJSON(in)
		if err != nil {
			return
		}
		b := Bench(res, Meta{})
		if b.Errors > b.Requests && b.Requests >= 0 {
			t.Fatalf("%d errors of %d requests", b.Errors, b.Requests)
		}
	})
}

func FuzzParseCSV(f *testing.F) {
	st, _ := os.ReadFile("testdata/run_stats.csv")
	fl, _ := os.ReadFile("testdata/run_failures.csv")
	f.Add(st, fl)
	f.Fuzz(func(t *testing.T, stats, failures []byte) {
		res, err := ParseCSV(bytes.NewReader(stats), bytes.NewReader(failures))
		if err != nil {
			return
		}
		Bench(res, Meta{})
	})
}

func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"version": "2.47.0", "stats": [], "errors": [{"error": "x", "occurrences": 1}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if res, err := ParseResult(bytes.NewReader(in)); err == nil {
			Bench(res, Meta{})
		}
	})
}
