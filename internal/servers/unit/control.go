package unit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/phptune/phptune/internal/base/noredirect"
	"github.com/phptune/phptune/internal/base/peercred"
)

// MaxBody bounds what phptune reads from the control socket: a status or
// an answer to a PUT is a few hundred bytes.
const MaxBody = 256 << 10

// Control talks to a unitd's control socket. The socket lives in a
// directory the lab's account can write, so every connection checks that
// its listener runs as that account (uid) before anything is sent.
type Control struct {
	sock string
	http *http.Client
}

// NewControl returns a client for the control socket at sock (a path)
// whose unitd runs as uid (peercred.Any skips the check). It follows no
// redirect: unitd runs as the lab's account.
func NewControl(sock string, uid int) *Control {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return peercred.Dial(ctx, "unix", sock, uid)
		},
		DisableCompression: true, MaxIdleConns: 1, Proxy: nil,
	}
	return &Control{sock: sock, http: noredirect.Client(tr)}
}

// Close releases a kept-alive connection.
func (c *Control) Close() { c.http.CloseIdleConnections() }

func (c *Control) do(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://localhost"+path, r)
	if err != nil {
		return nil, 0, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("unit control socket %s: %w", c.sock, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return nil, 0, fmt.Errorf("unit control socket %s: %w", c.sock, err)
	}
	if err := noredirect.Check(resp); err != nil {
		return nil, 0, fmt.Errorf("unit control socket %s %v; is unitd listening on it?", c.sock, err)
	}
	return b, resp.StatusCode, nil
}

// Apply replaces unitd's whole configuration with doc (Render's JSON).
// Unit checks it and answers with an error and detail when it refuses;
// Apply returns them in Unit's words.
func (c *Control) Apply(ctx context.Context, doc string) error {
	b, code, err := c.do(ctx, http.MethodPut, "/config", []byte(doc))
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		var e struct {
			Error  string `json:"error"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(b, &e)
		msg := strings.TrimSpace(e.Error + " " + e.Detail)
		if msg == "" {
			msg = strings.TrimSpace(string(b))
		}
		return fmt.Errorf("unit refused the configuration (%d): %s", code, msg)
	}
	return nil
}

// Status reads and parses /status.
func (c *Control) Status(ctx context.Context) (*Status, error) {
	b, code, err := c.do(ctx, http.MethodGet, "/status", nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("unit /status answered %d", code)
	}
	return ParseStatus(b)
}
