package load

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/phptune/phptune/internal/model/results"
)

// Error classes, the keys of results.Bench.ErrorsByClass.
const (
	ClassConnectRefused = "connect_refused"
	ClassConnectTimeout = "connect_timeout"
	// ClassConnectBacklog is a unix socket whose listen queue is full
	// (connect returns EAGAIN): the "11: Resource temporarily unavailable"
	// that nginx logs in front of a saturated php-fpm.
	ClassConnectBacklog = "connect_backlog_full"
	ClassConnectOther   = "connect_other"
	ClassReset          = "reset"
	// ClassClosed is a connection closed by the server in the middle of a
	// response (or before any of it on a fresh connection).
	ClassClosed         = "closed_early"
	ClassReadTimeout    = "read_timeout"
	ClassProtocol       = "protocol"
	ClassFCGIOverloaded = "fcgi_overloaded"
	ClassFCGIStderr     = "fcgi_stderr"
	ClassLength         = "length_mismatch"
	// ClassRedirect is a 3xx answer to a request that does not expect one
	// (Request.ExpectStatus): the generator does not follow it, so it
	// timed the redirect, not the page (a site whose home URL is another
	// host answers every request with a 301 to it).
	ClassRedirect  = "redirect"
	ClassStatus4xx = "status_4xx"
	ClassStatus5xx = "status_5xx"
	// ClassUnexpectedStatus is a 1xx or 2xx answer to a request that
	// expects another status (Request.ExpectStatus: a comment POST that
	// answers 200 instead of its 302 showed an error page).
	ClassUnexpectedStatus = "unexpected_status"
	// ClassUnexpectedBody is a 2xx response whose body does not match
	// Options.Expect: an error page served with status 200.
	ClassUnexpectedBody = "unexpected_body"
)

type class uint8

// statusClass classifies a complete response's status for a request that
// expects expectStatus (0: any 2xx): the status asked for, or a 2xx when
// none is, is a success (ok true); any other status is the error class
// returned, whatever its range: a redirect is not the page, an error page
// is not the page.
func statusClass(status, expectStatus int) (cl class, ok bool) {
	switch {
	case expectStatus != 0 && status == expectStatus:
		return 0, true
	case status >= 500:
		return cStatus5xx, false
	case status >= 400:
		return cStatus4xx, false
	case status >= 300:
		return cRedirect, false
	case expectStatus != 0:
		return cUnexpectedStatus, false
	}
	return 0, true
}

const (
	cConnectRefused class = iota
	cConnectTimeout
	cConnectBacklog
	cConnectOther
	cReset
	cClosed
	cReadTimeout
	cProtocol
	cFCGIOverloaded
	cFCGIStderr
	cLength
	cRedirect
	cStatus4xx
	cStatus5xx
	cUnexpectedStatus
	cUnexpectedBody
	nClasses
)

var classNames = [nClasses]string{ClassConnectRefused, ClassConnectTimeout, ClassConnectBacklog, ClassConnectOther,
	ClassReset, ClassClosed, ClassReadTimeout, ClassProtocol, ClassFCGIOverloaded, ClassFCGIStderr, ClassLength,
	ClassRedirect, ClassStatus4xx, ClassStatus5xx, ClassUnexpectedStatus, ClassUnexpectedBody}

// Latencies are recorded in microseconds between 1 µs and an hour.
const (
	histMax       = 3600 * 1e6
	histSigFigs   = 3
	secondSigFigs = 2
)

// stats is one event loop's tally; only its loop writes it, except the
// atomics that the progress reporter reads.
type stats struct {
	hist     *hdrhistogram.Histogram
	secHist  []*hdrhistogram.Histogram
	secReq   []int64
	secErr   []int64
	errors   int64
	bytes    int64
	status   [1000]int64
	classes  [nClasses]int64
	retried  int64
	stderrOK int64 // successful FastCGI responses that carried stderr

	liveReq  atomic.Int64
	liveErr  atomic.Int64
	liveP99  atomic.Int64 // µs, p99 of the last full second
	lastSec  int
	lastP99s int
}

func newStats() *stats {
	return &stats{hist: hdrhistogram.New(1, histMax, histSigFigs), lastSec: -1}
}

func (s *stats) second(i int) {
	for len(s.secReq) <= i {
		s.secReq = append(s.secReq, 0)
		s.secErr = append(s.secErr, 0)
		s.secHist = append(s.secHist, nil)
	}
	if s.secHist[i] == nil {
		s.secHist[i] = hdrhistogram.New(1, histMax, secondSigFigs)
	}
	// Publish the p99 of the previous second for the progress line.
	if i > s.lastP99s && i > 0 && s.secHist[i-1] != nil {
		s.liveP99.Store(s.secHist[i-1].ValueAtQuantile(99))
		s.lastP99s = i
	}
}

// record one finished request that belongs to the measured part.
func (s *stats) record(sec int, latUs int64, failed bool) {
	if latUs < 1 {
		latUs = 1
	}
	if latUs > histMax {
		latUs = histMax
	}
	s.second(sec)
	_ = s.hist.RecordValue(latUs)
	_ = s.secHist[sec].RecordValue(latUs)
	s.secReq[sec]++
	s.liveReq.Add(1)
	if failed {
		s.errors++
		s.secErr[sec]++
		s.liveErr.Add(1)
	}
}

// fill merges the loops' stats into b.
func fill(b *results.Bench, all []*stats) {
	h := hdrhistogram.New(1, histMax, histSigFigs)
	nsec := 0
	for _, s := range all {
		h.Merge(s.hist)
		if len(s.secReq) > nsec {
			nsec = len(s.secReq)
		}
		b.Errors += s.errors
		b.BytesRead += s.bytes
		for code, n := range s.status {
			if n > 0 {
				if b.StatusCodes == nil {
					b.StatusCodes = map[string]int64{}
				}
				b.StatusCodes[strconv.Itoa(code)] += n
			}
		}
		for c, n := range s.classes {
			if n > 0 {
				if b.ErrorsByClass == nil {
					b.ErrorsByClass = map[string]int64{}
				}
				b.ErrorsByClass[classNames[c]] += n
			}
		}
	}
	b.Requests = h.TotalCount()
	ms := func(us int64) float64 { return float64(us) / 1000 }
	if b.Requests > 0 {
		b.Latency = results.Latency{
			MinMs: ms(h.Min()), MeanMs: h.Mean() / 1000,
			P50Ms: ms(h.ValueAtQuantile(50)), P90Ms: ms(h.ValueAtQuantile(90)), P95Ms: ms(h.ValueAtQuantile(95)),
			P99Ms: ms(h.ValueAtQuantile(99)), P999Ms: ms(h.ValueAtQuantile(99.9)),
			MaxMs: ms(h.Max()),
		}
		for _, br := range h.CumulativeDistributionWithTicks(5) {
			b.LatencyDistribution = append(b.LatencyDistribution, results.PercentilePoint{
				Percentile: br.Quantile, ValueMs: ms(br.ValueAt), Count: br.Count})
		}
	}
	for i := 0; i < nsec; i++ {
		sh := hdrhistogram.New(1, histMax, secondSigFigs)
		sec := results.Second{TS: float64(i)}
		for _, s := range all {
			if i < len(s.secReq) {
				sec.Requests += s.secReq[i]
				sec.Errors += s.secErr[i]
				if s.secHist[i] != nil {
					sh.Merge(s.secHist[i])
				}
			}
		}
		if sh.TotalCount() > 0 {
			sec.P50Ms, sec.P99Ms = ms(sh.ValueAtQuantile(50)), ms(sh.ValueAtQuantile(99))
		}
		b.Series = append(b.Series, sec)
	}
}

// RedirectWarning says how many of b's measured responses were redirects
// (the redirect error class) and with which statuses, and what to do about
// it; "" when none was. Bench, tune and compare show it, and stored results
// keep it.
func RedirectWarning(b *results.Bench) string {
	n := b.ErrorsByClass[ClassRedirect]
	if n == 0 || b.Requests == 0 {
		return ""
	}
	var codes []string
	for code, c := range b.StatusCodes {
		if len(code) == 3 && code[0] == '3' && c > 0 {
			codes = append(codes, fmt.Sprintf("%s×%d", code, c))
		}
	}
	slices.Sort(codes)
	return fmt.Sprintf("%d of %d measured responses (%.1f%%) were redirects (%s), counted as errors of class %s: redirects are not followed, so they timed the redirect, not the page; "+
		"load a path that answers 200, make the site answer its page at the address the lab is reached by (a site whose home URL names another host redirects there), or, for a request that redirects when it works, declare its status (a scenario line's \"=> 302\")",
		n, b.Requests, 100*float64(n)/float64(b.Requests), strings.Join(codes, ", "), ClassRedirect)
}

// statusClasses are the error classes of a response that answered, but not
// with the page: a redirect, an error status, a status the request did not
// expect.
var statusClasses = []string{ClassRedirect, ClassStatus4xx, ClassStatus5xx, ClassUnexpectedStatus}

// NotThePage counts, over benches, the measured responses that were not the
// page (statusClasses) and all measured requests: a stored tune whose
// trials were mostly redirects measured nothing real.
func NotThePage(benches ...*results.Bench) (n, requests int64) {
	for _, b := range benches {
		if b == nil {
			continue
		}
		requests += b.Requests
		for _, c := range statusClasses {
			n += b.ErrorsByClass[c]
		}
	}
	return n, requests
}
