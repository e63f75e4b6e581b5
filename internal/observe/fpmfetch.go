package observe

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/peercred"
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
			return nil, fmt.Errorf("php-fpm status page %s on %s answered %d: %.100q; is pm.status_path set to %s?", statusPath, address, resp.Status, resp.Body, statusPath)
		}
		return resp.Body, nil
	}
}
