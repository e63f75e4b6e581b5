// Package fpmstatus parses php-fpm's status page (pm.status_path) in its JSON
// ("?json", "?json&full") and plain text ("", "?full") formats, per-worker
// entries included, into results.FPMStatus.
//
// The page has caveats the observer works around elsewhere: it has no
// max_children field (the caller knows the pool's configuration); "listen
// queue" is read through TCP_INFO and stays 0 on unix sockets (package sockq
// reads the kernel's figure); and the page is served by a worker of the pool,
// so a saturated pool answers it late. It does not report workers' current
// memory either: "last request memory" is PHP's peak during the previous
// request, not the process's footprint (package proc reads PSS).
package fpmstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
)

// ErrNotStatus is returned for a body that is not a php-fpm status page
// (typically a 404 page because pm.status_path is not set or differs).
var ErrNotStatus = errors.New("not a php-fpm status page")

// Parse parses either format, telling them apart by the first byte.
func Parse(b []byte) (*results.FPMStatus, error) {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		return ParseJSON(b)
	}
	return ParseText(b)
}

// ParseJSON parses the "?json" or "?json&full" format.
func ParseJSON(b []byte) (*results.FPMStatus, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStatus, err)
	}
	f := fields{}
	var procs json.RawMessage
	for k, v := range raw {
		if k == "processes" {
			procs = v
			continue
		}
		f[k] = jsonScalar(v)
	}
	st, err := f.pool()
	if err != nil {
		return nil, err
	}
	if procs != nil {
		var ws []map[string]json.RawMessage
		if err := json.Unmarshal(procs, &ws); err != nil {
			return nil, fmt.Errorf("%w: processes: %v", ErrNotStatus, err)
		}
		for _, w := range ws {
			wf := fields{}
			for k, v := range w {
				wf[k] = jsonScalar(v)
			}
			st.Workers = append(st.Workers, wf.worker())
		}
	}
	recount(st)
	return st, nil
}

// jsonScalar turns a JSON string or number into its text.
func jsonScalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(v))
}

// ParseText parses the plain text format: "key: value" lines for the pool,
// then, with "?full", one block per worker after a line of asterisks.
func ParseText(b []byte) (*results.FPMStatus, error) {
	blocks := []fields{{}}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "****") {
			blocks = append(blocks, fields{})
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		// The text format writes "request URI", the JSON one "request uri".
		blocks[len(blocks)-1][strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	st, err := blocks[0].pool()
	if err != nil {
		return nil, err
	}
	for _, w := range blocks[1:] {
		if _, ok := w["pid"]; ok {
			st.Workers = append(st.Workers, w.worker())
		}
	}
	recount(st)
	return st, nil
}

// recount takes the idle, active and total process counts from the
// worker list of a full page, when it has one. The pool's own counters
// are moved by each worker (idle to active when it reads a request's
// headers, back when it accepts the next connection) and set right by the
// master about once a second: a worker serving several requests on one
// kept FastCGI connection (nginx's fastcgi_keep_conn) reads headers many
// times and accepts once, so between the master's counts php-fpm 8.2
// reports far more active processes than the pool has (measured: 119
// active of 2 workers). Each worker's own state is right. A worker
// waiting for the next request on a kept connection is "Reading headers":
// active, as it is not free for another connection. The page's own
// counts are kept in Extra when they differ.
func recount(st *results.FPMStatus) {
	if len(st.Workers) == 0 {
		return
	}
	var idle int64
	for _, w := range st.Workers {
		if w.State == "Idle" {
			idle++
		}
	}
	total := int64(len(st.Workers))
	if st.IdleProcesses == idle && st.TotalProcesses == total && st.ActiveProcesses == total-idle {
		return
	}
	if st.Extra == nil {
		st.Extra = map[string]any{}
	}
	st.Extra["page_idle_processes"], st.Extra["page_active_processes"], st.Extra["page_total_processes"] = st.IdleProcesses, st.ActiveProcesses, st.TotalProcesses
	st.IdleProcesses, st.ActiveProcesses, st.TotalProcesses = idle, total-idle, total
}

// fields is one block of the page, keyed by php-fpm's names.
type fields map[string]string

// poolKeys are the pool fields that have a place in results.FPMStatus.
var poolKeys = map[string]func(*results.FPMStatus) *int64{
	"accepted conn":        func(s *results.FPMStatus) *int64 { return &s.AcceptedConn },
	"listen queue":         func(s *results.FPMStatus) *int64 { return &s.ListenQueue },
	"max listen queue":     func(s *results.FPMStatus) *int64 { return &s.MaxListenQueue },
	"listen queue len":     func(s *results.FPMStatus) *int64 { return &s.ListenQueueLen },
	"idle processes":       func(s *results.FPMStatus) *int64 { return &s.IdleProcesses },
	"active processes":     func(s *results.FPMStatus) *int64 { return &s.ActiveProcesses },
	"total processes":      func(s *results.FPMStatus) *int64 { return &s.TotalProcesses },
	"max active processes": func(s *results.FPMStatus) *int64 { return &s.MaxActiveProcesses },
	"max children reached": func(s *results.FPMStatus) *int64 { return &s.MaxChildrenReached },
	"slow requests":        func(s *results.FPMStatus) *int64 { return &s.SlowRequests },
}

func (f fields) pool() (*results.FPMStatus, error) {
	pool, ok := f["pool"]
	if !ok {
		return nil, fmt.Errorf("%w: no \"pool\" field (is pm.status_path set to the path that was asked?)", ErrNotStatus)
	}
	st := &results.FPMStatus{Pool: pool, ProcessManager: f["process manager"]}
	for k, v := range f {
		if k == "pool" || k == "process manager" {
			continue
		}
		if dst, ok := poolKeys[k]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: %q is %q, not a number", ErrNotStatus, k, v)
			}
			*dst(st) = n
			continue
		}
		// Fields without a place (start time, start since, and any a
		// later php-fpm adds, such as 8.4's "memory peak") are kept.
		if st.Extra == nil {
			st.Extra = map[string]any{}
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			st.Extra[k] = n
		} else {
			st.Extra[k] = v
		}
	}
	return st, nil
}

// worker reads one worker block; malformed numbers read as 0 (the block is
// informational and php-fpm writes "-" for fields without a value).
func (f fields) worker() results.FPMWorker {
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(f[k], 10, 64)
		return n
	}
	cpu, _ := strconv.ParseFloat(f["last request cpu"], 64)
	w := results.FPMWorker{
		PID:               int(num("pid")),
		State:             f["state"],
		Requests:          num("requests"),
		LastRequestCPU:    cpu,
		LastRequestMemB:   num("last request memory"),
		RequestDurationUs: num("request duration"),
		RequestURI:        f["request uri"],
		Script:            f["script"],
	}
	if w.RequestURI == "-" {
		w.RequestURI = ""
	}
	if w.Script == "-" {
		w.Script = ""
	}
	return w
}
