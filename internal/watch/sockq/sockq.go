// Package sockq reads the kernel's accept queues of listening sockets: how
// many connections wait for a process to accept them, and the backlog they
// may grow to. It is the cross-check for php-fpm's own "listen queue" figure,
// which php-fpm can only read for TCP sockets (through TCP_INFO; for a unix
// socket it reports 0 however long the queue is) and which a saturated pool
// cannot serve anyway.
//
// Two sources:
//
//   - NETLINK_SOCK_DIAG (what ss uses): unix sockets through unix_diag with
//     UNIX_DIAG_RQLEN, and TCP through inet_diag. For a listener the kernel
//     reports the accept queue as the receive queue and the backlog
//     (sk_max_ack_backlog) as the send queue. Only listeners are dumped, so
//     the cost does not grow with the number of connections.
//   - /proc/net/tcp and tcp6, the fallback when netlink is not available.
//     For a LISTEN socket rx_queue is the accept queue; tx_queue is not the
//     backlog there (it is write_seq - snd_una, always 0), so Backlog is
//     unknown (-1). /proc/net/unix has no queue lengths at all.
package sockq

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrParse is wrapped by errors about kernel output that could not be
// understood.
var ErrParse = errors.New("malformed socket table")

// Listener is one listening socket.
type Listener struct {
	// Network is "unix" or "tcp".
	Network string
	// Address is the bound path of a unix socket (abstract names start
	// with "@"), or "IP:PORT" ("[::1]:80" for IPv6) for TCP.
	Address string
	// Queued is the number of connections waiting in the accept queue.
	Queued int64
	// Backlog is the queue's limit (listen(2)'s backlog capped by
	// net.core.somaxconn); -1 when the source does not tell.
	Backlog int64
	// Inode is the socket's inode number.
	Inode uint64
}

// Addr is a listening address to look for, parsed from "unix:/path",
// "tcp:HOST:PORT", "/path" or "HOST:PORT".
type Addr struct {
	Network string
	Address string // path, or netip.AddrPort.String()
	port    uint16
	ip      netip.Addr
}

// ParseAddr parses a listening address as phptune's lab records them
// (php-fpm's "unix:/run/php.sock", "tcp:127.0.0.1:9000", a URL host
// "127.0.0.1:8080").
func ParseAddr(s string) (Addr, error) {
	network, rest, ok := strings.Cut(s, ":")
	switch {
	case ok && network == "unix":
		return Addr{Network: "unix", Address: rest}, nil
	case ok && network == "tcp":
		s = rest
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "@"):
		return Addr{Network: "unix", Address: s}, nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return Addr{}, fmt.Errorf("listening address %q: want unix:/path or tcp:IP:PORT (%v)", s, err)
	}
	return Addr{Network: "tcp", Address: ap.String(), port: ap.Port(), ip: ap.Addr().Unmap()}, nil
}

// Match reports whether l listens on a. A TCP socket bound to the wildcard
// address (0.0.0.0 or ::) matches any IP with the same port.
func (a Addr) Match(l Listener) bool {
	if a.Network != l.Network {
		return false
	}
	if a.Network == "unix" {
		return a.Address == l.Address
	}
	ap, err := netip.ParseAddrPort(l.Address)
	if err != nil || ap.Port() != a.port {
		return false
	}
	ip := ap.Addr().Unmap()
	return ip == a.ip || ip.IsUnspecified()
}

// FindAll returns every listener in ls that a names: several when
// processes listen on one address with SO_REUSEPORT (nginx's reuseport: a
// socket per worker, each with its own accept queue). Exact addresses are
// preferred over wildcard ones, as in Find.
func FindAll(ls []Listener, a Addr) []Listener {
	var exact, wild []Listener
	for _, l := range ls {
		if !a.Match(l) {
			continue
		}
		if a.Network == "tcp" && l.Address != a.Address {
			wild = append(wild, l)
			continue
		}
		exact = append(exact, l)
	}
	if len(exact) > 0 {
		return exact
	}
	return wild
}

// Find returns the listener in ls that a names, preferring an exact address
// over a wildcard one.
func Find(ls []Listener, a Addr) (Listener, bool) {
	var wild *Listener
	for i := range ls {
		if !a.Match(ls[i]) {
			continue
		}
		if a.Network == "tcp" && ls[i].Address != a.Address {
			if wild == nil {
				wild = &ls[i]
			}
			continue
		}
		return ls[i], true
	}
	if wild != nil {
		return *wild, true
	}
	return Listener{}, false
}
