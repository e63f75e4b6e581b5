package labstack

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/watch/observe"
)

// Observer returns the observer configuration for a running lab: its web
// server's process tree (nginx, lighttpd, Caddy, h2o; Apache: its parent
// and children, which with mod_php are the PHP workers; Unit: its router
// and application processes), php-fpm's and MariaDB's, the fpm status page
// read over FastCGI, the web server's status page (nginx's stub_status,
// Apache's or lighttpd's mod_status, h2o's status handler, Unit's /status
// on its control socket; Caddy has none), MariaDB's status as the lab's
// database user (a site lab's: its server's root), and the accept queues
// of the fpm socket and the web server's port. A sealed lab's web server
// is observed on its unix socket: both queues are read in the seal's
// network namespace, and nginx's stub_status is asked on that socket.
// The caller adds its own generator root
// (observe.Root{ComponentGenerator, os.Getpid()}) when it loads the lab.
// close releases the database handle and the namespace.
func Observer(l *lab.Lab) (cfg observe.Config, close func(), err error) {
	close = func() {}
	defer func() {
		if err != nil { // nothing is left open for a caller that returns
			close()
			close = func() {}
		}
	}()
	var web string
	cfg.Roots, web = roots(l)
	if l.FPMListen != "" {
		cfg.FPM, cfg.Sockets = fpmPools(l)
	}
	var asked int64
	switch web {
	case observe.ComponentNginx:
		asked = backlogOf(l.Config, "nginx.listen_backlog")
	case observe.ComponentUnit:
		asked = backlogOf(l.Config, "unit.listen_backlog")
	}
	if l.Sealed() {
		// The load reaches the web server on its unix socket (nginx) or
		// its address inside the seal (Apache); the sockets and php-fpm's
		// are in the seal's network namespace.
		addr := "unix:" + l.HTTPSocket
		if !l.SiteBySocket() {
			addr = l.SiteAddr().String()
		}
		cfg.Sockets = append(cfg.Sockets, observe.Socket{Owner: web, Addr: addr, Backlog: asked})
		ns, err := l.OpenNetNS()
		if err != nil {
			return cfg, close, err
		}
		cfg.NetNS, close = ns, func() { ns.Close() }
		if sock, host, path, ok := l.SealedNginxStatus(); ok {
			cfg.NginxStatusUnix = &observe.UnixPage{Socket: sock, Host: host, Path: path, UID: l.PeerUID()}
		}
	} else if u, err := url.Parse(l.URL); err == nil && u.Host != "" {
		cfg.Sockets = append(cfg.Sockets, observe.Socket{Owner: web, Addr: hostPort(u.Host), Backlog: asked})
	}
	cfg.NginxStatusURL = l.NginxStatusURL
	if l.ServerStatusURL != "" {
		switch web {
		case observe.ComponentApache:
			cfg.ApacheStatusURL = l.ServerStatusURL
		case observe.ComponentLighttpd:
			cfg.LighttpdStatusURL, cfg.LighttpdStatisticsURL = l.ServerStatusURL, l.URL+lab.LighttpdStatisticsPath
		case observe.ComponentH2O:
			cfg.H2OStatusURL = l.ServerStatusURL
		}
	}
	if l.UnitControl != "" {
		cfg.UnitControl, cfg.UnitUID, cfg.UnitMaxProcesses = l.UnitControl, l.PeerUID(), l.Config.Int("unit.processes")
	}
	if l.MariaDBSocket != "" {
		db, err := openLabDB(l)
		if err != nil {
			return cfg, close, err
		}
		cfg.DB = db
		closeNS := close
		close = func() { db.Close(); closeNS() }
	}
	return cfg, close, nil
}

// roots returns the lab's live processes as the observer's roots, and
// the component of its web server (nginx unless another runs). With
// mod_php, Apache's children are PHP's workers.
func roots(l *lab.Lab) (rs []observe.Root, web string) {
	web = observe.ComponentNginx
	for _, p := range l.LiveProcesses() {
		c := p.Component
		switch c {
		case observe.ComponentApache:
			web = c
			if l.Config.Server() == knob.ApachePreforkModPHP {
				// PHP runs in Apache's children: they are its workers.
				c = observe.ComponentApacheModPHP
			}
		case observe.ComponentLighttpd, observe.ComponentCaddy, observe.ComponentH2O, observe.ComponentUnit:
			web = c
		}
		rs = append(rs, observe.Root{Component: c, PID: p.PID})
	}
	return rs, web
}

// fpmPools returns each php-fpm pool's status page and listening socket.
// Every pool (fpm.pools) is read on its own socket: each answers for
// itself, with its share of the workers.
func fpmPools(l *lab.Lab) ([]observe.FPMSource, []observe.Socket) {
	path := l.FPMStatusPath
	if path == "" {
		path = "/fpm-status"
	}
	var pools []observe.FPMSource
	var sockets []observe.Socket
	networks, addrs := l.FPMPoolAddrs()
	shares := l.Config.PoolShares()
	for i, listen := range l.FPMPoolListens() {
		maxc := int(l.Config.Int("pm.max_children"))
		if i < len(shares) && len(shares) == len(addrs) {
			maxc = int(shares[i].Int("pm.max_children"))
		}
		pools = append(pools, observe.FPMSource{Pool: phpfpm.PoolName("", i), Fetch: observe.FPMFetcher(networks[i], addrs[i], path, l.PeerUID()), MaxChildren: maxc})
		sockets = append(sockets, observe.Socket{Owner: observe.ComponentFPM, Addr: listen, Backlog: backlogOf(l.Config, "listen.backlog")})
	}
	return pools, sockets
}

// openLabDB connects to the lab's MariaDB on its socket, as the app's
// account, or as root in a site lab, on one connection.
func openLabDB(l *lab.Lab) (*sql.DB, error) {
	sec, err := l.ReadSecrets()
	if err != nil {
		return nil, fmt.Errorf("reading lab %s's database credentials: %w (they are in %s/secrets.json, readable by root or the lab's owner)", l.Name, err, l.Dir)
	}
	user, password := sec.DBUser, sec.DBPassword
	if l.Sealed() {
		// A site lab's app account is the site's own, made by
		// its database copy (if any) for the hosts its
		// configuration names; the lab server's root is always
		// there, on the socket (as root's dumps use it).
		user, password = "root", sec.MariaDBRootPassword
	}
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.DBPeerUID(), user, password, "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// backlogOf is the backlog knob name asks for in cfg, 0 when cfg's
// server does not use it.
func backlogOf(cfg knob.Config, name string) int64 {
	for _, b := range cfg.Backlogs() {
		if b.Knob == name {
			return b.Value
		}
	}
	return 0
}

// hostPort turns a URL host into IP:PORT for the socket tables.
func hostPort(h string) string {
	if strings.HasPrefix(h, "localhost:") {
		return "127.0.0.1:" + strings.TrimPrefix(h, "localhost:")
	}
	return h
}

// Observe observes the running lab l while run loads it, and returns run's
// result with the observation attached as b.Observation.
//
// It is what one bench or one tuning trial needs:
//
//	b, err := labstack.Observe(ctx, l, time.Second, func(ctx context.Context) (*results.Bench, error) {
//		return load.Run(ctx, opts) // any generator run in this process
//	})
//	d := b.Observation.Derived // WorkerPSSP95B, OtherPSSB, MaxStealPct, CPUSecondsPerRequest ...
//
// The observer (Observer's configuration) samples every interval (1 s when
// zero) the lab's nginx, php-fpm (status page over FastCGI, workers'
// PSS) and MariaDB, the accept queues of their sockets, the machine, this
// process as the "generator" group (run must load from this process) and
// every other process as "other". Sampling starts before run is called and
// stops when it returns.
//
// Derived is computed over the measured part only: from the moment run was
// called plus b.WarmupS (the warm-up is left out) until run returned, with
// b.Requests as the request count (CPU per request uses the mean CPU rate
// in that window times b.DurationS). Groups[].PSSB of every sample is the
// group's summed PSS.
//
// When run returns a result together with an error (an interrupted run)
// the result is returned with its observation and the error. When run
// returns no result, Observe returns run's error. A lab whose observer
// cannot be configured (its database credentials unreadable) is an error
// before run is called.
func Observe(ctx context.Context, l *lab.Lab, interval time.Duration, run func(ctx context.Context) (*results.Bench, error)) (*results.Bench, error) {
	cfg, closeDB, err := Observer(l)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	return observe.MeasureHere(ctx, cfg, interval, run)
}
