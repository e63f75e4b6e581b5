package lab

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
)

// A site whose database or caches are on another machine (an IP, or a
// name: site.Site.Remote) is copied from outside the seal as one on this
// machine is, and inside the seal that machine's address answers: the
// seal puts it on its loopback and resolves its name to it (seal.Served),
// the lab's MariaDB listens there too (bind-address takes a list), the
// lab's Redis or Memcached at the cache's address, and those listeners
// alone join Spec.Own. Only the addresses the site's configuration names
// are served, each checked by seal (loopback.StandIn); the seal still has
// loopback only, so what answers there is the lab, and nothing sent there
// leaves.

// ServedAddr is an address of another machine a site lab answers at
// inside its seal.
type ServedAddr struct {
	// Name is the host as the site's configuration writes it, "" for an
	// IP address; IP the address it resolved to on this host.
	Name string `json:"name,omitempty"`
	IP   string `json:"ip"`
	// For says what the site reaches there ("database", "redis").
	For []string `json:"for"`
}

// siteServed are the addresses of other machines a site lab answers at:
// the site's Remote hosts that resolved.
func siteServed(s *site.Site) []ServedAddr {
	var out []ServedAddr
	for _, r := range s.Remote {
		if r.Error == "" && r.IP != "" {
			out = append(out, ServedAddr{Name: r.Name, IP: r.IP, For: r.For})
		}
	}
	return out
}

// siteDBIP is the address of the site's database host the lab's
// MariaDB also listens on ("" for none): another machine's, or a name
// of this machine's loopback other than 127.0.0.1, at the lab's MariaDB
// port (one port: a database at another port is not answered, and
// servedNotes says so).
func siteDBIP(s *site.Site) string {
	if s.DB == nil || s.DB.IP == "" || s.DB.IP == siteDBAddr.Addr().String() {
		return ""
	}
	_, port, err := net.SplitHostPort(s.DB.Endpoint.Address)
	if err != nil || port != fmt.Sprint(siteDBAddr.Port()) {
		return ""
	}
	return s.DB.IP
}

// servedNotes say what of the site's other machines a lab cannot answer
// for: a host that did not resolve, a database at another port than the
// lab's MariaDB's.
func servedNotes(s *site.Site) []string {
	var notes []string
	for _, r := range s.Remote {
		if r.Error != "" {
			notes = append(notes, fmt.Sprintf("the site names %s for its %s: %s; inside the seal the lab does not answer there, so the site's connections to it fail", r.Name, strings.Join(r.For, " and "), r.Error))
		}
	}
	if s.DB != nil && s.DB.IP != "" && siteDBIP(s) == "" && s.DB.IP != siteDBAddr.Addr().String() {
		notes = append(notes, fmt.Sprintf("the site's database is at %s: the lab's MariaDB listens on port %d only, so inside the seal the site's connections to that port fail (the copy is made all the same)", s.DB.Endpoint.Address, siteDBAddr.Port()))
	}
	return notes
}

// sealServed are the lab's served addresses as the seal takes them.
func (l *Lab) sealServed() []seal.Served {
	var out []seal.Served
	for _, v := range l.SiteServed {
		a, err := netip.ParseAddr(v.IP)
		if err != nil {
			continue // seal refuses nothing it is not given: Create checks the rest
		}
		if v.Name == "" || contains(l.SiteNames, strings.ToLower(v.Name)) || strings.EqualFold(v.Name, "localhost") {
			out = append(out, seal.Served{Addr: a})
			continue
		}
		out = append(out, seal.Served{Name: v.Name, Addr: a})
	}
	return out
}

// dbBindAlso are the addresses the lab's MariaDB listens on beside
// 127.0.0.1 inside its seal.
func (l *Lab) dbBindAlso() []string {
	if l.SiteDBIP == "" {
		return nil
	}
	return []string{l.SiteDBIP}
}

// dbOwnAlso are the seal's listeners of the lab's MariaDB beside
// 127.0.0.1:3306 (Spec.Own).
func (l *Lab) dbOwnAlso() []netip.AddrPort {
	a, err := netip.ParseAddr(l.SiteDBIP)
	if err != nil {
		return nil
	}
	return []netip.AddrPort{netip.AddrPortFrom(a, siteDBAddr.Port())}
}

// servedIP is the address a cache host the site names resolved to, when
// the lab answers there ("" when it does not).
func servedIP(served []ServedAddr, host string) string {
	for _, v := range served {
		if strings.EqualFold(v.Name, host) || v.Name == "" && v.IP == strings.Trim(host, "[]") {
			return v.IP
		}
	}
	return ""
}

// protectedMode is a lab Redis's protected-mode line when it listens at
// another machine's address: Redis without a password refuses clients
// that do not come from 127.0.0.1 or ::1, and the site's code comes from
// the address it connects to. Inside the seal only the lab's processes
// can reach that address (the seal has loopback only), so nothing is
// opened to the host's network; "" when every address is loopback.
func protectedMode(ips []string) string {
	for _, ip := range ips {
		if a, err := netip.ParseAddr(strings.TrimPrefix(ip, "-")); err == nil && !a.IsLoopback() {
			return "protected-mode no\n"
		}
	}
	return ""
}
