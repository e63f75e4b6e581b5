package loopback

import "net"

// Functions only this package's tests use.

// HostPort reports whether a HOST:PORT address has a loopback IP literal
// for its host.
func HostPort(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && IP(host)
}
