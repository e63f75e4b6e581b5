package livehost

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/traffic/accesslog"
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
		// A line without a request to replay ("-", a TLS handshake)
		// still had an answer: it counts.
		l, err := accesslog.ParseLine(line)
		if err != nil && !errors.Is(err, accesslog.ErrNoRequest) {
			unparsed++
			continue
		}
		if l.Time.Before(from) || !l.Time.Before(to) {
			continue
		}
		c.Requests++
		if l.Status >= 500 && l.Status <= 599 {
			c.Errors++
		}
	}
	c.Unparsed = unparsed
	return c
}
