// Package apachestatus reads Apache's mod_status page in its machine
// format (?auto), as package nginxstatus reads nginx's stub_status.
package apachestatus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/statuspage"
)

// ErrNotStatus is returned for a body that is not a mod_status ?auto page.
var ErrNotStatus = errors.New("not an Apache mod_status ?auto page")

// MaxBody is the most of a page Parse reads: the scoreboard has a
// character per slot (ServerLimit × ThreadLimit; 16 × 64 with Debian's
// event defaults), the rest is under 2 KiB.
const MaxBody = 256 << 10

// Parse parses mod_status's ?auto output, "Key: value" lines:
//
//	ServerMPM: prefork
//	Total Accesses: 1
//	ReqPerSec: 12.5
//	BusyWorkers: 1
//	IdleWorkers: 3
//	Scoreboard: __W_
//
// BusyWorkers, IdleWorkers and Scoreboard are required (ExtendedStatus off
// still gives them); the rest is read when present. Unknown lines (a host
// name first, Load1, CPULoad ...) are skipped; a known key with a value
// that is not a non-negative number, a scoreboard character Apache does not
// write, or a repeated key is an error.
func Parse(b []byte) (*results.ApacheStatus, error) {
	var st results.ApacheStatus
	page := statuspage.AutoPage{
		Limit: MaxBody,
		Counts: map[string]*int64{
			"BusyWorkers": &st.BusyWorkers, "IdleWorkers": &st.IdleWorkers, "Total Accesses": &st.TotalAccesses,
			"Processes": &st.Processes, "ConnsTotal": &st.ConnsTotal, "ConnsAsyncKeepAlive": &st.ConnsAsyncKeepAlive,
		},
		Other: map[string]func(string) error{
			"Scoreboard": func(v string) error { return scoreboard(&st, v) },
			"ReqPerSec": func(v string) error {
				// Apache prints C's %g: ".5", "12.5", "1.2e+03".
				rate, err := strconv.ParseFloat(v, 64)
				if err != nil || rate < 0 || math.IsInf(rate, 0) || math.IsNaN(rate) {
					return fmt.Errorf("%w: ReqPerSec %.40q is not a rate", ErrNotStatus, v)
				}
				st.ReqPerSec = rate
				return nil
			},
			"ServerMPM": func(v string) error {
				if len(v) > 32 {
					return fmt.Errorf("%w: ServerMPM %.40q", ErrNotStatus, v)
				}
				st.MPM = v
				return nil
			},
		},
		Required:  []string{"BusyWorkers", "IdleWorkers", "Scoreboard"},
		NotStatus: ErrNotStatus,
		Handler:   "mod_status's handler",
	}
	if err := page.Parse(b); err != nil {
		return nil, err
	}
	return &st, nil
}

func scoreboard(st *results.ApacheStatus, s string) error {
	count := map[byte]*int64{
		'_': &st.Waiting, 'S': &st.Starting, 'R': &st.Reading, 'W': &st.Writing, 'K': &st.KeepAlive,
		'C': &st.Closing, 'L': &st.Logging, 'G': &st.Finishing, 'I': &st.Cleanup, 'D': &st.DNS, '.': &st.Open,
	}
	for i := 0; i < len(s); i++ {
		p, ok := count[s[i]]
		if !ok {
			return fmt.Errorf("%w: scoreboard character %q", ErrNotStatus, s[i])
		}
		*p++
	}
	st.Slots = int64(len(s))
	return nil
}

// Client fetches the page from a loopback URL, a new connection for each
// read (package statuspage: Get, Close). A prefork child holds a kept-alive
// connection for KeepAliveTimeout, so a status client that kept its own
// would take one of the pool's workers away from the load between samples.
type Client struct{ *statuspage.Client }

// NewClient returns a client for a mod_status URL (without "?auto", which
// Fetch adds). Only loopback hosts are accepted: phptune measures stacks on
// this machine and sends nothing elsewhere.
func NewClient(rawURL string) (*Client, error) {
	const want = "http://127.0.0.1:PORT/server-status"
	if err := statuspage.CheckURLNoQuery("apache status", rawURL, want); err != nil {
		return nil, err
	}
	return &Client{statuspage.NewClosing("apache status", rawURL+"?auto", "is mod_status's server-status handler at that location?", MaxBody+1)}, nil
}

// Fetch reads and parses the page. Apache serves the status request in a
// slot of its own, busy and writing; Fetch leaves it out so an idle
// server reads 0 busy. With every slot busy the request waits for one to
// free (the caller's ctx bounds the wait).
func (c *Client) Fetch(ctx context.Context) (*results.ApacheStatus, error) {
	st, err := statuspage.Fetch(ctx, c.Client, Parse)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: no Apache slot freed up for the status request in time; every child was busy (with KeepAlive on, a prefork child stays with its connection until it closes)", err)
	}
	if err != nil {
		return nil, err
	}
	st.BusyWorkers = max(0, st.BusyWorkers-1)
	st.Writing = max(0, st.Writing-1)
	return st, nil
}
