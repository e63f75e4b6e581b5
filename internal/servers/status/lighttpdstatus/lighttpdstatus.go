// Package lighttpdstatus reads lighttpd's mod_status pages: the status
// page in its machine format (?auto) and the statistics page, where
// mod_fastcgi counts its requests and its failed connects to php-fpm.
package lighttpdstatus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/statuspage"
)

// ErrNotStatus is returned for a body that is not one of the pages.
var ErrNotStatus = errors.New("not a lighttpd mod_status page")

// MaxBody is the most of a page Parse reads: the scoreboard has a
// character per connection slot (server.max-connections, at most 65535),
// the rest is a few hundred bytes; the statistics page a few lines per
// backend.
const MaxBody = 128 << 10

// Parse parses the status page's ?auto output, "Key: value" lines:
//
//	Total Accesses: 6
//	Total kBytes: 2
//	Uptime: 27
//	BusyServers: 10
//	IdleServers: 1355
//	Scoreboard: hhhhhhhkkk____
//
// BusyServers, IdleServers and Scoreboard are required. Unknown lines are
// skipped; a known key whose value is not a non-negative count, a
// scoreboard character lighttpd does not write, or a repeated key is an
// error.
func Parse(b []byte) (*results.LighttpdStatus, error) {
	var st results.LighttpdStatus
	page := statuspage.AutoPage{
		Limit: MaxBody,
		Counts: map[string]*int64{
			"Total Accesses": &st.TotalAccesses, "Total kBytes": &st.TotalKBytes, "Uptime": &st.UptimeS,
			"BusyServers": &st.BusyServers, "IdleServers": &st.IdleServers,
		},
		Other:     map[string]func(string) error{"Scoreboard": func(v string) error { return scoreboard(&st, v) }},
		Required:  []string{"BusyServers", "IdleServers", "Scoreboard"},
		NotStatus: ErrNotStatus,
		Handler:   "mod_status's status-url",
	}
	if err := page.Parse(b); err != nil {
		return nil, err
	}
	return &st, nil
}

func count(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil && n < 0 {
		err = errors.New("negative")
	}
	return n, err
}

// scoreboard counts the connections by state: lighttpd 1.4's short states
// (connection_get_short_state), 'k' for a kept-alive connection and '_'
// for a free slot.
func scoreboard(st *results.LighttpdStatus, s string) error {
	count := map[byte]*int64{
		'k': &st.KeepAlive,
		'.': &st.Reading, 'q': &st.Reading, 'r': &st.Reading, 'R': &st.Reading,
		'h': &st.Handling, 's': &st.Handling,
		'w': &st.Writing, 'W': &st.Writing, 'S': &st.Writing, 'Q': &st.Writing,
		'C': &st.Closing, 'E': &st.Closing,
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '_' || s[i] == 'x' {
			continue
		}
		p, ok := count[s[i]]
		if !ok {
			return fmt.Errorf("%w: scoreboard character %q", ErrNotStatus, s[i])
		}
		*p++
	}
	return nil
}

// ParseStatistics parses the statistics page into st's FastCGI figures:
// "fastcgi.requests", "gw.active-requests" (or "fastcgi.active-requests")
// and, summed over the backends, "gw.backend.HOST.N.overloaded" and
// ".died". Other lines (other modules' counters, per-backend loads) are
// skipped; a line that is not "key: count" is an error.
func ParseStatistics(b []byte, st *results.LighttpdStatus) error {
	if len(b) > MaxBody {
		return fmt.Errorf("%w: statistics of %d bytes, more than %d", ErrNotStatus, len(b), MaxBody)
	}
	var requests, active bool
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			return fmt.Errorf("%w: statistics line %.60q is not KEY: COUNT", ErrNotStatus, line)
		}
		n, err := count(value)
		if err != nil {
			return fmt.Errorf("%w: statistics %.60q is not a count", ErrNotStatus, line)
		}
		var p *int64
		switch {
		case key == "fastcgi.requests":
			p, requests = &st.FastCGIRequests, true
		case key == "gw.active-requests" || key == "fastcgi.active-requests":
			p, active = &st.FastCGIActive, true
		case backendCounter(key, "overloaded"):
			st.FastCGIOverloaded = addCapped(st.FastCGIOverloaded, n)
		case backendCounter(key, "died"):
			st.FastCGIDied = addCapped(st.FastCGIDied, n)
		}
		if p != nil {
			*p = n
		}
	}
	if !requests || !active {
		return fmt.Errorf("%w: the statistics hold no fastcgi.requests or active-requests (is mod_status's statistics-url at that URL, with mod_fastcgi loaded?)", ErrNotStatus)
	}
	return nil
}

// addCapped adds two counts, stopping at the largest int64 rather than
// wrapping around to a negative one.
func addCapped(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// backendCounter reports whether key is a backend's counter called
// field: gw.backend.HOST.N.field or fastcgi.backend.HOST.N.field (HOST
// may be empty).
func backendCounter(key, field string) bool {
	rest, ok := strings.CutPrefix(key, "gw.backend.")
	if !ok {
		if rest, ok = strings.CutPrefix(key, "fastcgi.backend."); !ok {
			return false
		}
	}
	rest, ok = strings.CutSuffix(rest, "."+field)
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return false
	}
	_, err := strconv.Atoi(rest[i+1:])
	return err == nil
}

// Client fetches both pages from loopback URLs (package statuspage), a new
// connection for each read: a connection the client kept between samples
// would show among the kept-alive ones.
type Client struct {
	status, statistics *statuspage.Client
}

// NewClient returns a client for the status page's URL (without "?auto",
// which Fetch adds) and the statistics page's ("" to leave it out). Only
// loopback hosts are accepted: phptune measures stacks on this machine
// and sends nothing elsewhere.
func NewClient(statusURL, statisticsURL string) (*Client, error) {
	const want = "http://127.0.0.1:PORT/server-status"
	if err := statuspage.CheckURLNoQuery("lighttpd status", statusURL, want); err != nil {
		return nil, err
	}
	c := &Client{status: statuspage.NewClosing("lighttpd status", statusURL+"?auto", "is mod_status's status-url at that location?", MaxBody+1)}
	if statisticsURL != "" {
		if _, err := statuspage.CheckURL("lighttpd statistics", statisticsURL, "http://127.0.0.1:PORT/server-statistics"); err != nil {
			return nil, err
		}
		c.statistics = statuspage.NewClosing("lighttpd statistics", statisticsURL, "is mod_status's statistics-url at that location?", MaxBody+1)
	}
	return c, nil
}

// Fetch reads and parses the pages. The status request is a connection
// of its own, being handled: Fetch leaves it out so an idle server reads
// 0 busy.
func (c *Client) Fetch(ctx context.Context) (*results.LighttpdStatus, error) {
	st, err := statuspage.Fetch(ctx, c.status, Parse)
	if err != nil {
		return nil, err
	}
	st.BusyServers = max(0, st.BusyServers-1)
	st.Handling = max(0, st.Handling-1)
	if c.statistics != nil {
		b, err := c.statistics.Get(ctx)
		if err != nil {
			return nil, err
		}
		if err := ParseStatistics(b, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// Close releases the client's connections.
func (c *Client) Close() {
	c.status.Close()
	if c.statistics != nil {
		c.statistics.Close()
	}
}
