package site

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/watch/proc"
)

// Host says where the live host's servers are: its root ("/" on the host
// itself, or a directory holding a copy, as advise's and apply's --root),
// and the nginx master to read (NginxConfig: its -c, default
// ROOT/etc/nginx/nginx.conf; NginxPrefix its -p) and the php-fpm
// masters' -p (FPMPrefix).
type Host struct {
	Root        string
	NginxConfig string
	NginxPrefix string
	FPMPrefix   string
	// ScanDir is the masters' PHP_INI_SCAN_DIR when they run with one
	// ("" for the default: see readPHPConfig).
	ScanDir string
	// FS is /proc (nil: the machine's).
	FS *proc.FS
}

// IsDir says whether a query names a directory (an absolute path) rather
// than a server name.
func IsDir(query string) bool { return strings.HasPrefix(query, "/") }

// Discover finds the site query names (a server name, or an absolute
// document root) on host h and reads what a lab of it would copy, among
// the vhosts of nginx and Apache. It runs nginx -T (which only reads and
// tests the configuration), reads Apache's configuration as data, and
// otherwise only reads files and /proc. A query that matches no vhost,
// or several different sites, is a *NoMatchError or *AmbiguousError
// naming the candidates.
func Discover(ctx context.Context, h Host, query string) (*Site, error) {
	if h.Root == "" {
		h.Root = "/"
	}
	if h.FS == nil {
		fs, err := proc.Default()
		if err != nil {
			return nil, err
		}
		h.FS = fs
	}
	byDir := IsDir(query)
	if byDir {
		query = filepath.Clean(query)
	}
	vs, notes, err := h.vhosts(ctx)
	if err != nil {
		return nil, err
	}
	var matches []int
	if byDir {
		matches = MatchDir(vs, query)
	} else {
		matches = matchNames(vs, query)
	}
	chosen, same, err := Choose(vs, matches, query, byDir)
	if err != nil {
		return nil, err
	}
	s := &Site{Query: query, Root: h.Root, Vhost: vs[chosen]}
	for _, i := range same {
		s.Also = append(s.Also, vs[i])
	}
	v := s.Vhost
	s.Host, s.HTTPS, s.Port = v.Host(), v.TLS(), v.Port()
	if byDir && s.Host == "" {
		s.Notes = append(s.Notes, "the vhost has no plain server name: requests will carry the Host of --host")
	}
	s.Notes = append(s.Notes, notes...)
	if n := bothServers(vs, append([]int{chosen}, same...), query); n != "" && !byDir {
		why := ""
		if v.runsPHP() {
			why = ", which runs PHP,"
		}
		s.Notes = append(s.Notes, n+"; the "+serverName(v.Server)+" vhost"+why+" is shown")
	}
	if v.Return != "" && len(v.FastCGI) == 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("this server block only answers \"return %s\": give the name of the server that serves the pages", v.Return))
	}
	switch {
	case v.RootVariable:
		s.Notes = append(s.Notes, fmt.Sprintf("its root (%s) holds a variable: give the document root as DIR", v.RootAt))
	case v.Root == "":
		s.Notes = append(s.Notes, "it sets no root (nginx's compiled-in html directory)")
	default:
		s.DocRoot = readDocRoot(v.Root)
	}
	s.findPool(h)
	if s.DocRoot.Error == "" && s.DocRoot.Path != "" {
		s.readApp()
	}
	s.collectCaches(s.dropIn)
	s.sizeCaches(h)
	s.findDB(h)
	s.findRemote()
	return s, nil
}

// findDB sets s.DB: where the app's database connection goes and which
// server answers there, or why a lab does not copy it.
func (s *Site) findDB(h Host) {
	s.DB = nil
	switch {
	case s.App != nil && s.App.DB.Engine() != "mysql":
		s.DB = &DBTarget{Error: otherEngine(s.App)}
	case s.App != nil && s.App.DB.Name != "":
		s.DB = findDB(h, s.App.DB, s.defaultSocket())
	}
}

// GivenFrom names the command line's database settings in App.File.
const GivenFrom = "the command line (--db, --db-user, --db-host, --db-password-file)"

// GiveDB puts what the command line names of the site's database (its
// name, user, host and password: --db, --db-user, --db-host,
// --db-password-file) in place of what the app's configuration says, for
// an app whose configuration phptune does not read or whose values are
// set by code. Each value given replaces the configuration's; the others
// stay. The host is written as WordPress's DB_HOST is ("localhost",
// "127.0.0.1:3307", "localhost:/run/mysqld/mysqld.sock", or a socket
// path). The server it reaches is then found as Discover finds it.
func (s *Site) GiveDB(h Host, g Database) error {
	if h.Root == "" {
		h.Root = "/"
	}
	if h.FS == nil {
		fs, err := proc.Default()
		if err != nil {
			return err
		}
		h.FS = fs
	}
	if s.App == nil {
		s.App = &App{Kind: "given", File: GivenFrom, DB: Database{Driver: "mysql", Host: "localhost"}}
		s.AppError = ""
	}
	a := &s.App.DB
	var named []string
	if g.Name != "" {
		a.Name = g.Name
		named = append(named, "the database name")
	}
	if g.User != "" {
		a.User = g.User
		named = append(named, "its user")
	}
	if g.Host != "" {
		a.Host, a.Port, a.Socket = g.Host, 0, ""
		splitHost(a)
		named = append(named, "its host")
	}
	if g.Password.Set() {
		a.Password = g.Password
		named = append(named, "its password")
	}
	if len(named) > 0 && s.App.Kind != "given" {
		s.Notes = append(s.Notes, fmt.Sprintf("%s given on the command line, in place of %s's", strings.Join(named, ", "), s.App.File))
	}
	s.findDB(h)
	s.findRemote()
	return nil
}

// vhosts reads the vhosts of the host's web servers: the running nginx
// master's (nginx -T), then Apache's, read from its configuration as data
// (ReadApacheConfig: apache2 is never run) when ROOT/etc/apache2/apache2.conf
// exists and, on the host itself, an Apache master runs. notes say what
// the site's discovery should (files nginx -T shows that no include
// names; an Apache configuration that could not be read beside nginx's).
// Neither server found is nginx's error.
func (h Host) vhosts(ctx context.Context) (vs []Vhost, notes []string, err error) {
	ng, prefix, nerr := h.nginx()
	if nerr == nil {
		conf, err := ng.Dump(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("reading nginx's configuration: %w (run phptune site as root: nginx -T opens the files its configuration names)", err)
		}
		vs = NginxVhosts(conf, prefix)
		if len(conf.Unreached) > 0 {
			notes = append(notes, fmt.Sprintf("nginx -T shows files no include names (%s): a configuration file holds a forged \"# configuration file\" line", strings.Join(conf.Unreached, ", ")))
		}
	}
	apache := false
	if h.Root != "/" {
		apache = true
	} else if ms, err := livehost.ApacheMasters(h.FS); err == nil && len(ms) > 0 {
		apache = true
	}
	if apache {
		c, err := livehost.ReadApacheConfig(h.Root)
		if err != nil {
			if nerr == nil {
				// nginx's vhosts still stand: say what is missing.
				return vs, append(notes, fmt.Sprintf("Apache's vhosts are not read: %v", err)), nil
			}
			return nil, nil, fmt.Errorf("reading Apache's configuration: %w", err)
		}
		if c != nil {
			vs = append(vs, ApacheVhosts(c, h.Root)...)
			nerr = nil
		}
	}
	if nerr != nil {
		return nil, nil, nerr
	}
	return vs, notes, nil
}

func serverName(s string) string {
	if s == "apache" {
		return "Apache"
	}
	return s
}

// nginx finds the nginx master of the host (the one of NginxConfig, else
// of ROOT/etc/nginx/nginx.conf; owned by root, found by its title) and
// how to run its nginx -T: the binary the master runs.
func (h Host) nginx() (*livehost.Nginx, string, error) {
	masters, err := livehost.NginxMasters(h.FS)
	if err != nil {
		return nil, "", err
	}
	want := h.NginxConfig
	if want == "" {
		want = filepath.Join(h.Root, livehost.NginxDefaultConf)
	}
	var m *livehost.NginxMaster
	var confs []string
	for i := range masters {
		confs = append(confs, masters[i].Conf)
		if masters[i].Conf != want {
			continue
		}
		if m != nil {
			return nil, "", fmt.Errorf("two nginx masters run with %s (pids %d and %d): stop the one that should not run, then run phptune again", want, m.PID, masters[i].PID)
		}
		m = &masters[i]
	}
	if m == nil {
		running := "none runs"
		if len(confs) > 0 {
			running = "running: " + strings.Join(confs, ", ")
		}
		return nil, "", fmt.Errorf("no nginx master (owned by root) runs with %s (%s): phptune site reads the running nginx, or Apache's configuration when an Apache master runs; name its nginx.conf with --nginx-config", want, running)
	}
	bin, err := os.Readlink(filepath.Join(h.FS.Root(), strconv.Itoa(m.PID), "exe"))
	if err != nil || !filepath.IsAbs(bin) || strings.HasSuffix(bin, " (deleted)") {
		if bin, err = exec.LookPath("nginx"); err != nil {
			bin = "/usr/sbin/nginx"
		}
	}
	ng := &livehost.Nginx{Binary: bin, Conf: m.Conf, Prefix: h.NginxPrefix}
	if ng.Prefix == "" {
		ng.Prefix = m.Prefix
	}
	if h.Root != "/" {
		// A copy's dump must not open the host's own error log.
		ng.ErrorLog = filepath.Join(h.Root, "var", "log", "nginx", "error.log")
	}
	return ng, ng.Prefix, nil
}
