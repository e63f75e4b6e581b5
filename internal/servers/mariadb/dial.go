package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/phptune/phptune/internal/base/peercred"
)

var registered sync.Map // uid -> network name

// peerNet returns the driver network that dials a unix socket and checks
// that its listener runs as uid (see package peercred).
func peerNet(uid int) string {
	name := fmt.Sprintf("unix-peer-%d", uid)
	if _, loaded := registered.LoadOrStore(uid, name); !loaded {
		mysql.RegisterDialContext(name, func(ctx context.Context, addr string) (net.Conn, error) {
			return peercred.Dial(ctx, "unix", addr, uid)
		})
	}
	return name
}

// OpenLab connects to a lab's server on socket as user, after checking that
// the server listening there runs as the lab's account (uid): a socket
// swapped for a link to another server is refused before a byte is sent.
func OpenLab(socket string, uid int, user, password, db string) (*sql.DB, error) {
	c := mysql.NewConfig()
	c.Net = "unix"
	if uid != peercred.Any {
		c.Net = peerNet(uid)
	}
	c.Addr = socket
	c.User = user
	c.Passwd = password
	c.DBName = db
	c.Timeout = 5 * time.Second
	c.MultiStatements = false
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	d := sql.OpenDB(conn)
	d.SetMaxOpenConns(2)
	return d, nil
}
