package locust

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// Meta is what a record needs beyond Locust's statistics: how the run was
// made.
type Meta struct {
	Target  string // the URL loaded
	Command string // redacted command line
	Users   int    // Locust users (-c)
	// RateAskedRPS is the open model's total asked rate (0: closed).
	RateAskedRPS float64
	RateSchedule string
	KeepAlive    bool
}

// Bench turns a finished Locust run into phptune's bench record: the same
// fields its own generator fills, from Locust's counts; latencies from its
// rounded response-time buckets (LatencyRounded), or from a CSV summary's
// percentiles; failures by phptune's error classes.
func Bench(res *Result, m Meta) *results.Bench {
	b := &results.Bench{
		SchemaVersion: results.SchemaVersion, Kind: results.KindBench,
		Command: m.Command, Target: m.Target, Protocol: "http", Model: "closed",
		Connections: m.Users, KeepAlive: m.KeepAlive,
		Engine: "locust", EngineVersion: res.Version, Workers: res.Workers, LatencyRounded: true,
	}
	if m.RateAskedRPS > 0 {
		b.Model, b.RateAskedRPS, b.RateSchedule = "open", m.RateAskedRPS, m.RateSchedule
	}
	var first, last float64
	var totalMs float64
	minMs, maxMs := math.Inf(1), 0.0
	for _, e := range res.Stats {
		b.Requests += e.NumRequests
		b.Errors += e.NumFailures
		b.BytesRead += e.TotalContentLength
		totalMs += e.TotalResponseTimeMs
		if e.NumRequests > 0 {
			minMs = min(minMs, e.MinResponseTimeMs)
			maxMs = max(maxMs, e.MaxResponseTimeMs)
		}
		if e.StartTime > 0 && (first == 0 || e.StartTime < first) {
			first = e.StartTime
		}
		last = max(last, e.LastRequestTime)
	}
	b.RequestsSent = b.Requests
	if first > 0 {
		b.StartedAt = time.Unix(0, int64(first*1e9)).UTC()
	}
	if last > first {
		b.DurationS = last - first
	}
	if b.DurationS > 0 {
		b.ThroughputRPS = float64(b.Requests-b.Errors) / b.DurationS
		if b.Model == "open" {
			b.RateAchievedRPS = float64(b.Requests) / b.DurationS
		}
	}
	if b.Requests > 0 {
		b.Latency.MeanMs = totalMs / float64(b.Requests)
		b.Latency.MinMs, b.Latency.MaxMs = minMs, maxMs
	}
	if ms, counts := roundedBuckets(res.Stats); len(ms) > 0 {
		b.Latency.P50Ms = percentile(ms, counts, 0.50)
		b.Latency.P90Ms = percentile(ms, counts, 0.90)
		b.Latency.P95Ms = percentile(ms, counts, 0.95)
		b.Latency.P99Ms = percentile(ms, counts, 0.99)
		b.Latency.P999Ms = percentile(ms, counts, 0.999)
		var seen, total int64
		for _, c := range counts {
			total += c
		}
		for i, t := range ms {
			seen += counts[i]
			b.LatencyDistribution = append(b.LatencyDistribution, results.PercentilePoint{Percentile: 100 * float64(seen) / float64(total), ValueMs: t, Count: seen})
		}
	} else if p := res.Percentiles; len(p) > 0 {
		b.Latency.P50Ms, b.Latency.P90Ms, b.Latency.P95Ms = p["50"], p["90"], p["95"]
		b.Latency.P99Ms, b.Latency.P999Ms = p["99"], p["99.9"]
	}
	b.Series = series(res.Stats, first)
	if b.Errors > 0 {
		b.ErrorsByClass = Classes(res.Errors)
		var classified int64
		for _, n := range b.ErrorsByClass {
			classified += n
		}
		if classified < b.Errors {
			// A JSON file without its failures: the rest is unnamed.
			b.ErrorsByClass["locust_failure"] += b.Errors - classified
		}
	}
	var statusNote string
	b.StatusCodes, b.StatusUnknown, statusNote = StatusCodes(res, b.Requests, b.Errors)
	if statusNote != "" {
		b.Warnings = append(b.Warnings, statusNote)
	}
	b.Warnings = append(b.Warnings, "latencies are Locust's: rounded response-time buckets (1 ms below 100 ms, 10 ms below 1 s, 100 ms above), counted from each request's send")
	if b.Model == "open" {
		short := 0.0
		if b.RateAskedRPS > 0 {
			short = 100 * (1 - b.RateAchievedRPS/b.RateAskedRPS)
		}
		b.Warnings = append(b.Warnings, fmt.Sprintf("Locust does not correct coordinated omission: a user waits for its answer before its next request, so latencies count from the send, not from when the request was due; achieved %.1f of %.1f req/s asked (%.1f%% short)", b.RateAchievedRPS, b.RateAskedRPS, max(short, 0)))
	}
	return b
}

// series merges the entries' per-second counts into the record's seconds.
func series(entries []Entry, first float64) []results.Second {
	reqs, errs := map[int64]int64{}, map[int64]int64{}
	for _, e := range entries {
		for k, v := range e.NumReqsPerSec {
			if s, err := strconv.ParseInt(k, 10, 64); err == nil {
				reqs[s] += v
			}
		}
		for k, v := range e.NumFailPerSec {
			if s, err := strconv.ParseInt(k, 10, 64); err == nil {
				errs[s] += v
			}
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	secs := make([]int64, 0, len(reqs))
	for s := range reqs {
		secs = append(secs, s)
	}
	slices.Sort(secs)
	out := make([]results.Second, 0, len(secs))
	for _, s := range secs {
		out = append(out, results.Second{TS: float64(s) - math.Floor(first), Requests: reqs[s], Errors: errs[s]})
	}
	return out
}

// StatusCodes maps a run's status counts into a record's: by code over all
// request names, as phptune's own generator counts them, without "0" (no
// response: those requests are in the error classes, as with phptune's
// generator). A run of the locustfile phptune writes counted every
// response (Result.StatusCodes). Locust's own statistics count none: then
// only the failures whose messages name a status give theirs; unknown
// counts the requests whose status is not known, and the note says so
// plainly ("" when all are known).
func StatusCodes(res *Result, requests, errors int64) (codes map[string]int64, unknown int64, note string) {
	out := map[string]int64{}
	if res.StatusCodes != nil {
		for _, codes := range res.StatusCodes {
			for code, n := range codes {
				if code != "0" && n > 0 {
					out[code] += n
				}
			}
		}
		if len(out) == 0 {
			out = nil
		}
		return out, 0, ""
	}
	var named int64
	for _, f := range res.Errors {
		if code, ok := StatusOf(f.Error); ok {
			named += f.Occurrences
			if code > 0 && f.Occurrences > 0 {
				out[strconv.Itoa(code)] += f.Occurrences
			}
		}
	}
	if len(out) == 0 {
		out = nil
	}
	if requests <= 0 {
		return out, 0, ""
	}
	ok := requests - errors
	unknown = max(0, requests-named)
	switch {
	case errors == 0:
		note = fmt.Sprintf("status codes are not known: Locust's statistics do not count them (the %d requests all succeeded: a 2xx, or the status the request expected)", requests)
	case len(res.Errors) == 0:
		note = fmt.Sprintf("status codes and error classes are not known: Locust's JSON statistics hold neither (%d requests succeeded, %d failed as locust_failure); import the --csv prefix, whose _failures.csv names each failure, or run the load with phptune bench --engine locust", ok, errors)
	default:
		note = fmt.Sprintf("status codes are known only for the %d of %d failed requests whose failure message names one (Locust's statistics do not count statuses); the %d successful requests' are not known (a 2xx, or the status the request expected)", min(named, errors), errors, ok)
	}
	return out, unknown, note
}
