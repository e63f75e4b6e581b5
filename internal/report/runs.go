package report

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
)

// StoredBench is a stored bench record to compare, with the workload the
// results database keeps beside it ("" when not known: a run imported
// from Locust).
type StoredBench struct {
	Bench    *results.Bench
	Workload string
}

// RunsComparison is stored bench records side by side (phptune compare
// --runs): each run's throughput, latency percentiles, error rate and
// status codes, with ratios against the first run.
type RunsComparison struct {
	Runs []ComparedRun `json:"runs"`
	// Notes say what differs between the runs without making them
	// incomparable, and what is not known.
	Notes []string `json:"notes,omitempty"`
	// Forced are the differences that would have refused the comparison,
	// let through by --force.
	Forced []string `json:"forced,omitempty"`
}

// ComparedRun is one run of a RunsComparison.
type ComparedRun struct {
	ID string `json:"id"`
	// Engine is the load generator: phptune or locust; EngineVersion
	// Locust's version, Workers its worker processes.
	Engine        string  `json:"engine"`
	EngineVersion string  `json:"engine_version,omitempty"`
	Workers       int     `json:"workers,omitempty"`
	Target        string  `json:"target"`
	Workload      string  `json:"workload,omitempty"`
	Model         string  `json:"model"`
	Connections   int     `json:"connections"`
	RateAskedRPS  float64 `json:"rate_asked_rps,omitempty"`
	DurationS     float64 `json:"duration_s"`
	Requests      int64   `json:"requests"`
	Errors        int64   `json:"errors"`
	ThroughputRPS float64 `json:"throughput_rps"`
	P50Ms         float64 `json:"latency_p50_ms"`
	P95Ms         float64 `json:"latency_p95_ms"`
	P99Ms         float64 `json:"latency_p99_ms"`
	// Latency says where the percentiles come from: "hdrhistogram"
	// (phptune's, 3 significant digits) or "locust_buckets" (Locust's,
	// rounded; each percentile's rounding is in RoundingMs).
	Latency string `json:"latency"`
	// RoundingMs is, for Locust's rounded percentiles, how far each (p50,
	// p95, p99) may be from the response time it stands for: half of
	// Locust's bucket at that value.
	RoundingMs []float64 `json:"latency_rounding_ms,omitempty"`
	ErrorRate  float64   `json:"error_rate"`
	// StatusCodes are the record's, StatusUnknown the requests whose
	// status is not known.
	StatusCodes   map[string]int64 `json:"status_codes,omitempty"`
	StatusUnknown int64            `json:"status_unknown,omitempty"`
	// PHPErrors are PHP's own messages the lab's web server logged in the
	// run (results.ServerErrors.PHP); absent when none.
	PHPErrors *results.PHPErrors `json:"php_errors,omitempty"`
	// Ratios against the first run (1 for it; 0 when the first's value is
	// 0).
	ThroughputRatio float64 `json:"throughput_ratio"`
	P50Ratio        float64 `json:"p50_ratio"`
	P95Ratio        float64 `json:"p95_ratio"`
	P99Ratio        float64 `json:"p99_ratio"`
}

// NotComparableError is CompareRuns' refusal: what differs between the
// runs, and that --force sets them side by side anyway.
type NotComparableError struct {
	Differences []string
}

func (e *NotComparableError) Error() string {
	return "the runs are not comparable: " + strings.Join(e.Differences, "; ")
}

// CompareRuns sets stored bench runs side by side, with ratios against the
// first. Runs that loaded different targets or workloads, over different
// protocols or in different load models, are refused with a
// NotComparableError unless force is set, which turns each difference into
// a Forced line. A target or workload not known (an import without
// --target) is a note, not a refusal.
func CompareRuns(runs []StoredBench, force bool) (*RunsComparison, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("comparing runs needs at least two")
	}
	c := &RunsComparison{}
	for i, r := range runs {
		if r.Bench == nil {
			return nil, fmt.Errorf("run %d has no bench record", i+1)
		}
		c.Runs = append(c.Runs, comparedRun(r))
	}
	differences, notes := comparability(c.Runs)
	c.Notes = notes
	if len(differences) > 0 {
		if !force {
			return nil, &NotComparableError{Differences: differences}
		}
		c.Forced = differences
	}
	first := c.Runs[0]
	for i := range c.Runs {
		r := &c.Runs[i]
		r.ThroughputRatio = ratio(r.ThroughputRPS, first.ThroughputRPS)
		r.P50Ratio = ratio(r.P50Ms, first.P50Ms)
		r.P95Ratio = ratio(r.P95Ms, first.P95Ms)
		r.P99Ratio = ratio(r.P99Ms, first.P99Ms)
	}
	return c, nil
}

func comparedRun(s StoredBench) ComparedRun {
	b := s.Bench
	r := ComparedRun{ID: b.ID, Engine: b.Engine, EngineVersion: b.EngineVersion, Workers: b.Workers,
		Target: b.Target, Workload: s.Workload, Model: b.Model, Connections: b.Connections, RateAskedRPS: b.RateAskedRPS,
		DurationS: b.DurationS, Requests: b.Requests, Errors: b.Errors, ThroughputRPS: b.ThroughputRPS,
		P50Ms: b.Latency.P50Ms, P95Ms: b.Latency.P95Ms, P99Ms: b.Latency.P99Ms, Latency: "hdrhistogram",
		StatusCodes: b.StatusCodes, StatusUnknown: b.StatusUnknown}
	if b.ServerErrors != nil {
		r.PHPErrors = b.ServerErrors.PHP
	}
	if r.Engine == "" {
		r.Engine = "phptune"
	}
	if b.LatencyRounded {
		r.Latency = "locust_buckets"
		r.RoundingMs = []float64{LocustRounding(r.P50Ms), LocustRounding(r.P95Ms), LocustRounding(r.P99Ms)}
	}
	if b.Requests > 0 {
		r.ErrorRate = float64(b.Errors) / float64(b.Requests)
	}
	return r
}

// LocustRounding is how far a response time Locust keeps (in ms) may be
// from the one measured: half its bucket, which is 1 ms below 100 ms, 10
// ms below 1 s, 100 ms below 10 s and 1 s above (Locust's
// bucket_response_time).
func LocustRounding(ms float64) float64 {
	switch {
	case ms < 100:
		return 0.5
	case ms < 1000:
		return 5
	case ms < 10000:
		return 50
	}
	return 500
}

func ratio(x, first float64) float64 {
	if first <= 0 {
		return 0
	}
	return x / first
}

// comparability returns what makes the runs incomparable (differences)
// and what only deserves saying (notes).
func comparability(runs []ComparedRun) (differences, notes []string) {
	first := runs[0]
	for _, r := range runs[1:] {
		if r.Model != first.Model {
			differences = append(differences, fmt.Sprintf("%s ran the %s model, %s the %s one (a closed model's throughput and an open model's achieved rate measure different things)", first.ID, first.Model, r.ID, r.Model))
		}
		if r.Workload != "" && first.Workload != "" && r.Workload != first.Workload {
			differences = append(differences, fmt.Sprintf("%s ran the workload %s, %s %s", first.ID, first.Workload, r.ID, r.Workload))
		}
		a, b := targetKey(first.Target), targetKey(r.Target)
		if a != "" && b != "" && a != b {
			differences = append(differences, fmt.Sprintf("%s loaded %s, %s %s", first.ID, first.Target, r.ID, r.Target))
		}
	}
	for _, r := range runs {
		if targetKey(r.Target) == "" {
			notes = append(notes, fmt.Sprintf("%s's target is not known (imported without --target): that it loaded the same pages is taken on trust", r.ID))
		}
		if r.StatusUnknown > 0 {
			notes = append(notes, fmt.Sprintf("%s: the status of %d of its %d requests is not known (Locust's statistics count no status; only failure messages name one)", r.ID, r.StatusUnknown, r.Requests))
		}
	}
	var conns []string
	differ := false
	for _, r := range runs {
		conns = append(conns, fmt.Sprint(r.Connections))
		differ = differ || r.Connections != first.Connections
	}
	if differ {
		notes = append(notes, fmt.Sprintf("the runs had %s connections (Locust: users): a closed model's throughput and latency depend on them", strings.Join(conns, ", ")))
	}
	rounded, hdr := false, false
	for _, r := range runs {
		if r.Latency == "locust_buckets" {
			rounded = true
		} else {
			hdr = true
		}
	}
	if rounded && hdr {
		notes = append(notes, "latency ratios set Locust's rounded buckets against phptune's HdrHistograms: a ratio within the rounding (±) of the Locust run's value means nothing")
	}
	if rounded && hdr && first.Model == "open" {
		notes = append(notes, "open model: phptune's latencies count from when each request was due, Locust's from its send (no coordinated-omission correction), so Locust's tail reads lower behind slow answers")
	}
	return differences, notes
}

// targetKey is a target for comparing: scheme, host and path, the port
// left out on loopback (a lab gets a new port each time); "" when the
// target is not known.
func targetKey(target string) string {
	if target == "" || strings.HasPrefix(target, "(") {
		return ""
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return target
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		host = "loopback"
	} else if u.Port() != "" {
		host = net.JoinHostPort(host, u.Port())
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return u.Scheme + "://" + host + path
}
