package lab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/stack/seal"
)

// How the host reaches a sealed lab's web server. nginx also listens on a
// unix socket in the lab directory (HTTPSocket), which the host connects
// to with the listener's account checked. Apache cannot listen on a unix
// socket: the host reaches it at its address inside the seal
// (siteHTTPAddr), with sockets made in the seal's network namespace
// (seal.DialInside) — no veth, no relay process in the path, and nothing
// inside the seal can use that way out (only the host makes such sockets).

// SiteBySocket reports whether the host reaches this sealed lab's web
// server through HTTPSocket (nginx) rather than inside its network
// namespace (Apache).
func (l *Lab) SiteBySocket() bool {
	return l.Config.Server() == knob.NginxFPM && l.HTTPSocket != ""
}

// SiteAddr is the sealed lab's web server's address inside the seal.
func (l *Lab) SiteAddr() netip.AddrPort { return siteHTTPAddr }

// siteNetNS holds the sealed labs' network namespaces this process has
// opened, by seal directory: each is opened once (and verified, see
// seal.Seal.OpenNetNS) and kept for the process's life, so every
// connection into a lab uses the namespace checked when it was first
// opened.
var siteNetNS = struct {
	sync.Mutex
	open map[string]*os.File
}{open: map[string]*os.File{}}

// forgetSiteNetNS closes and forgets the namespace of the seal at p, as
// the seal goes (destroySeal): a lab made again under the same name gets
// a new one.
func forgetSiteNetNS(p string) {
	siteNetNS.Lock()
	defer siteNetNS.Unlock()
	if f, ok := siteNetNS.open[p]; ok {
		f.Close()
		delete(siteNetNS.open, p)
	}
}

// SiteNetNS is the sealed lab's network namespace, opened once per
// process; the caller must not close it.
func (l *Lab) SiteNetNS() (*os.File, error) {
	siteNetNS.Lock()
	defer siteNetNS.Unlock()
	if f, ok := siteNetNS.open[l.Seal]; ok {
		return f, nil
	}
	f, err := l.OpenNetNS()
	if err != nil {
		return nil, err
	}
	siteNetNS.open[l.Seal] = f
	return f, nil
}

// DialSite connects to the sealed lab's web server as a client of the
// site: its unix socket, checked to be the lab account's listener, or its
// address inside the seal.
func (l *Lab) DialSite(ctx context.Context) (net.Conn, error) {
	if !l.Sealed() {
		return nil, fmt.Errorf("lab %s is not sealed: open %s", l.Name, l.URL)
	}
	if l.SiteBySocket() {
		return dialAs(ctx, "unix", l.HTTPSocket, l.PeerUID())
	}
	ns, err := l.SiteNetNS()
	if err != nil {
		return nil, err
	}
	return seal.DialInside(ctx, ns, siteHTTPAddr)
}

// siteTransport is an HTTP transport to the sealed lab's web server.
func (l *Lab) siteTransport() *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return l.DialSite(ctx)
		},
		DisableKeepAlives: true,
	}
}

// waitSite waits until the sealed lab's web server accepts connections
// inside the seal, as waitDial does for a socket.
func (l *Lab) waitSite(ctx context.Context, what string, pid int) error {
	return l.waitFor(ctx, what, siteHTTPAddr.String()+" inside the seal", pid, func(ctx context.Context) (net.Conn, error) {
		return l.DialSite(ctx)
	})
}
