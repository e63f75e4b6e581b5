package netnsdial

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
)

// Dial connects to the TCP address addr in the network namespace ns. The
// whole dial runs on a thread in that namespace: net.Dialer makes the
// socket on the calling goroutine's thread and, for an IP address, tries
// no other address on another goroutine; a goroutine locked to its thread
// that waits for the handshake waits on that thread, and the threads the
// runtime starts meanwhile are made from a clean template thread, not from
// this one. The dialer's control hook checks that the socket is indeed in
// ns (SIOCGSKNS) before connecting, so a change in how Go dials fails
// here instead of connecting in the wrong namespace. ctx bounds the
// connect.
func Dial(ctx context.Context, ns *os.File, addr netip.AddrPort) (net.Conn, error) {
	if !addr.IsValid() {
		return nil, fmt.Errorf("dialing in the network namespace %s: no address", ns.Name())
	}
	want, err := idOfFile(ns)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{ControlContext: func(_ context.Context, _, _ string, raw syscall.RawConn) error {
		return checkIn(raw, want, ns.Name())
	}}
	var c net.Conn
	err = runInside(ns, func() error {
		var err error
		c, err = d.DialContext(ctx, "tcp", addr.String())
		return err
	})
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, err
	}
	return c, nil
}

// checkIn fails unless the socket raw was made in the network namespace
// want (named name in the error).
func checkIn(raw syscall.RawConn, want nsID, name string) error {
	var got nsID
	var err error
	if cerr := raw.Control(func(fd uintptr) { got, err = socketNetNS(int(fd)) }); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("the socket was made outside the network namespace %s; not connecting", name)
	}
	return nil
}
