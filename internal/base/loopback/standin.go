package loopback

import (
	"errors"
	"fmt"
	"net/netip"
)

// StandIn says whether a sealed lab may answer at a, an address of
// another machine that a site's configuration names (its database's, a
// cache's), by putting a on the seal's own loopback: nil when it may.
// The seal's network namespace has loopback only, so an address put there
// is seen by the lab's processes alone and leads nowhere else; what is
// refused is what a loopback interface cannot stand in for, or what would
// mean more than one machine: the unspecified address (every address),
// multicast and broadcast (groups, not a server), link-local addresses
// (they name a link of this host, and IPv6's need the zone of one of its
// interfaces), and IPv4's "this network" 0.0.0.0/8. A loopback address
// is accepted: it is the seal's own already.
func StandIn(a netip.Addr) error {
	if !a.IsValid() {
		return errors.New("not an IP address")
	}
	a = a.Unmap()
	switch {
	case a.Zone() != "":
		return fmt.Errorf("%v has a zone (an interface of this host): a seal has none of them", a)
	case a.IsUnspecified():
		return fmt.Errorf("%v is the unspecified address (every address), not a server's", a)
	case a.IsMulticast(), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%v is a multicast or broadcast address, not a server's", a)
	case a.IsLinkLocalUnicast():
		return fmt.Errorf("%v is link-local: it names a link of this host, which a seal does not have", a)
	case a.Is4() && a.As4()[0] == 0:
		return fmt.Errorf("%v is in 0.0.0.0/8 (\"this network\"), not a server's address", a)
	}
	return nil
}
