package seal

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/phptune/phptune/internal/base/netnsdial"
	"golang.org/x/sys/unix"
)

// DialInside connects to the TCP address addr in the network namespace
// netns (a seal's, from OpenNetNS): its socket is made there, on a thread
// of its own that enters the namespace and comes back, so the connection
// is the lab's listener's with no veth and no relay process in the path
// (netnsdial.Dial). Only loopback addresses are dialled: a seal's
// namespace has nothing else.
func DialInside(ctx context.Context, netns *os.File, addr netip.AddrPort) (net.Conn, error) {
	if !addr.Addr().IsLoopback() {
		return nil, fmt.Errorf("dialing %s in the seal's network namespace: only loopback addresses (127.0.0.1, ::1) are reached inside a seal", addr)
	}
	return netnsdial.Dial(ctx, netns, addr)
}

// ForwardInside is Forward to a TCP address in the network namespace
// netns instead of a unix socket: it listens on hostAddr, a loopback
// address and port of the host, and relays every connection made to it
// to inside, a loopback address and port in netns, through DialInside.
// It keeps its own copy of netns until it stops (when ctx ends), so the
// caller may close its file at once. It returns the address it listens
// on.
func ForwardInside(ctx context.Context, hostAddr string, netns *os.File, inside netip.AddrPort) (net.Addr, error) {
	if err := checkHostAddr(hostAddr); err != nil {
		return nil, err
	}
	if !inside.Addr().IsLoopback() {
		return nil, fmt.Errorf("forwarding to %s in the seal's network namespace: only loopback addresses (127.0.0.1, ::1) are reached inside a seal", inside)
	}
	fd, err := unix.FcntlInt(netns.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("forwarding into the seal: keeping its network namespace %s: %w", netns.Name(), err)
	}
	own := os.NewFile(uintptr(fd), netns.Name())
	addr, err := forward(ctx, hostAddr, func(ctx context.Context) (net.Conn, error) {
		return DialInside(ctx, own, inside)
	}, func() { own.Close() })
	if err != nil {
		own.Close()
		return nil, err
	}
	return addr, nil
}
