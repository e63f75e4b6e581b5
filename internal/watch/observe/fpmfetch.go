package observe

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

// FPMFetcher returns a FPMSource.Fetch that asks php-fpm for its status page
// over FastCGI on network/address ("unix", "/run/php.sock"), bypassing the
// web server, as nginx would for statusPath ("/fpm-status"). With peerUID
// other than peercred.Any, a unix socket whose listener runs as another
// account is refused before anything is sent.
func FPMFetcher(network, address, statusPath string, peerUID int) func(ctx context.Context, query string) ([]byte, error) {
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		return peercred.Dial(ctx, network, address, peerUID)
	}
	return func(ctx context.Context, query string) ([]byte, error) {
		uri := statusPath
		if query != "" {
			uri += "?" + query
		}
		params := map[string]string{
			"GATEWAY_INTERFACE": "CGI/1.1",
			"REQUEST_METHOD":    http.MethodGet,
			"SCRIPT_NAME":       statusPath,
			"SCRIPT_FILENAME":   statusPath,
			"DOCUMENT_URI":      statusPath,
			"REQUEST_URI":       uri,
			"QUERY_STRING":      query,
			"SERVER_PROTOCOL":   "HTTP/1.1",
			"SERVER_NAME":       "localhost",
			"REMOTE_ADDR":       "127.0.0.1",
		}
		resp, err := fcgi.GetWith(ctx, dial, network, address, params, nil)
		if err != nil {
			return nil, err
		}
		if resp.Status != http.StatusOK {
			return nil, &StatusPageError{Path: statusPath, Address: address, Status: resp.Status, Body: resp.Body}
		}
		return resp.Body, nil
	}
}

// StatusPageError is a php-fpm status page that answered other than 200.
type StatusPageError struct {
	Path, Address string
	Status        int
	Body          []byte
}

func (e *StatusPageError) Error() string {
	return fmt.Sprintf("php-fpm status page %s on %s answered %d: %.100q; is pm.status_path set to %s?", e.Path, e.Address, e.Status, e.Body, e.Path)
}

// scoreboardBusyBody is what php-fpm's status page answers, with 500,
// when it cannot take the scoreboard's lock at once (fpm_status.c copies
// the scoreboard with a lock that does not wait): the master or a child
// holds it for a moment, typically while the master reloads or spawns.
var scoreboardBusyBody = []byte("Internal error. Please review log file for errors.")

// ScoreboardBusy says the answer may be php-fpm's scoreboard lock taken
// for a moment rather than a broken pool: asked again shortly, the page
// answers. (The same answer, persisting, is a pool without its status
// memory.)
func (e *StatusPageError) ScoreboardBusy() bool {
	return e.Status == http.StatusInternalServerError && bytes.HasPrefix(bytes.TrimSpace(e.Body), scoreboardBusyBody)
}
