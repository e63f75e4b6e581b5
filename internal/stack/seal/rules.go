package seal

import (
	"fmt"
	"net/netip"
	"strings"
)

// table is the nftables table the seal loads in its network namespace.
const table = "phptune_seal"

// The sets Attempts reads: one element per destination (address,
// protocol, port) with a counter of the packets that tried to open a
// connection there.
const (
	set4 = "out4"
	set6 = "out6"
)

// ruleset is the nftables ruleset of a seal's network namespace. Packets
// of established connections and new ones to the lab's own listeners pass;
// every other new TCP or UDP flow is counted by destination; those that
// would leave loopback (the namespace routes everything to lo so that they
// reach this hook at all) are refused at once, TCP with a reset and UDP
// with port unreachable, so the caller sees "connection refused", not a
// timeout. A TCP attempt counts one packet (its SYN, answered by a reset);
// a UDP one counts each datagram sent before the refusal arrives.
func ruleset(own []netip.AddrPort) string {
	var own4, own6 []string
	for _, a := range own {
		e := fmt.Sprintf("%s . %d", a.Addr().Unmap(), a.Port())
		if a.Addr().Unmap().Is4() {
			own4 = append(own4, e)
		} else {
			own6 = append(own6, e)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s {\n", table)
	ownSet(&b, "own4", "ipv4_addr", own4)
	ownSet(&b, "own6", "ipv6_addr", own6)
	fmt.Fprintf(&b, "\tset %s { type ipv4_addr . inet_proto . inet_service; flags dynamic; size 65536; counter; }\n", set4)
	fmt.Fprintf(&b, "\tset %s { type ipv6_addr . inet_proto . inet_service; flags dynamic; size 65536; counter; }\n", set6)
	b.WriteString("\tchain output {\n")
	b.WriteString("\t\ttype filter hook output priority 0; policy accept;\n")
	b.WriteString("\t\tct state established,related accept\n")
	b.WriteString("\t\tip daddr . tcp dport @own4 accept\n")
	b.WriteString("\t\tip6 daddr . tcp dport @own6 accept\n")
	fmt.Fprintf(&b, "\t\tct state new meta nfproto ipv4 meta l4proto { tcp, udp } update @%s { ip daddr . meta l4proto . th dport }\n", set4)
	fmt.Fprintf(&b, "\t\tct state new meta nfproto ipv6 meta l4proto { tcp, udp } update @%s { ip6 daddr . meta l4proto . th dport }\n", set6)
	b.WriteString("\t\tip daddr != 127.0.0.0/8 meta l4proto tcp reject with tcp reset\n")
	b.WriteString("\t\tip6 daddr != ::1 meta l4proto tcp reject with tcp reset\n")
	b.WriteString("\t\tip daddr != 127.0.0.0/8 reject\n")
	b.WriteString("\t\tip6 daddr != ::1 reject\n")
	b.WriteString("\t}\n}\n")
	return b.String()
}

func ownSet(b *strings.Builder, name, typ string, elems []string) {
	fmt.Fprintf(b, "\tset %s { type %s . inet_service;", name, typ)
	if len(elems) > 0 {
		fmt.Fprintf(b, " elements = { %s };", strings.Join(elems, ", "))
	}
	b.WriteString(" }\n")
}

// routes are ip(8) batch commands run as the namespace is made: loopback
// up, and every destination routed to it, so that a connection to an
// address outside reaches the output hook (where it is counted and
// refused) instead of failing in connect() before any packet exists.
const routes = "link set lo up\nroute add default dev lo\nroute add ::/0 dev lo\n"

// hostsFile is the seal's /etc/hosts: localhost on both loopback
// addresses, and names on 127.0.0.1 only, where the lab's web server
// listens (a name on ::1 too would send clients there first, to a port
// nothing of the lab listens on); then the names of other machines the
// seal answers at (Spec.Served) on their addresses.
func hostsFile(names []string, served []Served) string {
	v4 := append([]string{"localhost"}, names...)
	return "# Written by phptune: a sealed lab's hosts; its site's names are the lab.\n" +
		"127.0.0.1\t" + strings.Join(v4, " ") + "\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" + servedHosts(served)
}
