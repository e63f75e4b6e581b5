package dbcopy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/base/loopback"
)

// Conn is where and as whom a client program connects.
type Conn struct {
	Network  string // "unix" or "tcp"
	Address  string // a socket's path, or HOST:PORT
	User     string
	Password string
	// Remote says Address is another machine's, as the site's
	// configuration names it (site.DBTarget.IP): an IP address a seal
	// can stand in for (remoteHost), not only a loopback one.
	Remote bool
}

// optionFile renders c as a [client] option file (every value quoted as
// my.cnf reads it back), with the protocol forced so that "localhost"
// never silently means another socket. The error names what cannot be
// carried, never the password.
func (c Conn) optionFile() (string, error) {
	var b strings.Builder
	b.WriteString("[client]\n")
	switch c.Network {
	case "unix":
		s, err := confpath.MyCnf.Quote(c.Address)
		if err != nil {
			return "", fmt.Errorf("MariaDB socket %q: %w", c.Address, err)
		}
		fmt.Fprintf(&b, "protocol = SOCKET\nsocket = %s\n", s)
	case "tcp":
		host, port, err := net.SplitHostPort(c.Address)
		if err != nil {
			return "", fmt.Errorf("MariaDB address %q: %v; give HOST:PORT", c.Address, err)
		}
		if !loopback.IP(host) && !c.remoteHost(host) {
			return "", fmt.Errorf("MariaDB address %q: only this machine's loopback, or another machine's IP address the site's configuration names, is copied from", c.Address)
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", fmt.Errorf("MariaDB address %q: bad port", c.Address)
		}
		fmt.Fprintf(&b, "protocol = TCP\nhost = %s\nport = %s\n", host, port)
	default:
		return "", fmt.Errorf("MariaDB endpoint %q: only a unix socket or a loopback TCP address is copied from", c.Network+":"+c.Address)
	}
	if c.User == "" {
		return "", errors.New("no MariaDB user: the app's configuration names none")
	}
	u, err := confpath.MyCnf.QuoteValue(c.User)
	if err != nil {
		return "", errors.New("the MariaDB user name holds a character an option file cannot carry")
	}
	fmt.Fprintf(&b, "user = %s\n", u)
	if c.Password != "" {
		pw, err := confpath.MyCnf.QuoteValue(c.Password)
		if err != nil {
			return "", errors.New("the MariaDB password holds a character an option file cannot carry (a newline or a NUL)")
		}
		fmt.Fprintf(&b, "password = %s\n", pw)
	}
	// Rows as large as the server allows (mariadb-dump's default is 24M,
	// Debian's [mysqldump] group says 16M).
	b.WriteString("max_allowed_packet = 1G\n")
	return b.String(), nil
}
