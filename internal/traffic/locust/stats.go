package locust

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Entry is one line of Locust's statistics: the requests of one name and
// method, as its --json output and its JSON file hold them.
type Entry struct {
	Name                string  `json:"name"`
	Method              string  `json:"method"`
	StartTime           float64 `json:"start_time"`
	LastRequestTime     float64 `json:"last_request_timestamp"`
	NumRequests         int64   `json:"num_requests"`
	NumFailures         int64   `json:"num_failures"`
	TotalResponseTimeMs float64 `json:"total_response_time"`
	MinResponseTimeMs   float64 `json:"min_response_time"`
	MaxResponseTimeMs   float64 `json:"max_response_time"`
	TotalContentLength  int64   `json:"total_content_length"`
	// ResponseTimes counts requests by response time in milliseconds,
	// rounded the way Locust rounds them: to 1 ms below 100 ms, to 10 ms
	// below 1 s, to 100 ms above.
	ResponseTimes map[string]int64 `json:"response_times"`
	// NumReqsPerSec counts requests by Unix second.
	NumReqsPerSec map[string]int64 `json:"num_reqs_per_sec"`
	NumFailPerSec map[string]int64 `json:"num_fail_per_sec"`
}

// Failure is one line of Locust's failure statistics: how often one
// request failed with one message.
type Failure struct {
	Method, Name, Error string
	Occurrences         int64
}

// Result is a finished Locust run as phptune reads it: the statistics
// entries, the failures, and Locust's version and worker count when known.
type Result struct {
	Version string    `json:"version"`
	Stats   []Entry   `json:"stats"`
	Errors  []Failure `json:"-"`
	Workers int       `json:"workers"`
	// Percentiles, from a CSV summary (no response-time buckets): the
	// aggregate line's 50% ... 100% columns in milliseconds.
	Percentiles map[string]float64 `json:"-"`
	// StatusCodes counts responses by request name and status code ("0":
	// no response), as the locustfile phptune writes tallies them; nil when
	// the run did not count them (Locust's own statistics do not).
	StatusCodes map[string]map[string]int64 `json:"-"`
}

// maxDoc bounds what is read of a statistics document.
const maxDoc = 256 << 20

// ParseResult reads the document the generated locustfile writes to
// PHPTUNE_LOCUST_RESULT_FD: {"version", "stats": [...], "errors": [...],
// "workers"}.
func ParseResult(r io.Reader) (*Result, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDoc+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDoc {
		return nil, fmt.Errorf("Locust's result is larger than %d MiB", maxDoc>>20)
	}
	var doc struct {
		Version string    `json:"version"`
		Stats   []Entry   `json:"stats"`
		Workers int       `json:"workers"`
		Errors  []failure `json:"errors"`
		// StatusCodes is absent in a document of a locustfile that did
		// not count them (phptune before it did).
		StatusCodes map[string]map[string]int64 `json:"status_codes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("reading Locust's result: %v", err)
	}
	res := &Result{Version: doc.Version, Stats: doc.Stats, Workers: doc.Workers, StatusCodes: doc.StatusCodes}
	if doc.StatusCodes == nil && bytes.Contains(data, []byte(`"status_codes"`)) {
		// Present but empty ({} or null): counted, and none answered.
		res.StatusCodes = map[string]map[string]int64{}
	}
	for _, f := range doc.Errors {
		res.Errors = append(res.Errors, Failure(f))
	}
	return res, res.check()
}

type failure struct {
	Method      string `json:"method"`
	Name        string `json:"name"`
	Error       string `json:"error"`
	Occurrences int64  `json:"occurrences"`
}

// ParseStatsJSON reads Locust's --json output or --json-file: a list of
// entries. It has no failure messages: failures then count as the class
// "locust_failure".
func ParseStatsJSON(data []byte) (*Result, error) {
	if len(data) > maxDoc {
		return nil, fmt.Errorf("the statistics file is larger than %d MiB", maxDoc>>20)
	}
	data = bytes.TrimSpace(data)
	var entries []Entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("not Locust's JSON statistics (a list of entries, from locust --json or --json-file): %v", err)
	}
	res := &Result{Stats: entries}
	return res, res.check()
}

func (r *Result) check() error {
	for i, e := range r.Stats {
		if e.NumRequests < 0 || e.NumFailures < 0 || e.NumFailures > e.NumRequests || e.TotalContentLength < 0 {
			return fmt.Errorf("Locust's statistics entry %d (%q) has impossible counts: %d requests, %d failures", i+1, e.Name, e.NumRequests, e.NumFailures)
		}
		for k, v := range e.ResponseTimes {
			if _, err := strconv.ParseFloat(k, 64); err != nil || v < 0 {
				return fmt.Errorf("Locust's statistics entry %d (%q): response-time bucket %q=%d is not a count of milliseconds", i+1, e.Name, k, v)
			}
		}
	}
	for name, codes := range r.StatusCodes {
		for code, n := range codes {
			if c, err := strconv.Atoi(code); err != nil || c < 0 || c > 999 || n < 0 {
				return fmt.Errorf("Locust's status counts of %q: %q=%d is not a count of a status code", name, code, n)
			}
		}
	}
	for _, f := range r.Errors {
		if f.Occurrences < 0 {
			return fmt.Errorf("Locust's failure %q counts %d occurrences", f.Error, f.Occurrences)
		}
	}
	return nil
}

// ParseCSV reads Locust's --csv PREFIX files: PREFIX_stats.csv (one line per
// request and an "Aggregated" line) and, when given, PREFIX_failures.csv.
// The CSV has percentiles but no response-time buckets nor timestamps: the
// duration is the aggregate's requests over its requests per second.
func ParseCSV(stats, failures io.Reader) (*Result, error) {
	rows, err := readCSV(stats)
	if err != nil {
		return nil, fmt.Errorf("reading the _stats.csv file: %v", err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("the _stats.csv file has no statistics line")
	}
	col := columns(rows[0])
	for _, need := range []string{"Type", "Name", "Request Count", "Failure Count", "Average Response Time", "Min Response Time", "Max Response Time", "Average Content Size", "Requests/s"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("the _stats.csv file has no %q column: not Locust's --csv statistics", need)
		}
	}
	res := &Result{Percentiles: map[string]float64{}}
	var agg []string
	for _, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			return nil, fmt.Errorf("the _stats.csv file has a line of %d fields under a header of %d", len(row), len(rows[0]))
		}
		if row[col["Name"]] == "Aggregated" && row[col["Type"]] == "" {
			agg = row
			continue
		}
		e, err := csvEntry(row, col)
		if err != nil {
			return nil, err
		}
		res.Stats = append(res.Stats, e)
	}
	if agg != nil {
		rps, _ := strconv.ParseFloat(agg[col["Requests/s"]], 64)
		n, _ := strconv.ParseInt(agg[col["Request Count"]], 10, 64)
		if rps > 0 && n > 0 {
			// The CSV has no timestamps: spread the run over the duration
			// its request rate implies, on entry 0.
			if len(res.Stats) > 0 {
				res.Stats[0].StartTime = 0
				res.Stats[0].LastRequestTime = float64(n) / rps
			}
		}
		for name, i := range col {
			if strings.HasSuffix(name, "%") {
				if v, err := strconv.ParseFloat(agg[i], 64); err == nil && v >= 0 && !math.IsInf(v, 0) {
					res.Percentiles[strings.TrimSuffix(name, "%")] = v
				}
			}
		}
	}
	if failures != nil {
		if res.Errors, err = ParseFailuresCSV(failures); err != nil {
			return nil, err
		}
	}
	return res, res.check()
}

// ParseFailuresCSV reads Locust's PREFIX_failures.csv: one line per request
// and failure message, with its occurrences.
func ParseFailuresCSV(r io.Reader) ([]Failure, error) {
	frows, err := readCSV(r)
	if err != nil {
		return nil, fmt.Errorf("reading the _failures.csv file: %v", err)
	}
	if len(frows) == 0 {
		return nil, nil
	}
	fc := columns(frows[0])
	for _, need := range []string{"Method", "Name", "Error", "Occurrences"} {
		if _, ok := fc[need]; !ok {
			return nil, fmt.Errorf("the _failures.csv file has no %q column", need)
		}
	}
	var out []Failure
	for _, row := range frows[1:] {
		if len(row) != len(frows[0]) {
			return nil, fmt.Errorf("the _failures.csv file has a line of %d fields under a header of %d", len(row), len(frows[0]))
		}
		n, err := strconv.ParseInt(row[fc["Occurrences"]], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("the _failures.csv file: occurrences %q is not a count", row[fc["Occurrences"]])
		}
		out = append(out, Failure{Method: row[fc["Method"]], Name: row[fc["Name"]], Error: row[fc["Error"]], Occurrences: n})
	}
	return out, nil
}

func readCSV(r io.Reader) ([][]string, error) {
	cr := csv.NewReader(io.LimitReader(r, maxDoc))
	cr.FieldsPerRecord = -1
	return cr.ReadAll()
}

func columns(header []string) map[string]int {
	m := map[string]int{}
	for i, h := range header {
		m[strings.TrimSpace(h)] = i
	}
	return m
}

func csvEntry(row []string, col map[string]int) (Entry, error) {
	e := Entry{Method: row[col["Type"]], Name: row[col["Name"]]}
	var err error
	num := func(name string) float64 {
		if err != nil {
			return 0
		}
		v, perr := strconv.ParseFloat(row[col[name]], 64)
		if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			err = fmt.Errorf("the _stats.csv file: %s %q of %q is not a number", name, row[col[name]], e.Name)
		}
		return v
	}
	n := num("Request Count")
	f := num("Failure Count")
	avg := num("Average Response Time")
	e.MinResponseTimeMs = num("Min Response Time")
	e.MaxResponseTimeMs = num("Max Response Time")
	size := num("Average Content Size")
	if err != nil {
		return e, err
	}
	if n < 0 || n > 1e15 || f < 0 || f > n || size < 0 || size > 1e12 {
		return e, fmt.Errorf("the _stats.csv file: impossible counts for %q", e.Name)
	}
	e.NumRequests, e.NumFailures = int64(n), int64(f)
	e.TotalResponseTimeMs = avg * n
	e.TotalContentLength = int64(size * n)
	return e, nil
}

// Classes maps the failures to phptune's error classes: the generated
// locustfile fails a request with the class's name, which Locust shows
// inside its own wrapper (CatchResponseError('status_5xx')); a failure of
// another locustfile is mapped from Locust's own messages (a bad status
// code, a refused or reset connection, a timeout) or else counted as
// "locust_failure".
func Classes(fs []Failure) map[string]int64 {
	out := map[string]int64{}
	for _, f := range fs {
		out[ClassOf(f.Error)] += f.Occurrences
	}
	return out
}

var knownClasses = []string{"connect_refused", "connect_timeout", "reset", "closed_early", "read_timeout",
	"protocol", "redirect", "status_4xx", "status_5xx", "unexpected_status", "unexpected_body"}

// ClassOf is the phptune error class of one Locust failure message.
func ClassOf(msg string) string {
	for _, c := range knownClasses {
		if namesClass(msg, c) {
			return c
		}
	}
	l := strings.ToLower(msg)
	if i := strings.Index(l, "code="); i >= 0 {
		if code, err := strconv.Atoi(strings.TrimRight(l[i+5:min(len(l), i+8)], ")")); err == nil {
			switch {
			case code >= 500:
				return "status_5xx"
			case code >= 400:
				return "status_4xx"
			case code >= 300:
				return "redirect"
			}
		}
	}
	switch {
	case strings.Contains(l, "refused"):
		return "connect_refused"
	case strings.Contains(l, "reset") || strings.Contains(l, "broken pipe"):
		return "reset"
	case strings.Contains(l, "timed out") || strings.Contains(l, "timeout"):
		return "read_timeout"
	}
	return "locust_failure"
}

// roundedBuckets returns the response-time buckets of all entries merged,
// sorted by time.
func roundedBuckets(entries []Entry) (ms []float64, counts []int64) {
	m := map[float64]int64{}
	for _, e := range entries {
		for k, v := range e.ResponseTimes {
			t, err := strconv.ParseFloat(k, 64)
			if err == nil && v > 0 {
				m[t] += v
			}
		}
	}
	for t := range m {
		ms = append(ms, t)
	}
	slices.Sort(ms)
	for _, t := range ms {
		counts = append(counts, m[t])
	}
	return ms, counts
}

// percentile is the smallest bucket at or below which a fraction p of the
// counted requests lie.
func percentile(ms []float64, counts []int64, p float64) float64 {
	var total int64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	need := int64(math.Ceil(p * float64(total)))
	if need < 1 {
		need = 1
	}
	var seen int64
	for i, c := range counts {
		seen += c
		if seen >= need {
			return ms[i]
		}
	}
	return ms[len(ms)-1]
}

// namesClass reports whether msg is class c as the generated locustfile
// fails a request: "c" or "c (status N)", alone or quoted inside Locust's
// wrapper (CatchResponseError('c (status N)')).
func namesClass(msg, c string) bool {
	for _, open := range []string{"", "'", "\""} {
		i := strings.Index(msg, open+c)
		if i < 0 || (open == "" && i != 0) {
			continue
		}
		rest := msg[i+len(open)+len(c):]
		switch {
		case open == "" && rest == "", open != "" && strings.HasPrefix(rest, open), strings.HasPrefix(rest, " (status "):
			return true
		}
	}
	return false
}

// StatusOf is the response status a Locust failure message names, and
// whether it names one: the generated locustfile's "(status 502)" (0: no
// response), Locust's own LocustBadStatusCode(code=502) and HttpUser's
// "502 Server Error". Other messages (a connection error of another
// locustfile) name none.
func StatusOf(msg string) (int, bool) {
	for _, marker := range []string{"(status ", "code="} {
		if i := strings.LastIndex(msg, marker); i >= 0 {
			if code, ok := leadingCode(msg[i+len(marker):]); ok {
				return code, true
			}
		}
	}
	for _, kind := range []string{" Server Error", " Client Error", " Redirection"} {
		if i := strings.Index(msg, kind); i >= 3 {
			if code, ok := leadingCode(msg[i-3 : i]); ok && code >= 100 {
				return code, true
			}
		}
	}
	return 0, false
}

// leadingCode reads the 1 to 3 digits s starts with, not followed by
// another digit, as a status code.
func leadingCode(s string) (int, bool) {
	n := 0
	for n < len(s) && n < 4 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || n > 3 {
		return 0, false
	}
	code, err := strconv.Atoi(s[:n])
	return code, err == nil
}
