package site

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/loopback"
)

// RemoteHost is a host the site's configuration names for its database
// or a cache that is not this machine's loopback: another machine, by
// its IP or its name. Discovery resolves a name on this host, once, and
// keeps the address: the copy of the database connects there (from
// outside the seal), and a site lab answers at that address inside its
// seal, the name resolving to it there (package seal: Spec.Served).
type RemoteHost struct {
	// Name is the host as the configuration writes it, "" when it
	// writes an IP address.
	Name string `json:"name,omitempty"`
	// IP is the address it resolved to on this host ("" with Error).
	IP string `json:"ip,omitempty"`
	// For says what the site reaches there: "database", "redis",
	// "memcached".
	For []string `json:"for"`
	// Error says why the lab cannot answer there: the name does not
	// resolve, or the address is one no loopback can stand in for
	// (loopback.StandIn).
	Error string `json:"error,omitempty"`
}

// lookupTimeout bounds one name's resolution.
const lookupTimeout = 5 * time.Second

// lookupHost resolves a name on this host, as PHP's clients would
// (/etc/hosts, then DNS): a variable for tests.
var lookupHost = func(ctx context.Context, name string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", name)
}

// resolveHost is the address host (an IP literal or a name, no port)
// stands for: the literal itself, else the name's first IPv4 address on
// this host, else its first address; refused when a seal's loopback
// cannot stand in for it.
func resolveHost(host string) (netip.Addr, error) {
	host = strings.Trim(host, "[]")
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		return a, loopback.StandIn(a)
	}
	if !plainName(host) {
		return netip.Addr{}, fmt.Errorf("%q is neither an IP address nor a host name", host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	addrs, err := lookupHost(ctx, host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s does not resolve on this host: %v", host, err)
	}
	var pick netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if a.Is4() {
			pick = a
			break
		}
		if !pick.IsValid() {
			pick = a
		}
	}
	if !pick.IsValid() {
		return netip.Addr{}, fmt.Errorf("%s resolves to no address on this host", host)
	}
	if err := loopback.StandIn(pick); err != nil {
		return netip.Addr{}, fmt.Errorf("%s resolves to %v: %v", host, pick, err)
	}
	return pick, nil
}

// plainName reports whether h is a host name: labels of letters, digits,
// '-' and '_', separated by dots.
func plainName(h string) bool {
	if h == "" || len(h) > 253 || strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// findRemoteDB completes t, whose endpoint is "remote" (a host that is
// not this machine's loopback): the host is resolved on this host and
// its address kept (t.IP). A name of this machine's loopback (a
// "db.local" on 127.0.1.1 in /etc/hosts) turns the endpoint into TCP at
// that address, and done is false: the caller looks for the running
// server there. Any other address is another machine: the copy dumps
// from it over TCP with the app's account, and no server of this host
// is looked for (ServerPID 0, the size unknown).
func findRemoteDB(t *DBTarget) (done bool) {
	host, port, err := net.SplitHostPort(t.Endpoint.Address)
	if err != nil {
		t.Error = fmt.Sprintf("the database address %s: %v", t.Endpoint.Address, err)
		return true
	}
	ip, err := resolveHost(host)
	if err != nil {
		t.Error = fmt.Sprintf("the database is on another machine (%s), and a lab cannot copy it from there: %v", t.Endpoint.Address, err)
		return true
	}
	t.IP = ip.String()
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err != nil {
		t.Name = host
	}
	if ip.IsLoopback() {
		t.Endpoint = Endpoint{"tcp", net.JoinHostPort(t.IP, port)}
		return false
	}
	via := ""
	if t.Name != "" {
		via = t.Name + " resolves to " + t.IP + " on this host; "
	}
	t.How = "another machine: " + via + "the copy connects to " + net.JoinHostPort(t.IP, port) + " over TCP as the app's account (read-only), and a lab answers at that address inside its seal"
	t.SizeNote = "size not read: the database is on another machine"
	return true
}

// findRemote sets s.Remote: every host of another machine the site's
// database and caches name (not loopback, not localhost, not one of the
// site's own names, which resolve to the lab's web server inside a
// seal), with the address it resolves to on this host, each host once.
func (s *Site) findRemote() {
	s.Remote = nil
	idx := map[string]int{}
	add := func(host, what string, ip string, err error) {
		key := strings.ToLower(host)
		if i, ok := idx[key]; ok {
			if !contains(s.Remote[i].For, what) {
				s.Remote[i].For = append(s.Remote[i].For, what)
			}
			return
		}
		r := RemoteHost{For: []string{what}, IP: ip}
		if _, perr := netip.ParseAddr(host); perr != nil {
			r.Name = host
		}
		if err != nil {
			r.IP, r.Error = "", err.Error()
		}
		idx[key] = len(s.Remote)
		s.Remote = append(s.Remote, r)
	}
	if s.DB != nil && s.DB.IP != "" {
		add(cmp.Or(s.DB.Name, s.DB.IP), "database", s.DB.IP, nil)
	}
	for _, c := range s.Caches {
		network, addr, _ := strings.Cut(c.Addr, ":")
		host, _, err := net.SplitHostPort(addr)
		if network != "tcp" || err != nil || s.ownName(host) {
			continue
		}
		if a, perr := netip.ParseAddr(host); perr == nil && a.Unmap().IsLoopback() {
			continue
		}
		ip, err := resolveHost(host)
		add(host, c.Kind, ip.String(), err)
	}
}

// ownName reports whether host is localhost or one of the site's own
// names.
func (s *Site) ownName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || h == strings.ToLower(s.Host) {
		return true
	}
	for _, v := range append([]Vhost{s.Vhost}, s.Also...) {
		for _, n := range v.Names {
			if strings.EqualFold(n, h) {
				return true
			}
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RemoteIP is the address a host the site names resolved to (Remote),
// "" when it names no such host or it did not resolve.
func (s *Site) RemoteIP(host string) string {
	for _, r := range s.Remote {
		if r.Error == "" && (strings.EqualFold(r.Name, host) || r.Name == "" && r.IP == strings.Trim(host, "[]")) {
			return r.IP
		}
	}
	return ""
}

// writeRemote writes the hosts of other machines the site names and
// what they resolved to.
func writeRemote(p linef, hosts []RemoteHost) {
	for _, r := range hosts {
		what := strings.Join(r.For, ", ")
		switch {
		case r.Error != "":
			p("remote      %s (%s): %s; a lab cannot answer there", cmp.Or(r.Name, r.IP), what, r.Error)
		case r.Name != "":
			p("remote      %s is %s on this host (%s): a lab answers at that address inside its seal, the name resolving to it there", r.Name, r.IP, what)
		default:
			p("remote      %s (%s): a lab answers at that address inside its seal", r.IP, what)
		}
	}
}
