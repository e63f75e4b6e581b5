package locust

import (
	"bytes"
	"fmt"
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
	if b.StatusCodes != nil || !strings.Contains(strings.Join(b.Warnings, "\n"), "status codes and error classes are not known") {
		t.Errorf("status codes %v, warnings %q: a JSON file knows none, and the record must say so", b.StatusCodes, b.Warnings)
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
	if b.StatusCodes["404"] != 994 || len(b.StatusCodes) != 1 || !strings.Contains(strings.Join(b.Warnings, "\n"), "the 3031 successful requests' are not known") {
		t.Errorf("status codes %v, warnings %q", b.StatusCodes, b.Warnings)
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
		"CatchResponseError('status_5xx (status 502)')":         "status_5xx",
		"read_timeout (status 0)":                               "read_timeout",
		"CatchResponseError('status_4xxx')":                     "locust_failure",
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

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		msg  string
		code int
		ok   bool
	}{
		{"CatchResponseError('status_5xx (status 502)')", 502, true},
		{"CatchResponseError('status_4xx (status 404)')", 404, true},
		{"CatchResponseError('connect_refused (status 0)')", 0, true},
		{"redirect (status 301)", 301, true},
		{"LocustBadStatusCode(code=404)", 404, true},
		{"HTTPError('500 Server Error: INTERNAL SERVER ERROR for url: /x')", 500, true},
		{"HTTPError('404 Client Error: Not Found for url: /x')", 404, true},
		{"CatchResponseError('status_5xx')", 0, false},
		{"ConnectionRefusedError(111, 'Connection refused')", 0, false},
		{"(status 12345)", 0, false},
		{"code=", 0, false},
		{"", 0, false},
	} {
		code, ok := StatusOf(c.msg)
		if code != c.code || ok != c.ok {
			t.Errorf("StatusOf(%q) = %d, %v; want %d, %v", c.msg, code, ok, c.code, c.ok)
		}
	}
}

// TestStatusCodes maps each way a run comes back into the record's status
// codes, and says what is not known.
func TestStatusCodes(t *testing.T) {
	for _, c := range []struct {
		name             string
		res              Result
		requests, errors int64
		want             map[string]int64
		unknown          int64
		note             string // a part of the note; "" none
	}{
		{name: "counted by the locustfile, across names, without 0",
			res: Result{StatusCodes: map[string]map[string]int64{
				"GET /":     {"200": 90, "500": 3, "0": 2},
				"GET /nope": {"404": 5},
			}},
			requests: 100, errors: 10, want: map[string]int64{"200": 90, "404": 5, "500": 3}},
		{name: "counted, nothing answered",
			res: Result{StatusCodes: map[string]map[string]int64{"GET /": {"0": 4}}}, requests: 4, errors: 4},
		{name: "failures' messages only",
			res: Result{Errors: []Failure{
				{Error: "CatchResponseError('status_5xx (status 502)')", Occurrences: 7},
				{Error: "CatchResponseError('read_timeout (status 0)')", Occurrences: 2},
				{Error: "LocustBadStatusCode(code=404)", Occurrences: 1},
				{Error: "ConnectionResetError(104, 'Connection reset by peer')", Occurrences: 3},
			}},
			requests: 100, errors: 13, want: map[string]int64{"502": 7, "404": 1}, unknown: 90,
			note: "known only for the 10 of 13 failed requests"},
		{name: "JSON statistics without failures",
			res: Result{}, requests: 50, errors: 5, unknown: 50, note: "status codes and error classes are not known"},
		{name: "no failure, nothing counted",
			res: Result{}, requests: 50, unknown: 50, note: "the 50 requests all succeeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, unknown, note := StatusCodes(&c.res, c.requests, c.errors)
			if fmt.Sprint(got) != fmt.Sprint(c.want) || unknown != c.unknown {
				t.Errorf("codes %v, %d unknown; want %v, %d", got, unknown, c.want, c.unknown)
			}
			if (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
				t.Errorf("note %q, want one with %q", note, c.note)
			}
		})
	}
}

func TestParseResultStatusCodes(t *testing.T) {
	for doc, want := range map[string]string{
		`{"stats": [], "status_codes": {"GET /": {"200": 3, "0": 1}}}`: "map[GET /:map[0:1 200:3]]",
		`{"stats": [], "status_codes": {}}`:                            "map[]",
		`{"stats": []}`:                                                "map[]",
	} {
		res, err := ParseResult(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(res.StatusCodes); got != want {
			t.Errorf("%s: %s, want %s", doc, got, want)
		}
	}
	if res, _ := ParseResult(strings.NewReader(`{"stats": []}`)); res.StatusCodes != nil {
		t.Errorf("a document without status_codes: %v, want nil (not counted)", res.StatusCodes)
	}
	for _, bad := range []string{`{"status_codes": {"GET /": {"abc": 1}}}`, `{"status_codes": {"GET /": {"200": -1}}}`, `{"status_codes": {"GET /": {"1000": 1}}}`} {
		if _, err := ParseResult(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseResult(%s) accepted it", bad)
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
