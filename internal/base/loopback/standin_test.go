package loopback

import (
	"net/netip"
	"testing"
)

func TestStandIn(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"10.213.0.2", true},
		{"192.0.2.10", true},
		{"203.0.113.7", true},
		{"2001:db8::5", true},
		{"::ffff:10.0.0.1", true},
		{"127.0.0.1", true},
		{"::1", true},
		{"0.0.0.0", false},
		{"::", false},
		{"0.1.2.3", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"255.255.255.255", false},
		{"169.254.169.254", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
	} {
		err := StandIn(netip.MustParseAddr(tc.addr))
		if (err == nil) != tc.ok {
			t.Errorf("StandIn(%s) = %v, want ok %v", tc.addr, err, tc.ok)
		}
	}
	if StandIn(netip.Addr{}) == nil {
		t.Error("StandIn(zero Addr) = nil, want an error")
	}
}
