package dbcopy

import (
	"net"
	"net/netip"

	"github.com/phptune/phptune/internal/base/loopback"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// A database on another machine (site.Endpoint "remote": a host that is
// not this machine's loopback) is copied as one on this machine is: from
// outside the seal, as the app's own account, read-only, in two
// connections (the grants' read and the dump), over TCP to the address
// discovery resolved the host to (site.DBTarget.IP: a name is resolved
// once, on this host, and the lab answers at that same address inside its
// seal). The client programs run as the lab's account, which is the
// site's: they reach nothing its own code could not.

// remoteConn is c for another machine's database t: TCP to the address
// its host resolved to, at its port.
func remoteConn(c Conn, t *site.DBTarget) Conn {
	_, port, err := net.SplitHostPort(t.Endpoint.Address)
	if err != nil || t.IP == "" {
		// No address resolved: optionFile refuses the "remote" network.
		return c
	}
	c.Network, c.Address, c.Remote = "tcp", net.JoinHostPort(t.IP, port), true
	return c
}

// remoteHost reports whether host, an IP address, is one a Remote
// connection may go to: one a seal can stand in for (loopback.StandIn).
// A name is not accepted: it would be resolved again, perhaps to another
// address than the one the lab answers at.
func (c Conn) remoteHost(host string) bool {
	a, err := netip.ParseAddr(host)
	return c.Remote && err == nil && loopback.StandIn(a) == nil
}

// HostsForTarget are the hosts the app's account needs in the lab for the
// database t: HostsFor's, and for another machine's database the address
// the lab answers at for it, which its clients inside the seal also come
// from (a connection to an address of the seal's loopback leaves from that
// address).
func HostsForTarget(t *site.DBTarget) []string {
	if t.Endpoint.Network == "remote" && t.IP != "" {
		return []string{"localhost", t.IP}
	}
	return HostsFor(t.Endpoint)
}
