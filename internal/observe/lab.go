package observe

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/mariadb"
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

// ForLab returns the observer configuration for a running lab: its nginx,
// php-fpm and MariaDB process trees, the fpm status page read over FastCGI,
// nginx's stub_status, MariaDB's status as the lab's database user, and the
// accept queues of the fpm socket and nginx's port. The caller adds its own
// generator root (Root{ComponentGenerator, os.Getpid()}) when it loads the
// lab. close releases the database handle.
func ForLab(l *lab.Lab) (cfg Config, close func(), err error) {
	close = func() {}
	for _, p := range l.Processes {
		cfg.Roots = append(cfg.Roots, Root{Component: p.Component, PID: p.PID})
	}
	if l.FPMListen != "" {
		network, addr := l.FPMAddr()
		path := l.FPMStatusPath
		if path == "" {
			path = "/fpm-status"
		}
		cfg.FPM = []FPMSource{{Pool: "www", Fetch: FPMFetcher(network, addr, path, l.FPMPeerUID()), MaxChildren: int(l.Config.Int("pm.max_children"))}}
		cfg.Sockets = append(cfg.Sockets, Socket{Owner: ComponentFPM, Addr: l.FPMListen})
	}
	if u, err := url.Parse(l.URL); err == nil && u.Host != "" {
		cfg.Sockets = append(cfg.Sockets, Socket{Owner: ComponentNginx, Addr: hostPort(u.Host)})
	}
	cfg.NginxStatusURL = l.NginxStatusURL
	if l.MariaDBSocket != "" {
		sec, err := l.ReadSecrets()
		if err != nil {
			return cfg, close, fmt.Errorf("reading lab %s's database credentials: %w (they are in %s/secrets.json, readable by root or the lab's owner)", l.Name, err, l.Dir)
		}
		var db *sql.DB
		if db, err = mariadb.OpenLab(l.MariaDBSocket, l.PeerUID(), sec.DBUser, sec.DBPassword, ""); err != nil {
			return cfg, close, err
		}
		db.SetMaxOpenConns(1)
		cfg.DB = db
		close = func() { db.Close() }
	}
	return cfg, close, nil
}

// hostPort turns a URL host into IP:PORT for the socket tables.
func hostPort(h string) string {
	if strings.HasPrefix(h, "localhost:") {
		return "127.0.0.1:" + strings.TrimPrefix(h, "localhost:")
	}
	return h
}
