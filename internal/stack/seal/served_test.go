package seal

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSpecCheckServed(t *testing.T) {
	dir := "/var/lib/phptune/labs/a/seal"
	db := netip.MustParseAddr("10.213.0.2")
	cases := []struct {
		name string
		spec Spec
		want string // "" when valid, else a part of the error
	}{
		{"served name and own", Spec{Dir: dir, Served: []Served{{Name: "db.internal", Addr: db}},
			Own: []netip.AddrPort{netip.AddrPortFrom(db, 3306), netip.MustParseAddrPort("127.0.0.1:80")}}, ""},
		{"served ip alone", Spec{Dir: dir, Served: []Served{{Addr: db}}, Own: []netip.AddrPort{netip.AddrPortFrom(db, 6379)}}, ""},
		{"served v6", Spec{Dir: dir, Served: []Served{{Name: "cache", Addr: netip.MustParseAddr("2001:db8::7")}},
			Own: []netip.AddrPort{netip.MustParseAddrPort("[2001:db8::7]:11211")}}, ""},
		{"own mapped served", Spec{Dir: dir, Served: []Served{{Addr: db}}, Own: []netip.AddrPort{netip.MustParseAddrPort("[::ffff:10.213.0.2]:3306")}}, ""},
		{"two names one address", Spec{Dir: dir, Served: []Served{{Name: "db", Addr: db}, {Name: "redis", Addr: db}}}, ""},
		{"own not served", Spec{Dir: dir, Served: []Served{{Addr: db}}, Own: []netip.AddrPort{netip.MustParseAddrPort("10.213.0.3:3306")}}, "nor one the seal answers at"},
		{"own without served", Spec{Dir: dir, Own: []netip.AddrPort{netip.AddrPortFrom(db, 3306)}}, "not a loopback"},
		{"unspecified", Spec{Dir: dir, Served: []Served{{Addr: netip.MustParseAddr("0.0.0.0")}}}, "unspecified"},
		{"multicast", Spec{Dir: dir, Served: []Served{{Addr: netip.MustParseAddr("239.1.1.1")}}}, "multicast"},
		{"link-local", Spec{Dir: dir, Served: []Served{{Addr: netip.MustParseAddr("169.254.169.254")}}}, "link-local"},
		{"zero addr", Spec{Dir: dir, Served: []Served{{Name: "db"}}}, "not an IP address"},
		{"bad name", Spec{Dir: dir, Served: []Served{{Name: "db\n10.0.0.1 evil", Addr: db}}}, "not a host name"},
		{"localhost", Spec{Dir: dir, Served: []Served{{Name: "LocalHost", Addr: db}}}, "seal's own loopback"},
		{"site's own name", Spec{Dir: dir, Hosts: []string{"site.test"}, Served: []Served{{Name: "Site.test", Addr: db}}}, "site's own names"},
		{"name twice", Spec{Dir: dir, Served: []Served{{Name: "db", Addr: db}, {Name: "db", Addr: netip.MustParseAddr("10.0.0.9")}}}, "named twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.spec.check()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("check() = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("check() = %v, want an error containing %q", err, c.want)
			}
		})
	}
	many := Spec{Dir: dir}
	for i := range maxServed + 1 {
		many.Served = append(many.Served, Served{Addr: netip.AddrFrom4([4]byte{10, 1, 0, byte(i + 1)})})
	}
	if err := many.check(); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("check() of %d served addresses = %v, want a refusal", len(many.Served), err)
	}
}

func TestServedBatchAndHosts(t *testing.T) {
	served := []Served{
		{Name: "db.internal", Addr: netip.MustParseAddr("10.213.0.2")},
		{Name: "redis.internal", Addr: netip.MustParseAddr("::ffff:10.213.0.2")},
		{Addr: netip.MustParseAddr("2001:db8::7")},
		{Name: "local-db", Addr: netip.MustParseAddr("127.0.1.1")},
	}
	cases := []struct {
		name, got, want string
	}{
		{"batch", servedBatch(served), "address add 10.213.0.2/32 dev lo\naddress add 2001:db8::7/128 dev lo nodad\n"},
		{"empty batch", servedBatch(nil), ""},
		{"hosts", hostsFile([]string{"site.test"}, served), "# Written by phptune: a sealed lab's hosts; its site's names are the lab.\n" +
			"127.0.0.1\tlocalhost site.test\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
			"10.213.0.2\tdb.internal\n10.213.0.2\tredis.internal\n127.0.1.1\tlocal-db\n"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, c.got, c.want)
		}
	}
	r := ruleset([]netip.AddrPort{netip.MustParseAddrPort("10.213.0.2:3306")})
	if !strings.Contains(r, "elements = { 10.213.0.2 . 3306 }") {
		t.Errorf("a served listener is not among the seal's own:\n%s", r)
	}
}

// TestServedAddressAnswers: a seal standing in for another machine's
// address (10.213.7.2, named db.internal) has it on its loopback: the
// name resolves to it inside, a listener of the lab there answers and
// sees its clients come from that address, and everything else — the
// same address's other ports, another outside address, the host's own
// address — is still refused at once and counted, and no packet reaches
// the host's listener.
func TestServedAddressAnswers(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	if tool("socat") == "socat" {
		t.Skip("socat is not installed (apt-get install socat)")
	}
	hostLn, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hostLn.Close()
	hostPort := hostLn.Addr().(*net.TCPAddr).Port
	reached := make(chan string, 10)
	go func() {
		for {
			c, err := hostLn.Accept()
			if err != nil {
				return
			}
			reached <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	hostIP := outboundIP(t)

	served := netip.MustParseAddr("10.213.7.2")
	s := create(t, Spec{Dir: filepath.Join(base(t), "seal"), Hosts: []string{"site.test"},
		Served: []Served{{Name: "db.internal", Addr: served}},
		Own:    []netip.AddrPort{netip.AddrPortFrom(served, 3306)}})
	script := fmt.Sprintf(`getent hosts db.internal
socat TCP-LISTEN:3306,bind=10.213.7.2,reuseaddr,fork SYSTEM:'echo "served, peer $SOCAT_PEERADDR"' &
for i in $(seq 100); do { exec 3<>/dev/tcp/db.internal/3306; } 2>/dev/null && break; sleep 0.05; done
head -1 <&3; exec 3<&-
for d in 10.213.7.2/80 10.255.255.1/3306 %s/%d; do
  if timeout 5 bash -c "exec 3<>/dev/tcp/$d" 2>/dev/null; then echo "$d connected"; else echo "$d failed"; fi
done
kill %%1
`, hostIP, hostPort)
	start := time.Now()
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", script)
	t.Logf("inside, in %v:\n%s", time.Since(start), out)
	if err != nil {
		t.Fatalf("the script: %v", err)
	}
	for _, want := range []string{"10.213.7.2      db.internal", "served, peer 10.213.7.2", "10.213.7.2/80 failed", "10.255.255.1/3306 failed", hostIP + "/" + strconv.Itoa(hostPort) + " failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("inside, the output lacks %q", want)
		}
	}
	select {
	case a := <-reached:
		t.Errorf("the host's listener was reached from inside (from %s)", a)
	default:
	}
	got, err := s.Attempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]uint64{}
	for _, a := range got {
		counted[a.String()] = a.Count
	}
	for _, want := range []string{"tcp 10.213.7.2:80", "tcp 10.255.255.1:3306", "tcp " + hostIP + ":" + strconv.Itoa(hostPort)} {
		if counted[want] != 1 {
			t.Errorf("attempts to %s counted %d times, want 1 (all: %v)", want, counted[want], got)
		}
	}
	if n, ok := counted["tcp 10.213.7.2:3306"]; ok {
		t.Errorf("the lab's listener at the served address was counted %d times as a way out", n)
	}
}

// outboundIP is an address of this host outside loopback (the one its
// default route leaves from), else 127.0.0.1.
func outboundIP(t testing.TB) string {
	t.Helper()
	c, err := net.Dial("udp", "192.0.2.1:9")
	if err != nil {
		return "127.0.0.1"
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}
