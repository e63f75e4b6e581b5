package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/apache"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/nginx"
	"github.com/phptune/phptune/internal/unit"
)

// A lab's web server is a component chosen by the server knob: nginx in
// front of php-fpm (the default), Apache's event MPM in front of php-fpm,
// or Apache's prefork MPM running PHP in its own children (mod_php, no
// php-fpm). Each is a webServer: the lab renders, checks, starts and stops
// it the same way (as the lab's account, in its own process group, its
// stdout captured in out/, its own logs in log/), whichever it is.

// webServer is one web server package (nginx, apache) as a lab runs it.
type webServer interface {
	// component names its processes in the state and its logs ("nginx",
	// "apache").
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
	// statusPath is the server's own status page on the lab's port.
	statusPath() string
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
	default:
		return nil, "", fmt.Errorf("server=%s: this phptune cannot run it; choose one of %s", s, strings.Join(knob.Servers, ", "))
	}
}

// webComponents are the components a web server can be, for stopping
// whichever runs.
var webComponents = []string{"nginx", "apache", "unit"}

type nginxServer struct{}

func (nginxServer) component() string  { return "nginx" }
func (nginxServer) conf() string       { return "nginx.conf" }
func (nginxServer) statusPath() string { return nginxStatusPath }
func (nginxServer) env(*Lab) []string  { return nil }

func (nginxServer) render(l *Lab, fpmPass, front string) string {
	y := layout{l.Dir}
	return nginx.Render(l.Config, nginx.Site{
		Prefix: l.Dir + "/", PidFile: y.p("run", "nginx.pid"), ErrorLog: y.p("log", "nginx-error.log"),
		AccessLog: y.p("log", "nginx-access.log"), TempDir: y.p("tmp"), Listen: strings.TrimPrefix(l.URL, "http://"), DocRoot: l.DocRoot,
		FastCGI: fpmPass, FrontController: front, FPMStatusPath: fpmStatusPath, FPMPingPath: fpmPingPath,
		StubStatusPath: nginxStatusPath,
	})
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
	return l.waitDial(ctx, w.component(), "tcp", strings.TrimPrefix(l.URL, "http://"), l.PeerUID(), cmd.Process.Pid)
}

// setStatusURLs records the web server's status page: nginx's stub_status
// (which the observer reads) or Apache's mod_status.
func (l *Lab) setStatusURLs(w webServer) {
	l.Server = l.Config.Server()
	u := l.URL + w.statusPath()
	l.NginxStatusURL, l.ServerStatusURL, l.UnitControl = "", u, ""
	switch w.component() {
	case "nginx":
		l.NginxStatusURL = u
	case "unit":
		l.ServerStatusURL, l.UnitControl = "", layout{l.Dir}.unitControl()
	}
}
