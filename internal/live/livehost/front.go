package livehost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// ReadFront reads the nginx (spec) and Apache in front of the masters'
// pools and returns what they pass to which pool, with findings. Only
// bad input (a Config naming no running nginx, a relative root) is an
// error, an *InputError; what cannot be read is a finding. Apache is read
// on the host itself only when a trusted Apache runs (ApacheRuns).
func ReadFront(ctx context.Context, spec NginxSpec, masters []Master, fpmPrefix string) (*advise.Front, []advise.Finding, error) {
	if !filepath.IsAbs(spec.Root) {
		return nil, nil, inputErr("Try: --root /srv/host-copy", "--root %q: give an absolute directory", spec.Root)
	}
	var findings []advise.Finding
	var pools []advise.PoolSocket
	for _, m := range masters {
		h, err := ReadFPM(m.Conf, fpmPrefix)
		if err != nil {
			continue // Observe reported it
		}
		for _, p := range h.Pools {
			pools = append(pools, advise.PoolSocket{Master: m.Conf, Pool: p.Name, Listen: p.Listen, MaxChildren: p.MaxChildren})
		}
	}
	var servers []advise.WebServer
	ngx, err := OpenNginx(ctx, spec)
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		return nil, nil, err
	case err != nil:
		msg := err.Error()
		if os.Geteuid() != 0 {
			msg += " (nginx -T opens the logs its configuration names: run advise as root to read it)"
		}
		findings = append(findings, advise.Finding{Severity: "warning", Message: msg})
	case ngx != nil:
		servers = append(servers, nginxServer(ngx))
		if len(ngx.Conf.Unreached) > 0 {
			findings = append(findings, advise.Finding{Severity: "warning", Message: fmt.Sprintf(
				"nginx -T shows files no include of %s names (%s): a configuration file holds a \"# configuration file\" line of its own; advise reads that dump with care and apply refuses it", ngx.Nginx.Conf, strings.Join(ngx.Conf.Unreached, ", "))})
		}
	}
	ap, err := apacheServer(spec.Root)
	if err != nil {
		findings = append(findings, advise.Finding{Severity: "warning", Message: "Apache: " + err.Error()})
	} else if ap != nil {
		servers = append(servers, *ap)
	}
	front, more := advise.FrontFindings(pools, servers, sysctl.HostSomaxconn())
	return &front, append(findings, more...), nil
}

// nginxServer is what advise needs of a running nginx.
func nginxServer(ngx *LiveNginx) advise.WebServer {
	c := ngx.Conf
	s := advise.WebServer{Kind: "nginx", Conf: ngx.Nginx.Conf, WorkerConnections: 512, KeepaliveTimeout: "75s"}
	if pid, err := ngx.Nginx.Master(); err == nil {
		if fs, err := proc.Default(); err == nil {
			s.Workers = int64(NginxWorkers(fs, pid))
		}
	}
	if s.Workers == 0 {
		if v, ok := First(c.MainDirectives("worker_processes")); ok && v != "auto" {
			s.Workers, _ = strconv.ParseInt(v, 10, 64)
		} else {
			s.Workers = int64(runtime.NumCPU())
		}
	}
	if v, ok := First(c.EventsDirectives("worker_connections")); ok {
		s.WorkerConnections, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := First(c.HTTPDirectives("keepalive_timeout")); ok {
		s.KeepaliveTimeout = v
	}
	for _, srv := range c.Servers {
		var addrs []string
		for _, l := range srv.Listens {
			addrs = append(addrs, l.Args[0])
			backlog := int64(advise.NginxDefaultBacklog)
			for _, a := range l.Args[1:] {
				if v, ok := strings.CutPrefix(a, "backlog="); ok {
					backlog, _ = strconv.ParseInt(v, 10, 64)
				}
			}
			s.Listens = append(s.Listens, advise.Listen{Addr: l.Args[0], Backlog: backlog, At: l.At()})
		}
		name := strings.Join(srv.Names, " ")
		if name == "" {
			name = fmt.Sprintf("(server at %s:%d)", srv.File, srv.Line)
		}
		for _, p := range srv.FastCGI {
			s.Passes = append(s.Passes, advise.Pass{Server: name, Listen: addrs, Target: p.Target, Addrs: p.Addrs,
				At: fmt.Sprintf("%s:%d", p.File, p.Line), UpstreamKeepalive: int64(c.UpstreamKeepalive[p.Upstream]), KeepConn: p.KeepConn})
		}
	}
	return s
}

// apacheServer reads Apache's FastCGI hand-offs under root (nil when
// there is no apache2.conf, or, on the host itself, no Apache running).
func apacheServer(root string) (*advise.WebServer, error) {
	conf := filepath.Join(root, "etc", "apache2", "apache2.conf")
	if _, err := os.Stat(conf); err != nil {
		return nil, nil
	}
	if root == "/" && !ApacheRuns() {
		return nil, nil
	}
	ps, err := ReadApache(root)
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // file -> virtual host names
	if root == "/" {
		if out, err := exec.Command("apache2ctl", "-S").Output(); err == nil {
			for _, v := range ParseApacheS(out) {
				if !strings.Contains(names[v.File], v.Name) {
					names[v.File] = strings.TrimSpace(names[v.File] + " " + v.Name)
				}
			}
		}
	}
	s := &advise.WebServer{Kind: "apache", Conf: conf}
	for _, p := range ps {
		server := "every virtual host"
		if p.VirtualHost != "" {
			server = "<VirtualHost " + p.VirtualHost + ">"
			if n := names[p.File]; n != "" {
				server += " " + n
			}
		}
		s.Passes = append(s.Passes, advise.Pass{Server: server, Target: p.Addr, Addrs: []string{p.Addr}, At: fmt.Sprintf("%s:%d", p.File, p.Line)})
	}
	return s, nil
}
