package labstack

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
)

// Target is the lab's web server as a load target, the one way every
// command (bench, tune, compare, capacity, profile, servers) reaches a lab.
// A lab on a loopback port is its URL's host and port. A sealed site lab
// (lab.Lab.Sealed) has no address on this host — its web server listens
// inside the seal, and its name on this host is production's — so it is
// reached through its web server's unix socket in the lab directory, with
// the site's own name as the Host header and every connection checked to
// be the lab account's listener (the directory is the lab's to write) —
// or, for Apache, which has no unix socket, at its address inside the
// seal, every socket made in the seal's network namespace.
func Target(l *lab.Lab) (load.Target, error) {
	if l.Sealed() {
		if l.HTTPSocket == "" || l.Host == "" {
			return load.Target{}, fmt.Errorf("lab %s is sealed but records no web server socket or host name; try: phptune lab down %s && phptune lab up --site NAME", l.Name, l.Name)
		}
		display := l.SiteURL() + " (lab " + l.Name + ", sealed)"
		if !l.SiteBySocket() {
			// Apache: at its address inside the seal.
			ns, err := l.SiteNetNS()
			if err != nil {
				return load.Target{}, err
			}
			return load.Target{Protocol: "http", Network: "tcp", Address: l.SiteAddr().String(), Host: l.Host, Display: display, NetNS: ns}, nil
		}
		return load.Target{Protocol: "http", Network: "unix", Address: l.HTTPSocket, Host: l.Host,
			Display: display, CheckPeer: true, PeerUID: l.PeerUID()}, nil
	}
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		return load.Target{}, fmt.Errorf("lab %s records URL %q, which is not a URL; try: phptune lab down %s && phptune lab up", l.Name, l.URL, l.Name)
	}
	return load.Target{Protocol: "http", Network: "tcp", Address: u.Host, Host: u.Host, Display: strings.TrimSuffix(l.URL, "/")}, nil
}

// TargetFor is Target with the workload's Host header when it has one
// (--host), and with path appended to what the target displays ("" for
// none).
func TargetFor(l *lab.Lab, w workload.Workload, path string) (load.Target, error) {
	t, err := Target(l)
	if err != nil {
		return t, err
	}
	if w.Host != "" {
		t.Host = w.Host
	}
	if path != "" {
		if l.Sealed() {
			t.Display = l.SiteURL() + path + " (lab " + l.Name + ", sealed)"
		} else {
			t.Display += path
		}
	}
	return t, nil
}

// target is the lab's web server as the workload loads it.
func (s *Stack) target() (load.Target, error) { return TargetFor(s.Lab, s.Workload, "") }
