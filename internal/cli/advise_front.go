package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/advise"
	"github.com/phptune/phptune/internal/livehost"
	"github.com/phptune/phptune/internal/proc"
	"github.com/phptune/phptune/internal/sysctl"
)

// frontFlags say where advise looks for the web servers in front of
// php-fpm; root is the host flags' --root.
type frontFlags struct {
	nginx nginxFlags
	root  string
}

func (f *frontFlags) add(cmd *cobra.Command) { f.nginx.add(cmd) }

// adviseFront reads the nginx and Apache in front of the masters' pools
// and returns what they pass to which pool, with findings. Only bad
// input (--nginx-config naming no running nginx, a relative --root) is
// an error; what cannot be read is a finding.
func adviseFront(ctx context.Context, f *frontFlags, masters []livehost.Master, fpmPrefix string) (*advise.Front, []advise.Finding, error) {
	if !filepath.IsAbs(f.root) {
		return nil, nil, usageErr("Try: --root /srv/host-copy", "--root %q: give an absolute directory", f.root)
	}
	var findings []advise.Finding
	var pools []advise.PoolSocket
	for _, m := range masters {
		h, err := livehost.ReadFPM(m.Conf, fpmPrefix)
		if err != nil {
			continue // Observe reported it
		}
		for _, p := range h.Pools {
			pools = append(pools, advise.PoolSocket{Master: m.Conf, Pool: p.Name, Listen: p.Listen, MaxChildren: p.MaxChildren})
		}
	}
	var servers []advise.WebServer
	ngx, err := livehost.OpenNginx(ctx, f.nginx.spec(f.root))
	err = hostErr(err)
	switch {
	case err != nil && isUsage(err):
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
	ap, err := apacheServer(f.root)
	if err != nil {
		findings = append(findings, advise.Finding{Severity: "warning", Message: "Apache: " + err.Error()})
	} else if ap != nil {
		servers = append(servers, *ap)
	}
	somaxconn := int64(-1)
	if v, err := sysctl.NewFS("/proc").Value(sysctl.Somaxconn); err == nil {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			somaxconn = n
		}
	}
	front, more := advise.FrontFindings(pools, servers, somaxconn)
	return &front, append(findings, more...), nil
}

// nginxServer is what advise needs of a running nginx.
func nginxServer(ngx *livehost.LiveNginx) advise.WebServer {
	c := ngx.Conf
	s := advise.WebServer{Kind: "nginx", Conf: ngx.Nginx.Conf, WorkerConnections: 512, KeepaliveTimeout: "75s"}
	if pid, err := ngx.Nginx.Master(); err == nil {
		if fs, err := proc.Default(); err == nil {
			s.Workers = int64(livehost.NginxWorkers(fs, pid))
		}
	}
	if s.Workers == 0 {
		if v, ok := livehost.First(c.MainDirectives("worker_processes")); ok && v != "auto" {
			s.Workers, _ = strconv.ParseInt(v, 10, 64)
		} else {
			s.Workers = int64(runtime.NumCPU())
		}
	}
	if v, ok := livehost.First(c.EventsDirectives("worker_connections")); ok {
		s.WorkerConnections, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := livehost.First(c.HTTPDirectives("keepalive_timeout")); ok {
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
	if root == "/" && !livehost.ApacheRuns() {
		return nil, nil
	}
	ps, err := livehost.ReadApache(root)
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // file -> virtual host names
	if root == "/" {
		if out, err := exec.Command("apache2ctl", "-S").Output(); err == nil {
			for _, v := range livehost.ParseApacheS(out) {
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
