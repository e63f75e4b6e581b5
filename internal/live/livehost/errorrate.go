package livehost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/safewrite"
	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/fpmstatus"
)

// maxLogTail is how much of an access log's end is read.
const maxLogTail = 8 << 20

// ReadLogTail reads the last limit bytes of a log, as hostile input: no
// link followed (at its last component), a regular file only, and the
// first, partial line of the tail dropped.
func ReadLogTail(path string, limit int64) ([]byte, error) {
	f, st, err := safewrite.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := int64(0)
	if st.Size() > limit {
		off = st.Size() - limit
	}
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, off, limit), limit))
	if err != nil {
		return nil, err
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	return b, nil
}

// CountLogs counts requests and 5xx in [from, to) over every log.
func CountLogs(logs []string, from, to time.Time) (ErrorCount, error) {
	c := ErrorCount{Source: "5xx in " + strings.Join(logs, ", ")}
	var errs []error
	for _, l := range logs {
		tail, err := ReadLogTail(l, maxLogTail)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n := CountAccessLog(tail, from, to)
		c.Requests += n.Requests
		c.Errors += n.Errors
		c.Unparsed += n.Unparsed
	}
	if len(errs) == len(logs) {
		return c, errors.Join(errs...)
	}
	return c, nil
}

// ErrorRate compares a server's error rate over the settle window after
// a reload with the same length of time before the apply: from the
// access logs when there are any, else from a pool's status page.
type ErrorRate struct {
	Logs   []string // access logs (absolute)
	FPM    *FPM     // the pool whose status page is read without logs
	Window time.Duration
	Before ErrorCount

	reloaded time.Time
	atReload *results.FPMStatus
	// compared: the comparison ran once; a rollback's reload and health
	// check afterwards do not run it again.
	compared bool
}

// NewErrorRate counts the window before now: in the access logs' lines
// of [now-window, now), or, without a log it can read, by reading the
// pool's status page now and after window (so the apply waits that long
// first). It says so in Before.Source.
func NewErrorRate(ctx context.Context, logs []string, fpm *FPM, window time.Duration) (*ErrorRate, error) {
	e := &ErrorRate{Logs: logs, FPM: fpm, Window: window}
	now := time.Now()
	if len(logs) > 0 {
		c, err := CountLogs(logs, now.Add(-window), now)
		if err == nil {
			e.Before = c
			return e, nil
		}
		e.Logs = nil
	}
	if fpm == nil || fpm.StatusPath == "" {
		return nil, errors.New("no access log to read and no php-fpm status page: the error rate cannot be compared (set pm.status_path, or keep an access_log)")
	}
	start, err := fpm.statusPage(ctx)
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(window):
	}
	end, err := fpm.statusPage(ctx)
	if err != nil {
		return nil, err
	}
	e.Before = statusErrors(start, end)
	return e, nil
}

// statusErrors counts from two readings of a pool's status page: the
// connections accepted between them, and the times the pool reached
// pm.max_children or a request ran slow (php-fpm counts no failed
// requests; these are what its page shows of requests served badly). A
// counter lower at the end (the master was reloaded) counts from zero.
func statusErrors(a, b *results.FPMStatus) ErrorCount {
	d := func(x, y int64) int64 {
		if y < x {
			return y
		}
		return y - x
	}
	return ErrorCount{Requests: d(a.AcceptedConn, b.AcceptedConn),
		Errors: d(a.MaxChildrenReached, b.MaxChildrenReached) + d(a.SlowRequests, b.SlowRequests),
		Source: "pool " + b.Pool + "'s status page (max children reached + slow requests, per accepted connection)"}
}

func (f FPM) statusPage(ctx context.Context) (*results.FPMStatus, error) {
	body, err := f.status(ctx)
	if err != nil {
		return nil, err
	}
	return fpmstatus.Parse(body)
}

// Step is the comparison as a transaction step named "error-rate", to go
// after the servers' steps: its Reload marks the time the reloads ended,
// its Healthy counts from then to now (the settle window) and fails when
// the rate is worse (Worse), with both counts in the reason. It compares
// once: when a rollback reloads again, it passes.
func (e *ErrorRate) Step() liveapply.Step {
	return liveapply.Step{Name: "error-rate",
		Reload: func(ctx context.Context) error {
			if e.compared {
				return nil
			}
			if !e.reloaded.IsZero() {
				// A second reload is the undo's, after a failure: the
				// rates compared the new configuration, not the old
				// one put back, which is not judged again.
				e.compared = true
				return nil
			}
			e.reloaded = time.Now()
			if len(e.Logs) == 0 {
				st, err := e.FPM.statusPage(ctx)
				if err != nil {
					return err
				}
				e.atReload = st
			}
			return nil
		},
		Healthy: func(ctx context.Context) error {
			if e.compared {
				return nil
			}
			e.compared = true
			after, err := e.After(ctx)
			if err != nil {
				return err
			}
			if Worse(e.Before, after) {
				return fmt.Errorf("the error rate rose: %s in the %v after the reload against %s in the %v before (%s)",
					after, time.Since(e.reloaded).Round(time.Second), e.Before, e.Window, e.Before.Source)
			}
			return nil
		}}
}

// After counts from the reload to now.
func (e *ErrorRate) After(ctx context.Context) (ErrorCount, error) {
	if len(e.Logs) > 0 {
		// Lines carry whole seconds: the reload's own second counts.
		return CountLogs(e.Logs, e.reloaded.Truncate(time.Second), time.Now().Add(time.Second))
	}
	st, err := e.FPM.statusPage(ctx)
	if err != nil {
		return ErrorCount{}, err
	}
	return statusErrors(e.atReload, st), nil
}
