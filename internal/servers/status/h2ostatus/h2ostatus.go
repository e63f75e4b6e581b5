// Package h2ostatus reads h2o's status handler in its JSON form
// (/server-status/json): connections, their limit, worker threads, the
// requests in flight and the error responses h2o made itself.
package h2ostatus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/statuspage"
)

// ErrNotStatus is returned for a body that is not h2o's status JSON.
var ErrNotStatus = errors.New("not h2o's status JSON")

// MaxBody is the most of a page Parse reads: a connection's request takes
// about 1 KiB of it, so this holds h2o's default 1024 connections with
// room to spare; a larger page is refused rather than half read.
const MaxBody = 4 << 20

// page is what Parse reads of the JSON; the rest (versions, times,
// latency percentiles, HTTP/2 errors) is skipped.
type page struct {
	Connections    *int64 `json:"connections"`
	MaxConnections *int64 `json:"max-connections"`
	WorkerThreads  int64  `json:"worker-threads"`
	Requests       *[]struct {
		Method string `json:"method"`
	} `json:"requests"`
	Errors500 int64 `json:"status-errors.500"`
	Errors502 int64 `json:"status-errors.502"`
	Errors503 int64 `json:"status-errors.503"`
}

// Parse parses the status JSON. connections, max-connections and requests
// (one entry per connection: a request being served, or an empty method
// for a connection kept alive between requests) are required; a count
// that is negative is an error.
func Parse(b []byte) (*results.H2OStatus, error) {
	if len(b) > MaxBody {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrNotStatus, len(b), MaxBody)
	}
	var p page
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStatus, err)
	}
	if p.Connections == nil || p.MaxConnections == nil || p.Requests == nil {
		return nil, fmt.Errorf("%w: no connections, max-connections or requests (is h2o's status handler at that URL, read as /json?)", ErrNotStatus)
	}
	st := &results.H2OStatus{Connections: *p.Connections, MaxConnections: *p.MaxConnections, WorkerThreads: p.WorkerThreads,
		Errors500: p.Errors500, Errors502: p.Errors502, Errors503: p.Errors503}
	for _, r := range *p.Requests {
		if r.Method == "" {
			st.Idle++
		} else {
			st.InFlight++
		}
	}
	for _, n := range []int64{st.Connections, st.MaxConnections, st.WorkerThreads, st.Errors500, st.Errors502, st.Errors503} {
		if n < 0 {
			return nil, fmt.Errorf("%w: a negative count in %+v", ErrNotStatus, *st)
		}
	}
	return st, nil
}

// Client fetches the JSON from a loopback URL (package statuspage), a new
// connection for each read: one the client kept between samples would
// show among the idle ones.
type Client struct{ *statuspage.Client }

// NewClient returns a client for the status handler's URL (without
// "/json", which Fetch adds). Only loopback hosts are accepted: phptune
// measures stacks on this machine and sends nothing elsewhere.
func NewClient(rawURL string) (*Client, error) {
	const want = "http://127.0.0.1:PORT/server-status"
	if err := statuspage.CheckURLNoQuery("h2o status", rawURL, want); err != nil {
		return nil, err
	}
	return &Client{statuspage.NewClosing("h2o status", rawURL+"/json", "is h2o's status handler at that location?", MaxBody+1)}, nil
}

// Fetch reads and parses the page. The status request is a connection of
// its own, in flight: Fetch leaves it out so an idle server reads 0.
func (c *Client) Fetch(ctx context.Context) (*results.H2OStatus, error) {
	st, err := statuspage.Fetch(ctx, c.Client, Parse)
	if err != nil {
		return nil, err
	}
	st.Connections = max(0, st.Connections-1)
	st.InFlight = max(0, st.InFlight-1)
	return st, nil
}
