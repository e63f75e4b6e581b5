package seal

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"

	"github.com/phptune/phptune/internal/base/peercred"
)

// Forward listens on hostAddr, a loopback address and port of the host
// ("127.0.0.1:8080"; port 0 picks one), and copies every connection made
// to it to the unix socket at unixPath, where the sealed lab's web server
// listens: a socket bound to a path is reachable from any network
// namespace that sees the path, so the host reaches into the seal with no
// veth and nothing in the seal can reach out through it (it only accepts
// on the host side). It returns the address it listens on and stops when
// ctx ends. Each connection to the unix socket is relayed only when the
// kernel says (SO_PEERCRED) that uid listens there: the socket's directory
// is the lab's, which could have put a link to another server's socket
// under its name (peercred.Any skips the check).
func Forward(ctx context.Context, hostAddr, unixPath string, uid int) (net.Addr, error) {
	if err := checkHostAddr(hostAddr); err != nil {
		return nil, err
	}
	if err := checkPath("the lab's unix socket", unixPath); err != nil {
		return nil, err
	}
	return forward(ctx, hostAddr, func(ctx context.Context) (net.Conn, error) {
		return peercred.Dial(ctx, "unix", unixPath, uid)
	}, nil)
}

// checkHostAddr refuses a forwarder's address unless it is a loopback
// address and port of the host.
func checkHostAddr(hostAddr string) error {
	ap, err := netip.ParseAddrPort(hostAddr)
	if err != nil || !ap.Addr().IsLoopback() {
		return fmt.Errorf("forwarding from %q: not a loopback address and port; the lab's pages are opened from this host only, e.g. 127.0.0.1:8080", hostAddr)
	}
	return nil
}

// dialLab opens the lab's end of one forwarded connection.
type dialLab func(ctx context.Context) (net.Conn, error)

// forward listens on hostAddr and relays every connection accepted there
// to a new connection from dial, until ctx ends; then, once the last
// relay is done, it calls stopped (when not nil). It returns the address
// it listens on.
func forward(ctx context.Context, hostAddr string, dial dialLab, stopped func()) (net.Addr, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", hostAddr)
	if err != nil {
		return nil, fmt.Errorf("forwarding into the lab: %v; pick a free port", err)
	}
	var wg sync.WaitGroup
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				wg.Wait()
				if stopped != nil {
					stopped()
				}
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				relay(ctx, c, dial)
			}()
		}
	}()
	return ln.Addr(), nil
}

// halfCloser is a connection whose sending side closes alone (TCP and
// unix stream sockets).
type halfCloser interface {
	CloseWrite() error
}

// relay copies between an accepted connection and a new one from dial,
// both ways, until both sides are done or ctx ends.
func relay(ctx context.Context, c net.Conn, dial dialLab) {
	defer c.Close()
	u, err := dial(ctx)
	if err != nil {
		return
	}
	defer u.Close()
	stop := context.AfterFunc(ctx, func() { c.Close(); u.Close() })
	defer stop()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(u, c)
		if hc, ok := u.(halfCloser); ok {
			_ = hc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, u)
	_ = c.(*net.TCPConn).CloseWrite()
	<-done
}
