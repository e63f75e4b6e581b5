// Package statuspage fetches a web server's own status page (nginx's
// stub_status, Apache's mod_status) from a loopback URL or a lab's unix
// socket, bounded in size,
// and reads the "Key: value" lines of mod_status's machine format (?auto),
// which Apache and lighttpd share. The servers' packages parse the values.
package statuspage

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/phptune/phptune/internal/base/loopback"
	"github.com/phptune/phptune/internal/base/noredirect"
	"github.com/phptune/phptune/internal/base/peercred"
)

// Client fetches one status page.
type Client struct {
	what  string // "nginx status", "apache status"
	url   string
	shown string // where the page is, in messages (url when empty)
	hint  string // said when the page does not answer 200
	limit int64
	close bool
	http  *http.Client
}

// CheckURL parses a status page URL and refuses anything but http on a
// loopback IP (loopback.HTTPURL): phptune measures stacks on this machine and sends nothing
// elsewhere. want is the form a good URL takes, for the message.
func CheckURL(what, rawURL, want string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("%s URL %q: want %s", what, rawURL, want)
	}
	if _, err := loopback.HTTPURL(rawURL); err != nil {
		return nil, fmt.Errorf("%s URL %q is not on loopback (phptune only reads status pages on this machine): want %s, its host a loopback IP such as 127.0.0.1 (a name, localhost included, is resolved only when the page is read)", what, rawURL, want)
	}
	return u, nil
}

// CheckURLNoQuery is CheckURL for a page whose URL phptune completes (with
// "?auto", "/json"): a URL with a query of its own is refused too.
func CheckURLNoQuery(what, rawURL, want string) error {
	u, err := CheckURL(what, rawURL, want)
	if err != nil {
		return err
	}
	if u.RawQuery != "" {
		return fmt.Errorf("%s URL %q: want %s", what, rawURL, want)
	}
	return nil
}

// New returns a client for rawURL (already checked with CheckURL) that
// keeps one connection alive between reads; Get reads at most limit bytes
// of the page. It follows no redirect: a lab that rebinds the port would
// otherwise send root's observer to any URL.
func New(what, rawURL, hint string, limit int64) *Client {
	tr := &http.Transport{MaxIdleConns: 1, MaxIdleConnsPerHost: 1, DisableCompression: true, Proxy: nil}
	return &Client{what: what, url: rawURL, hint: hint, limit: limit, http: noredirect.Client(tr)}
}

// NewUnix returns a client for the page at path of the server listening
// on the unix socket, asked with Host: host (a sealed lab's web server,
// which has no address on this host). Every connection is made only when
// the kernel says the listener runs as uid (peercred.Any skips the
// check): the socket's directory is the lab's, which could put a link to
// another server's socket under its name. Like New, it keeps one
// connection alive and follows no redirect.
func NewUnix(what, socket, host, path string, uid int, hint string, limit int64) *Client {
	c := New(what, "http://"+host+path, hint, limit)
	c.shown = "unix:" + socket + " (Host " + host + ") " + path
	c.http.Transport.(*http.Transport).DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		return peercred.Dial(ctx, "unix", socket, uid)
	}
	return c
}

// NewClosing is New for a server that gives a kept-alive connection a
// worker of its own while it waits (Apache's prefork children): each read
// opens a connection and closes it, so the observer never holds a worker
// between samples.
func NewClosing(what, rawURL, hint string, limit int64) *Client {
	c := New(what, rawURL, hint, limit)
	c.close = true
	c.http.Transport.(*http.Transport).DisableKeepAlives = true
	return c
}

// Get returns the raw page.
func (c *Client) Get(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Close = c.close
	resp, err := c.http.Do(req)
	shown := c.url
	if c.shown != "" {
		shown = c.shown
	}
	if err != nil {
		return nil, fmt.Errorf("fetching %s %s: %w", c.what, shown, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.limit))
	if err != nil {
		return nil, fmt.Errorf("fetching %s %s: %w", c.what, shown, err)
	}
	if err := noredirect.Check(resp); err != nil {
		return nil, fmt.Errorf("%s %s %v; %s", c.what, shown, err, c.hint)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s answered %s; %s", c.what, shown, resp.Status, c.hint)
	}
	return b, nil
}

// Close releases the kept-alive connection.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Fetch reads the page with c and parses it with parse.
func Fetch[T any](ctx context.Context, c *Client, parse func([]byte) (*T, error)) (*T, error) {
	b, err := c.Get(ctx)
	if err != nil {
		return nil, err
	}
	return parse(b)
}
