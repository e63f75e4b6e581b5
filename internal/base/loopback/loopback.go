// Package loopback is phptune's one rule for "on this machine": an
// address is on loopback when its host is an IP literal in 127.0.0.0/8
// or ::1. A name, localhost included, is not accepted: it is resolved
// when the request is made (/etc/hosts, nsswitch, DNS), so what it names
// then is not what was checked. The load generator, apply's health check,
// the status page readers, a site's database address and dbcopy all use
// this rule.
package loopback

import (
	"errors"
	"fmt"
	"net"
	"net/url"
)

// IP reports whether host (no port, no brackets) is a loopback IP literal.
func IP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrNotLoopback is wrapped by HTTPURL's refusals.
var ErrNotLoopback = errors.New("not an http:// URL on a loopback address")

// HTTPURL parses an http:// URL and accepts it only when its host is a
// loopback IP literal and it carries no user name or password.
func HTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return nil, fmt.Errorf("%q: %w (give one such as http://127.0.0.1/)", raw, ErrNotLoopback)
	}
	if !IP(u.Hostname()) {
		return nil, fmt.Errorf("%q: %w: its host must be 127.0.0.1, another 127.x address or [::1] (not a name, localhost included: a name is resolved only when the request is made)", raw, ErrNotLoopback)
	}
	return u, nil
}
