package seal

import (
	"context"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/testkit/netnstest"
)

// TestDialInsideRefusesNonLoopback: a seal's namespace has only its
// loopback, so any other address is refused before anything is made.
func TestDialInsideRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"192.0.2.1:80", "0.0.0.0:80", "[2001:db8::1]:80", "[::]:80"} {
		t.Run(addr, func(t *testing.T) {
			_, err := DialInside(context.Background(), os.Stdin, netip.MustParseAddrPort(addr))
			if err == nil || !strings.Contains(err.Error(), "only loopback") {
				t.Errorf("DialInside(%s): %v", addr, err)
			}
			_, err = ForwardInside(context.Background(), "127.0.0.1:0", os.Stdin, netip.MustParseAddrPort(addr))
			if err == nil || !strings.Contains(err.Error(), "only loopback") {
				t.Errorf("ForwardInside(%s): %v", addr, err)
			}
		})
	}
	if _, err := ForwardInside(context.Background(), "0.0.0.0:0", os.Stdin, netip.MustParseAddrPort("127.0.0.1:80")); err == nil || !strings.Contains(err.Error(), "not a loopback") {
		t.Errorf("ForwardInside from 0.0.0.0: %v", err)
	}
}

// TestForwardInside: the forwarder relays a host connection to the
// listener in the namespace, not to the host's on the same address, and
// keeps working after the caller has closed its namespace file.
func TestForwardInside(t *testing.T) {
	ns := netnstest.New(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	netnstest.AnswerEach(host, "host")
	inside := host.Addr().(*net.TCPAddr).AddrPort()
	netnstest.AnswerEach(ns.Listen(t, inside.String()), "inside")

	file, err := os.Open(ns.File.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := ForwardInside(ctx, "127.0.0.1:0", file, inside)
	file.Close()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		if got := netnstest.ReadWord(t, c); got != "inside" {
			t.Fatalf("through the forwarder: %q", got)
		}
	}
	c, err := DialInside(ctx, ns.File, inside)
	if err != nil {
		t.Fatal(err)
	}
	if got := netnstest.ReadWord(t, c); got != "inside" {
		t.Fatalf("DialInside: %q", got)
	}
}
