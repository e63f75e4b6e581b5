package lab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/stack/seal"
)

// DialCache connects to the lab's own cache server cs (one of l.Caches)
// the way the lab reaches its sealed servers: its unix socket in the
// lab's directory, checked to be the cache account's listener, else its
// loopback port inside the seal's network namespace (seal.DialInside),
// within a second.
func (l *Lab) DialCache(ctx context.Context, cs CacheServer) (net.Conn, error) {
	if cs.Socket != "" {
		return dialAs(ctx, "unix", cs.Socket, l.DBPeerUID())
	}
	if cs.Port == 0 || len(cs.IPs) == 0 {
		return nil, fmt.Errorf("the lab's %s has no socket and no port", kindTitle(cs.Kind))
	}
	if !l.Sealed() {
		return nil, fmt.Errorf("lab %s is not sealed: its %s is not in a seal", l.Name, kindTitle(cs.Kind))
	}
	ip, err := netip.ParseAddr(strings.TrimPrefix(cs.IPs[0], "-"))
	if err != nil {
		return nil, fmt.Errorf("the lab's %s listens at %q: %w", kindTitle(cs.Kind), cs.IPs[0], err)
	}
	ns, err := l.SiteNetNS()
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	return seal.DialInside(dctx, ns, netip.AddrPortFrom(ip, uint16(cs.Port)))
}

// dialTimeout bounds a connection to a lab's cache.
const dialTimeout = time.Second
