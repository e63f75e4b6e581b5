package livehost

import (
	"bytes"
	"fmt"
	"time"
)

// ErrorCount is the requests of a window and how many failed: 5xx lines
// of an access log, or, from php-fpm's status page, the times a pool
// reached pm.max_children or a request ran slow.
type ErrorCount struct {
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// Unparsed lines of the tail read were not in the combined format (a
	// custom log_format): their time is unknown.
	Unparsed int64 `json:"unparsed,omitempty"`
	// Source says what was counted ("5xx in /var/log/nginx/access.log").
	Source string `json:"source"`
}

// Rate is Errors per request (0 without requests).
func (c ErrorCount) Rate() float64 {
	if c.Requests == 0 {
		return 0
	}
	return float64(c.Errors) / float64(c.Requests)
}

func (c ErrorCount) String() string {
	return fmt.Sprintf("%.1f%% (%d of %d requests)", 100*c.Rate(), c.Errors, c.Requests)
}

// minErrors is the fewest errors after a change that can count as worse:
// one or two failures in a quiet window are noise.
const minErrors = 3

// Worse says whether after's error rate is worse than before's: at least
// minErrors errors, a rate more than one percentage point above before's,
// and more than twice it.
func Worse(before, after ErrorCount) bool {
	ra, rb := after.Rate(), before.Rate()
	return after.Errors >= minErrors && ra > rb+0.01 && ra > 2*rb
}

// ParseAccessLine reads an nginx access log line in the combined (or
// common) format: its time, "[26/Nov/2026:10:35:04 +0000]", and the
// status after the quoted request. nginx escapes a quote inside the
// request as \x22, so the request ends at the next quote.
func ParseAccessLine(line []byte) (t time.Time, status int, ok bool) {
	// The time is the last '[' before the request's quote: $remote_user
	// comes from the client and may hold a '[' of its own.
	head := line
	if q := bytes.IndexByte(line, '"'); q >= 0 {
		head = line[:q]
	}
	open := bytes.LastIndexByte(head, '[')
	if open < 0 {
		return t, 0, false
	}
	close := bytes.IndexByte(line[open:], ']')
	if close < 0 {
		return t, 0, false
	}
	t, err := time.Parse("02/Jan/2006:15:04:05 -0700", string(line[open+1:open+close]))
	if err != nil {
		return t, 0, false
	}
	rest := line[open+close+1:]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return t, 0, false
	}
	end := bytes.IndexByte(rest[q+1:], '"')
	if end < 0 {
		return t, 0, false
	}
	rest = bytes.TrimLeft(rest[q+1+end+1:], " ")
	if len(rest) < 3 || len(rest) > 3 && rest[3] != ' ' {
		return t, 0, false
	}
	for _, c := range rest[:3] {
		if c < '0' || c > '9' {
			return t, 0, false
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return t, 0, false
	}
	return t, status, true
}

// CountAccessLog counts the lines of an access log's tail whose time is
// in [from, to): requests and 5xx responses. Lines it cannot read count
// as Unparsed (so a custom format shows as unparsed, not as no traffic).
func CountAccessLog(tail []byte, from, to time.Time) ErrorCount {
	var c ErrorCount
	var unparsed int64
	for len(tail) > 0 {
		line, rest, _ := bytes.Cut(tail, []byte("\n"))
		tail = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		t, status, ok := ParseAccessLine(line)
		if !ok {
			unparsed++
			continue
		}
		if t.Before(from) || !t.Before(to) {
			continue
		}
		c.Requests++
		if status >= 500 && status <= 599 {
			c.Errors++
		}
	}
	c.Unparsed = unparsed
	return c
}
