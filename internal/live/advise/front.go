package advise

import (
	"fmt"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/watch/sysctl"
)

// PoolSocket is a php-fpm pool's address as configured, for matching it
// with the web servers in front.
type PoolSocket struct {
	Master      string `json:"master"`
	Pool        string `json:"pool"`
	Listen      string `json:"listen"` // "unix:/path" or "tcp:HOST:PORT"
	MaxChildren int64  `json:"max_children"`
}

// WebServer is an nginx or Apache in front of php-fpm, as read.
type WebServer struct {
	Kind string `json:"kind"` // "nginx" or "apache"
	Conf string `json:"conf"`
	// Workers is nginx's running worker processes (worker_processes when
	// none could be counted); WorkerConnections its events setting.
	Workers           int64    `json:"workers,omitempty"`
	WorkerConnections int64    `json:"worker_connections,omitempty"`
	KeepaliveTimeout  string   `json:"keepalive_timeout,omitempty"`
	Listens           []Listen `json:"listens,omitempty"`
	Passes            []Pass   `json:"passes"`
}

// Listen is one listening address and the backlog it asks for.
type Listen struct {
	Addr    string `json:"addr"`
	Backlog int64  `json:"backlog"`
	At      string `json:"at"`
}

// Pass is one place the server hands requests to FastCGI.
type Pass struct {
	Server string   `json:"server"` // server_name(s) or virtual host
	Listen []string `json:"listen,omitempty"`
	Target string   `json:"target"`
	Addrs  []string `json:"addrs"`
	At     string   `json:"at"`
	// UpstreamKeepalive is the idle connections each nginx worker keeps
	// to the upstream (0: none); KeepConn is fastcgi_keep_conn there.
	UpstreamKeepalive int64 `json:"upstream_keepalive,omitempty"`
	KeepConn          bool  `json:"fastcgi_keep_conn,omitempty"`
}

// PoolFront says which servers pass to one pool.
type PoolFront struct {
	Master   string   `json:"master"`
	Pool     string   `json:"pool"`
	Listen   string   `json:"listen"`
	PassedBy []string `json:"passed_by"`
}

// Front is the web servers found in front of the pools.
type Front struct {
	Servers []WebServer `json:"servers"`
	Pools   []PoolFront `json:"pools"`
}

// NginxDefaultBacklog is nginx's listen backlog when listen sets none on
// Linux (NGX_LISTEN_BACKLOG).
const NginxDefaultBacklog = 511

// FrontFindings matches each pool's socket with the servers' FastCGI
// targets and says what it sees: the server(s) and listen addresses in
// front of each pool, a pool no server passes to, an nginx whose
// connections (workers x worker_connections, two per proxied request: the
// client's and php-fpm's) are fewer than the workers of the pools it
// feeds, upstream keepalive connections that would hold more php-fpm
// workers than a pool has, and listen backlogs somaxconn caps
// (somaxconn < 0: unknown).
func FrontFindings(pools []PoolSocket, servers []WebServer, somaxconn int64) (Front, []Finding) {
	f := Front{Servers: servers}
	var out []Finding
	for _, p := range pools {
		pf := PoolFront{Master: p.Master, Pool: p.Pool, Listen: p.Listen}
		for _, s := range servers {
			for _, pass := range s.Passes {
				if !contains(pass.Addrs, p.Listen) {
					continue
				}
				who := s.Kind + " " + pass.Server
				if len(pass.Listen) > 0 {
					who += " (listen " + strings.Join(pass.Listen, ", ") + ")"
				}
				pf.PassedBy = append(pf.PassedBy, who+" at "+pass.At)
				switch {
				case pass.UpstreamKeepalive > 0 && !pass.KeepConn:
					out = append(out, Finding{Severity: "warning", Pool: p.Pool, Message: fmt.Sprintf(
						"%s's upstream %s keeps idle connections (keepalive %d) but fastcgi_keep_conn is off at %s: nginx closes every FastCGI connection, so nothing is kept; add fastcgi_keep_conn on; there", s.Kind, pass.Target, pass.UpstreamKeepalive, pass.At)})
				case pass.KeepConn && pass.UpstreamKeepalive == 0:
					out = append(out, Finding{Severity: "info", Pool: p.Pool, Message: fmt.Sprintf(
						"fastcgi_keep_conn on at %s without an upstream keepalive: nginx has no cache of idle connections, so it still connects per request (nginx.fastcgi_keepalive sets both)", pass.At)})
				}
				if pass.UpstreamKeepalive > 0 && s.Workers > 0 && p.MaxChildren > 0 && pass.UpstreamKeepalive*s.Workers > p.MaxChildren {
					out = append(out, Finding{Severity: "warning", Pool: p.Pool, Message: fmt.Sprintf(
						"nginx keeps up to %d idle connections per worker to it (upstream keepalive %d x %d workers = %d), more than its pm.max_children %d: each kept connection holds a php-fpm worker, so idle connections can starve it; lower keepalive to at most %d",
						pass.UpstreamKeepalive, pass.UpstreamKeepalive, s.Workers, pass.UpstreamKeepalive*s.Workers, p.MaxChildren, max(1, p.MaxChildren/s.Workers))})
				}
			}
		}
		sort.Strings(pf.PassedBy)
		f.Pools = append(f.Pools, pf)
		switch {
		case len(servers) == 0:
		case len(pf.PassedBy) == 0:
			var targets []string
			for _, s := range servers {
				for _, pass := range s.Passes {
					targets = append(targets, s.Kind+" → "+strings.Join(pass.Addrs, ","))
				}
			}
			seen := "no FastCGI target at all"
			if len(targets) > 0 {
				seen = "they pass to: " + strings.Join(dedup(targets), "; ")
			}
			out = append(out, Finding{Severity: "warning", Pool: p.Pool, Message: fmt.Sprintf(
				"no web server found passes requests to its socket %s (%s): either the pool is unused and its workers only hold memory, or the server in front uses another address", p.Listen, seen)})
		default:
			out = append(out, Finding{Severity: "info", Pool: p.Pool, Message: "passed to by " + strings.Join(pf.PassedBy, "; ")})
		}
	}
	if len(servers) == 0 && len(pools) > 0 {
		out = append(out, Finding{Severity: "info", Message: "no running nginx or Apache was found: advise cannot say which server passes to which pool (name nginx's configuration with --nginx-config)"})
	}
	for _, s := range servers {
		if s.Kind != "nginx" {
			continue
		}
		var children int64
		var fed []string
		for _, p := range pools {
			for _, pass := range s.Passes {
				if contains(pass.Addrs, p.Listen) {
					children += p.MaxChildren
					fed = append(fed, p.Pool)
					break
				}
			}
		}
		if conns := s.Workers * s.WorkerConnections; s.Workers > 0 && s.WorkerConnections > 0 && children > 0 && conns/2 < children {
			ka := ""
			if s.KeepaliveTimeout != "" && s.KeepaliveTimeout != "0" {
				ka = fmt.Sprintf("; idle keep-alive clients hold connections too, for keepalive_timeout %s", s.KeepaliveTimeout)
			}
			out = append(out, Finding{Severity: "warning", Message: fmt.Sprintf(
				"nginx (%s) can hold %d connections (%d workers x worker_connections %d), %d proxied requests at once (a client's connection and php-fpm's each), fewer than the %d workers of the pools it feeds (%s)%s: raise worker_connections to at least %d (nginx.worker_connections)",
				s.Conf, conns, s.Workers, s.WorkerConnections, conns/2, children, strings.Join(fed, ", "), ka, (2*children+s.Workers-1)/s.Workers)})
		}
		if somaxconn >= 0 {
			for _, l := range s.Listens {
				if l.Backlog > somaxconn {
					out = append(out, Finding{Severity: "warning", Message: fmt.Sprintf(
						"nginx's listen %s (%s): backlog %s: connections beyond it wait in SYN queues or are refused; raise net.core.somaxconn or lower backlog", l.Addr, l.At, sysctl.BacklogText(l.Backlog, somaxconn))})
				}
			}
		}
	}
	return f, out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func dedup(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
