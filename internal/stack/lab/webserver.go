package lab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/servers/caddy"
	"github.com/phptune/phptune/internal/servers/fpmfront"
	"github.com/phptune/phptune/internal/servers/h2o"
	"github.com/phptune/phptune/internal/servers/lighttpd"
	"github.com/phptune/phptune/internal/servers/nginx"
	"github.com/phptune/phptune/internal/servers/unit"
)

// A lab's web server is a component chosen by the server knob: nginx,
// Apache's event MPM, lighttpd, Caddy or h2o in front of php-fpm (nginx by
// default), or Apache's prefork MPM running PHP in its own children
// (mod_php, no php-fpm). Each is a webServer: the lab renders, checks,
// starts and stops it the same way (as the lab's account, in its own
// process group, its stdout captured in out/, its own logs in log/),
// whichever it is.

// webServer is one web server package (nginx, apache, lighttpd, caddy,
// h2o) as a lab runs it.
type webServer interface {
	// component names its processes in the state and its logs ("nginx",
	// "apache", "lighttpd", "caddy", "h2o").
	component() string
	// conf is its configuration file's name in the lab directory.
	conf() string
	// render returns that file's text for the lab (paths, port, php-fpm's
	// address as fpmPass, the front controller) and l.Config's knobs.
	render(l *Lab, fpmPass, front string) string
	// args and testArgs are its command lines to serve and to check the
	// file; env is the environment both run with.
	args(l *Lab) []string
	testArgs(l *Lab) []string
	env(l *Lab) []string
	// statusPath is the server's own status page on the lab's port; ""
	// when it has none.
	statusPath() string
}

// siteChecker is a webServer whose configuration file cannot carry every
// path nginx's can: checkSite refuses, before anything starts, a lab
// directory (the home decides) or a user's docroot ("" for a built-in
// app) that its file could not carry.
type siteChecker interface {
	checkSite(dir, docroot string) error
}

// docrootError says how to get around a docroot that server's file cannot
// carry (confpath's error inside).
func docrootError(err error, server string) error {
	var pe *confpath.Error
	if errors.As(err, &pe) && pe.Char() != "" {
		return fmt.Errorf("--docroot: %w; rename the directory, or point --docroot at a symlink to it whose path has no %s (server=%s)", err, pe.Char(), server)
	}
	return fmt.Errorf("--docroot: %w (server=%s)", err, server)
}

// webFor returns the web server of cfg's server knob and its binary, or
// says how to install what is missing.
func webFor(cfg knob.Config) (webServer, string, error) {
	switch s := cfg.Server(); s {
	case knob.NginxFPM:
		bin, err := nginx.Find()
		return nginxServer{}, bin, err
	case knob.ApacheEventFPM, knob.ApachePreforkModPHP:
		bin, err := apache.Find()
		if err != nil {
			return nil, "", err
		}
		w := apacheServer{}
		if s == knob.ApachePreforkModPHP {
			if w.modPHP, err = apache.FindModPHP(); err != nil {
				return nil, "", err
			}
		}
		return w, bin, nil
	case knob.UnitPHP:
		b, err := unit.Find(filepath.Join(Home(), "builds"))
		if err != nil {
			return nil, "", err
		}
		return unitServer{bin: b}, b.Unitd, nil
	case knob.LighttpdFPM:
		bin, err := lighttpd.Find()
		if err != nil {
			return nil, "", err
		}
		// The lab's servers inherit this process's hard limit.
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
			if err := lighttpd.CheckLimit(cfg, lim.Max); err != nil {
				return nil, "", err
			}
		}
		return lighttpdServer{}, bin, nil
	case knob.CaddyFPM:
		bin, err := caddy.Find()
		return caddyServer{}, bin, err
	case knob.H2OFPM:
		bin, err := h2o.Find()
		return h2oServer{}, bin, err
	default:
		return nil, "", fmt.Errorf("server=%s: this phptune cannot run it; choose one of %s", s, strings.Join(knob.Servers, ", "))
	}
}

// stopSignals are the signals that stop a component at once where
// SIGTERM does not: h2o 2.2 takes SIGTERM for a graceful shutdown that
// waits until every client's kept-alive connection has timed out (10 s by
// default), and leaves SIGINT to its default action, which ends it (and,
// sent to its group, its backtrace helper) at once, as SIGTERM ends nginx.
var stopSignals = map[string]syscall.Signal{"h2o": syscall.SIGINT}

// webComponents are the components a web server can be, for stopping
// whichever runs.
var webComponents = []string{"nginx", "apache", "lighttpd", "caddy", "h2o", "unit"}

type nginxServer struct{}

func (nginxServer) component() string  { return "nginx" }
func (nginxServer) conf() string       { return "nginx.conf" }
func (nginxServer) statusPath() string { return nginxStatusPath }
func (nginxServer) env(*Lab) []string  { return nil }

func (nginxServer) render(l *Lab, fpmPass, front string) string {
	y := layout{l.Dir}
	s := nginx.Site{
		Prefix: l.Dir + "/", PidFile: y.p("run", "nginx.pid"), ErrorLog: y.p("log", "nginx-error.log"),
		AccessLog: y.p("log", "nginx-access.log"), TempDir: y.p("tmp"), Listen: strings.TrimPrefix(l.URL, "http://"), DocRoot: l.DocRoot,
		FastCGI: fpmPass, FastCGIPools: poolPasses(l), FrontController: front, FPMStatusPath: fpmStatusPath, FPMPingPath: fpmPingPath,
		StubStatusPath: nginxStatusPath,
	}
	if l.Sealed() {
		s.Listen, s.UnixListen = siteHTTPAddr.String(), l.HTTPSocket
		s.Names = l.SiteNames
		if len(l.SiteNames) > 0 {
			s.SiteHost = &nginx.SiteHost{Name: l.SiteNames[0], Port: l.SitePort, HTTPS: l.SiteHTTPS}
		}
	}
	return nginx.Render(l.Config, s)
}

// poolPasses is every pool's address as nginx writes it, when the lab
// runs several (nil otherwise).
func poolPasses(l *Lab) []string {
	var out []string
	for _, p := range l.FPMPools {
		out = append(out, webPass(p))
	}
	return out
}

func (nginxServer) args(l *Lab) []string {
	y := layout{l.Dir}
	return nginx.Args(l.Dir+"/", y.p("nginx.conf"), y.p("log", "nginx-error.log"))
}

func (nginxServer) testArgs(l *Lab) []string {
	y := layout{l.Dir}
	return nginx.TestArgs(l.Dir+"/", y.p("nginx.conf"), y.p("log", "nginx-error.log"))
}

// apacheServer is Debian's apache2; modPHP is libphp8.2.so's path when
// PHP runs inside it (server apache-prefork-modphp).
type apacheServer struct{ modPHP string }

// apacheStatusPath is mod_status's page.
const apacheStatusPath = "/server-status"

func (apacheServer) component() string  { return "apache" }
func (apacheServer) conf() string       { return "httpd.conf" }
func (apacheServer) statusPath() string { return apacheStatusPath }

func (a apacheServer) env(l *Lab) []string {
	return apache.Env(a.modPHP != "", layout{l.Dir}.p("php"))
}

func (a apacheServer) render(l *Lab, fpmPass, front string) string {
	y := layout{l.Dir}
	s := apache.Site{
		ServerRoot: l.Dir, PidFile: y.p("run", "apache2.pid"), RuntimeDir: y.p("run"),
		ErrorLog: y.p("log", "apache-error.log"), AccessLog: y.p("log", "apache-access.log"),
		Listen: strings.TrimPrefix(l.URL, "http://"), DocRoot: l.DocRoot,
		FrontController: front, StatusPath: apacheStatusPath,
	}
	if l.Sealed() {
		// Inside the seal, on the site's own address and names, routing
		// as production's vhost does.
		s.Listen, s.FrontController = siteHTTPAddr.String(), ""
		s.SiteHost = &apache.SiteHost{Names: l.SiteNames, Port: l.SitePort, HTTPS: l.SiteHTTPS}
		s.Carried = l.SiteApache
		if s.Carried == nil {
			s.Carried = &apache.Carried{}
		}
	}
	if a.modPHP != "" {
		// The app's environment, as php-fpm's pool gives it (getenv()
		// reads SetEnv's variables under mod_php).
		s.ModPHP, s.Env = a.modPHP, l.PoolEnv()
	} else {
		s.FastCGI, s.FPMStatusPath, s.FPMPingPath = fpmPass, fpmStatusPath, fpmPingPath
	}
	return apache.Render(l.Config, s)
}

func (apacheServer) args(l *Lab) []string {
	return apache.Args(l.Dir, layout{l.Dir}.p("httpd.conf"))
}

func (apacheServer) testArgs(l *Lab) []string {
	return apache.TestArgs(l.Dir, layout{l.Dir}.p("httpd.conf"))
}

// configuredAtStart is a web server that starts empty and takes its
// configuration once running (Unit, through its control socket).
type configuredAtStart interface {
	configure(ctx context.Context, l *Lab, pid int) error
}

// checkSite: Apache's file takes paths where nginx's would, but refuses
// "${" (and, in php-fpm's socket, '|').
func (a apacheServer) checkSite(dir, docroot string) error {
	if err := (apache.Site{ServerRoot: dir, PidFile: dir, RuntimeDir: dir, ErrorLog: dir, AccessLog: dir,
		Listen: "127.0.0.1:1", DocRoot: filepath.Join(dir, "www"), FastCGI: "unix:" + layout{dir}.fpmSocket()}).Check(); err != nil {
		return err
	}
	if docroot != "" {
		if err := (apache.Site{ServerRoot: "/", PidFile: "/", RuntimeDir: "/", ErrorLog: "/", AccessLog: "/",
			Listen: "127.0.0.1:1", DocRoot: docroot, FastCGI: "127.0.0.1:1"}).Check(); err != nil {
			return err
		}
	}
	return nil
}

// lighttpdServer is Debian's lighttpd in front of php-fpm.
type lighttpdServer struct{}

// lighttpdStatusPath is mod_status's page, LighttpdStatisticsPath its
// counters (mod_fastcgi's among them), which the observer reads beside it.
const (
	lighttpdStatusPath     = "/server-status"
	LighttpdStatisticsPath = "/server-statistics"
)

func (lighttpdServer) component() string  { return "lighttpd" }
func (lighttpdServer) conf() string       { return "lighttpd.conf" }
func (lighttpdServer) statusPath() string { return lighttpdStatusPath }
func (lighttpdServer) env(*Lab) []string  { return lighttpd.Env() }

func lighttpdSite(dir, docroot, fpmPass, front string) lighttpd.Site {
	y := layout{dir}
	return lighttpd.Site{
		Site:    frontSite(y.p("log", "lighttpd-error.log"), y.p("log", "lighttpd-access.log"), docroot, fpmPass, front),
		PidFile: y.p("run", "lighttpd.pid"), UploadDir: y.p("tmp"),
		StatusPath: lighttpdStatusPath, StatisticsPath: LighttpdStatisticsPath,
	}
}

func (lighttpdServer) render(l *Lab, fpmPass, front string) string {
	s := lighttpdSite(l.Dir, l.DocRoot, fpmPass, front)
	s.Listen = strings.TrimPrefix(l.URL, "http://")
	return lighttpd.Render(l.Config, s)
}

func (lighttpdServer) args(l *Lab) []string { return lighttpd.Args(layout{l.Dir}.p("lighttpd.conf")) }
func (lighttpdServer) testArgs(l *Lab) []string {
	return lighttpd.TestArgs(layout{l.Dir}.p("lighttpd.conf"))
}

func (lighttpdServer) checkSite(dir, docroot string) error {
	return checkFrontSite(lighttpdSite, knob.LighttpdFPM, dir, docroot)
}

// frontSite is what a lab's Caddy, h2o or lighttpd site shares with the
// others: its logs, php-fpm's address and paths, a placeholder address
// (render puts the lab's in its place).
func frontSite(errorLog, accessLog, docroot, fpmPass, front string) fpmfront.Site {
	return fpmfront.Site{
		ErrorLog: errorLog, AccessLog: accessLog, Listen: "127.0.0.1:1", DocRoot: docroot,
		FastCGI: fpmPass, FrontController: front, FPMStatusPath: fpmStatusPath, FPMPingPath: fpmPingPath,
	}
}

// checkFrontSite is checkSite for Caddy, h2o or lighttpd, whose site a lab
// builds with site: it refuses a lab directory, then a user's docroot, that
// server's file could not carry.
func checkFrontSite[S interface{ Check() error }](site func(dir, docroot, fpmPass, front string) S, server, dir, docroot string) error {
	if err := site(dir, filepath.Join(dir, "www"), "unix:"+layout{dir}.fpmSocket(), "").Check(); err != nil {
		return err
	}
	if docroot != "" {
		if err := site("/", docroot, "127.0.0.1:1", "").Check(); err != nil {
			return docrootError(err, server)
		}
	}
	return nil
}

// caddyServer is Debian's caddy in front of php-fpm. It has no status
// page: its metrics are on the admin endpoint, which a lab turns off.
type caddyServer struct{}

func (caddyServer) component() string  { return "caddy" }
func (caddyServer) conf() string       { return "Caddyfile" }
func (caddyServer) statusPath() string { return "" }
func (caddyServer) env(l *Lab) []string {
	return caddy.Env(l.Config)
}

func caddySite(dir, docroot, fpmPass, front string) caddy.Site {
	y := layout{dir}
	return caddy.Site{Site: frontSite(y.p("log", "caddy.log"), y.p("log", "caddy-access.log"), docroot, fpmPass, front)}
}

func (caddyServer) render(l *Lab, fpmPass, front string) string {
	s := caddySite(l.Dir, l.DocRoot, fpmPass, front)
	s.Listen = strings.TrimPrefix(l.URL, "http://")
	return caddy.Render(l.Config, s)
}

func (caddyServer) args(l *Lab) []string     { return caddy.Args(layout{l.Dir}.p("Caddyfile")) }
func (caddyServer) testArgs(l *Lab) []string { return caddy.TestArgs(layout{l.Dir}.p("Caddyfile")) }

func (caddyServer) checkSite(dir, docroot string) error {
	return checkFrontSite(caddySite, knob.CaddyFPM, dir, docroot)
}

// h2oServer is Debian's h2o in front of php-fpm.
type h2oServer struct{}

// h2oStatusPath is h2o's status handler (its JSON at /server-status/json).
const h2oStatusPath = "/server-status"

func (h2oServer) component() string  { return "h2o" }
func (h2oServer) conf() string       { return "h2o.conf" }
func (h2oServer) statusPath() string { return h2oStatusPath }
func (h2oServer) env(*Lab) []string  { return h2o.Env() }

func h2oSite(dir, docroot, fpmPass, front string) h2o.Site {
	y := layout{dir}
	return h2o.Site{
		Site:    frontSite(y.p("log", "h2o-error.log"), y.p("log", "h2o-access.log"), docroot, fpmPass, front),
		PidFile: y.p("run", "h2o.pid"), TempDir: y.p("tmp"), StatusPath: h2oStatusPath,
	}
}

func (h2oServer) render(l *Lab, fpmPass, front string) string {
	s := h2oSite(l.Dir, l.DocRoot, fpmPass, front)
	s.Listen = strings.TrimPrefix(l.URL, "http://")
	return h2o.Render(l.Config, s)
}

func (h2oServer) args(l *Lab) []string     { return h2o.Args(layout{l.Dir}.p("h2o.conf")) }
func (h2oServer) testArgs(l *Lab) []string { return h2o.TestArgs(layout{l.Dir}.p("h2o.conf")) }

func (h2oServer) checkSite(dir, docroot string) error {
	return checkFrontSite(h2oSite, knob.H2OFPM, dir, docroot)
}

// startWeb starts the lab's web server and waits until its port accepts
// connections from the lab's account.
func (l *Lab) startWeb(ctx context.Context, acct *account, w webServer, bin string) error {
	cmd, err := l.start(acct, w.component(), bin, w.args(l), w.env(l))
	if err != nil {
		return err
	}
	if c, ok := w.(configuredAtStart); ok {
		if err := c.configure(ctx, l, cmd.Process.Pid); err != nil {
			return err
		}
	}
	if l.Sealed() && w.component() == "nginx" {
		return l.waitDial(ctx, w.component(), "unix", l.HTTPSocket, l.PeerUID(), cmd.Process.Pid)
	}
	if l.Sealed() {
		return l.waitSite(ctx, w.component(), cmd.Process.Pid)
	}
	return l.waitDial(ctx, w.component(), "tcp", strings.TrimPrefix(l.URL, "http://"), l.PeerUID(), cmd.Process.Pid)
}

// setStatusURLs records the web server's status page: nginx's stub_status
// (which the observer reads), Apache's or lighttpd's mod_status, h2o's
// status handler; none for Caddy; Unit's control socket.
func (l *Lab) setStatusURLs(w webServer) {
	l.Server = l.Config.Server()
	l.NginxStatusURL, l.ServerStatusURL, l.UnitControl = "", "", ""
	if w.component() == "unit" {
		// Unit's status is on its control socket, not on the lab's port.
		l.UnitControl = layout{l.Dir}.unitControl()
		return
	}
	if w.statusPath() == "" || l.Sealed() {
		// A sealed lab's status pages are reached through its unix
		// socket, not at a URL of the host.
		return
	}
	u := l.URL + w.statusPath()
	l.ServerStatusURL = u
	if w.component() == "nginx" {
		l.NginxStatusURL = u
	}
}
