package seal

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/phptune/phptune/internal/base/loopback"
)

// Served is an address of another machine that the site's configuration
// names (its database's, a cache's) and that the seal answers at instead:
// Addr is put on the seal's loopback interface, so a lab server can
// listen there (Spec.Own may then name it), and Name, when the
// configuration writes a name, resolves to Addr in the seal's /etc/hosts.
// The seal's network namespace has no other interface and no route off
// loopback, so the address is the lab's alone: nothing the lab sends to
// it leaves, and nothing of the host's network can reach it.
type Served struct {
	Name string
	Addr netip.Addr
}

// maxServed bounds Spec.Served: a site names a database and a few caches.
const maxServed = 32

// checkServed validates Spec.Served: addresses a loopback can stand in
// for (loopback.StandIn), names that are host names and neither localhost
// nor one of the site's own names (those are the lab's web server, on
// 127.0.0.1), each name once.
func (s Spec) checkServed() error {
	if len(s.Served) > maxServed {
		return fmt.Errorf("the seal stands in for %d addresses of other machines, more than %d; a site names a database and a few caches", len(s.Served), maxServed)
	}
	names := map[string]bool{}
	for _, h := range s.Hosts {
		names[strings.ToLower(h)] = true
	}
	seen := map[string]bool{}
	for _, v := range s.Served {
		if err := loopback.StandIn(v.Addr); err != nil {
			return fmt.Errorf("the seal cannot answer at %v for another machine: %v", v.Addr, err)
		}
		if v.Name == "" {
			continue
		}
		n := strings.ToLower(v.Name)
		switch {
		case !hostName(v.Name):
			return fmt.Errorf("%q is not a host name (letters, digits, '-' and '.'); the seal's /etc/hosts cannot carry it", v.Name)
		case n == "localhost" || strings.HasSuffix(n, ".localhost"):
			return fmt.Errorf("%s is the seal's own loopback, not another machine", v.Name)
		case names[n]:
			return fmt.Errorf("%s is one of the site's own names, which resolve to the lab's web server (127.0.0.1) inside", v.Name)
		case seen[n]:
			return fmt.Errorf("%s is named twice among the addresses the seal answers at; give each name one address", v.Name)
		}
		seen[n] = true
	}
	return nil
}

// serves reports whether a (a listener's address) is one of the
// addresses the seal answers at for another machine.
func (s Spec) serves(a netip.Addr) bool {
	for _, v := range s.Served {
		if v.Addr.Unmap() == a.Unmap() {
			return true
		}
	}
	return false
}

// servedBatch are the ip(8) batch commands that put the served
// addresses on the seal's loopback, each once (a loopback address is
// there already): a /32 or /128 host address, so that nothing but the
// address itself becomes local; IPv6's without duplicate address
// detection, which would hold it back as tentative for a while.
func servedBatch(served []Served) string {
	var b strings.Builder
	seen := map[netip.Addr]bool{}
	for _, v := range served {
		a := v.Addr.Unmap()
		if a.IsLoopback() || seen[a] {
			continue
		}
		seen[a] = true
		if a.Is4() {
			fmt.Fprintf(&b, "address add %s/32 dev lo\n", a)
		} else {
			fmt.Fprintf(&b, "address add %s/128 dev lo nodad\n", a)
		}
	}
	return b.String()
}

// addServed puts the served addresses on the seal's loopback.
func (s *Seal) addServed(ctx context.Context, served []Served) error {
	batch := servedBatch(served)
	if batch == "" {
		return nil
	}
	if err := s.inNet(ctx, strings.NewReader(batch), "ip", "-batch", "-"); err != nil {
		return fmt.Errorf("putting the addresses the lab answers at for other machines on the seal's loopback: %v", err)
	}
	return nil
}

// servedHosts are the seal's /etc/hosts lines of the served names.
func servedHosts(served []Served) string {
	var b strings.Builder
	for _, v := range served {
		if v.Name != "" {
			fmt.Fprintf(&b, "%s\t%s\n", v.Addr.Unmap(), v.Name)
		}
	}
	return b.String()
}
