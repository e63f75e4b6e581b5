// Package nginxstatus reads nginx's stub_status page.
package nginxstatus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/statuspage"
)

// ErrNotStatus is returned for a body that is not a stub_status page.
var ErrNotStatus = errors.New("not an nginx stub_status page")

// Parse parses stub_status output:
//
//	Active connections: 1
//	server accepts handled requests
//	 4 4 4
//	Reading: 0 Writing: 1 Waiting: 0
func Parse(b []byte) (*results.NginxStatus, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 4 {
		return nil, fmt.Errorf("%w: %d lines", ErrNotStatus, len(lines))
	}
	var st results.NginxStatus
	a, ok := strings.CutPrefix(strings.TrimSpace(lines[0]), "Active connections:")
	if !ok {
		return nil, fmt.Errorf("%w: first line %.60q", ErrNotStatus, lines[0])
	}
	var err error
	if st.Active, err = num(a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(lines[1]) != "server accepts handled requests" {
		return nil, fmt.Errorf("%w: second line %.60q", ErrNotStatus, lines[1])
	}
	f := strings.Fields(lines[2])
	if len(f) != 3 {
		return nil, fmt.Errorf("%w: counters line %.60q", ErrNotStatus, lines[2])
	}
	for i, dst := range []*int64{&st.Accepts, &st.Handled, &st.Requests} {
		if *dst, err = num(f[i]); err != nil {
			return nil, err
		}
	}
	f = strings.Fields(lines[3])
	if len(f) != 6 || f[0] != "Reading:" || f[2] != "Writing:" || f[4] != "Waiting:" {
		return nil, fmt.Errorf("%w: last line %.60q", ErrNotStatus, lines[3])
	}
	for i, dst := range []*int64{&st.Reading, &st.Writing, &st.Waiting} {
		if *dst, err = num(f[2*i+1]); err != nil {
			return nil, err
		}
	}
	return &st, nil
}

func num(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q is not a count", ErrNotStatus, s)
	}
	return n, nil
}

// Client fetches stub_status from a loopback URL over one kept-alive
// connection (package statuspage: Get, Close).
type Client struct{ *statuspage.Client }

// NewClient returns a client for a stub_status URL. Only loopback hosts are
// accepted: phptune measures stacks on this machine and sends nothing
// elsewhere.
func NewClient(rawURL string) (*Client, error) {
	if _, err := statuspage.CheckURL("nginx status", rawURL, "http://127.0.0.1:PORT/PATH"); err != nil {
		return nil, err
	}
	return &Client{statuspage.New("nginx status", rawURL, "is stub_status enabled at that location?", 64<<10)}, nil
}

// NewUnixClient returns a client for the stub_status at path of an nginx
// listening on the unix socket as uid (a sealed lab's), asked with Host:
// host; see statuspage.NewUnix.
func NewUnixClient(socket, host, path string, uid int) *Client {
	return &Client{statuspage.NewUnix("nginx status", socket, host, path, uid, "is stub_status enabled at that location?", 64<<10)}
}

// Fetch reads and parses the page. nginx counts the status request itself
// as one active, writing connection; Fetch subtracts it so an idle server
// reads 0.
func (c *Client) Fetch(ctx context.Context) (*results.NginxStatus, error) {
	st, err := statuspage.Fetch(ctx, c.Client, Parse)
	if err != nil {
		return nil, err
	}
	st.Active = max(0, st.Active-1)
	st.Writing = max(0, st.Writing-1)
	return st, nil
}
