package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

// A site lab (Options.Site) runs the owner's real code, with its real
// configuration, inside a seal (package seal): a private network namespace
// with loopback only, a private pid namespace, and a private mount
// namespace whose file system is an allowlist (the host's programs and the
// configuration they read, read-only; the lab's own directory, read-only
// but for the directories its servers write; fresh /run and /tmp; the
// site's app root — the directory holding its docroot and its
// configuration file — as an overlay whose writes land in the lab, and
// the live pool's prepend files outside it, read-only) — nothing
// else of the host, no other lab. Every process of the lab — nginx, php-fpm,
// MariaDB, mariadb-install-db, the mariadb client — is started inside it
// (Lab.command). Inside, nginx listens on 127.0.0.1:80 with the site's
// server names and MariaDB on 127.0.0.1:3306 and at /run/mysqld/mysqld.sock,
// so the site's unmodified configuration (DB_HOST localhost or 127.0.0.1)
// reaches the lab's copies; the host reaches the lab only through nginx's
// unix socket in the lab directory (Lab.HTTPSocket).

// SiteApp is the app name a site lab records.
const SiteApp = "site"

// sealDir is the seal's directory inside a lab's.
const sealDir = "seal"

// siteHTTPAddr and siteDBAddr are the lab's listeners inside the seal:
// where the site's own configuration and its calls to itself go.
var (
	siteHTTPAddr = netip.MustParseAddrPort("127.0.0.1:80")
	siteDBAddr   = netip.MustParseAddrPort("127.0.0.1:3306")
)

// siteDBRunDir holds a site lab's MariaDB socket; it is bound inside at
// /run/mysqld, the socket's default place, so mysqld.sock there is the
// lab's.
const siteDBRunDir = "dbrun"

// siteDBLogDir and siteDBTmpDir hold a site lab's MariaDB error log and
// temporary files: like its datadir ("mysql") they are its account's
// (DBUser) alone, mode 0700, which the site's account cannot enter.
const (
	siteDBLogDir = "dblog"
	siteDBTmpDir = "dbtmp"
)

// siteDBSocketName is the socket's name in it: the default socket path's
// (/run/mysqld/mysqld.sock).
const siteDBSocketName = "mysqld.sock"

// SiteDB is what Options.FillDatabase gets to fill a site lab's database
// once its MariaDB answers, before php-fpm and the web server start.
type SiteDB struct {
	// Site is the discovered site (its App names the database, user and
	// password the application's configuration uses).
	Site *site.Site
	// Socket is the lab's MariaDB socket as the host sees it; PeerUID the
	// account its server must run as (mariadb.OpenLab checks it).
	Socket  string
	PeerUID int
	// RootPassword is the lab server's root password (root@localhost).
	RootPassword string
	// Load runs the mariadb client as the lab's account inside the seal,
	// as root of the lab's server, with stdin as its input (a dump: it runs
	// with the lab's rights only) and args after the connection options
	// (a database name, --force).
	Load func(ctx context.Context, stdin io.Reader, args ...string) error
}

// checkSiteOptions refuses, before anything starts, what a site lab
// cannot be: without root and Landlock it cannot be sealed; only nginx
// serves it; its home must be outside what the seal replaces.
func checkSiteOptions(opt Options) error {
	if err := CheckSealing(); err != nil {
		return err
	}
	if opt.DocRoot != "" || (opt.App != "" && opt.App != SiteApp) {
		return errors.New("--site serves the site's own docroot: leave --docroot and --app out")
	}
	s := opt.Site
	if s.DocRoot.Path == "" {
		return fmt.Errorf("--site %s: no document root was found for the vhost; check its root (nginx) and run phptune site %s", s.Query, s.Query)
	}
	return nil
}

// CheckSealing refuses a site lab where it cannot be sealed: without
// root, without Landlock, or with phptune's home under a directory the
// seal replaces inside.
func CheckSealing() error {
	if err := seal.Available(); err != nil {
		return fmt.Errorf("--site: a site lab runs sealed, and %w", err)
	}
	home := filepath.Clean(Home())
	for _, d := range []string{"/tmp", "/run", "/dev/shm"} {
		if home == d || strings.HasPrefix(home, d+"/") {
			return fmt.Errorf("--site: phptune's home %s is under %s, which a sealed lab replaces inside; set PHPTUNE_HOME to a root-owned directory elsewhere (e.g. /var/lib/phptune)", home, d)
		}
	}
	return nil
}

// siteDocRoot is the directory a site lab overlays: the docroot with its
// links resolved (a deployment's "current" link), which the overlay needs.
func siteDocRoot(s *site.Site) string {
	if s.DocRoot.Real != "" {
		return s.DocRoot.Real
	}
	return s.DocRoot.Path
}

// siteAppRoot is the directory a site lab overlays: the app's root, the
// deepest directory that holds both the docroot and the directory of the
// configuration file discovery read (/srv/app for a docroot
// /srv/app/public and /srv/app/.env; the parent of a WordPress docroot
// whose wp-config.php sits one directory up), so that the site's code
// finds what lies above its docroot. It falls back to the docroot, with
// a warning saying what the lab then lacks, when that directory is a
// system one (seal.CheckAppRoot: /srv, /var/www, a home) or holds the
// lab's directory labDir.
func siteAppRoot(s *site.Site, labDir string) (string, []string) {
	docroot := siteDocRoot(s)
	if s.App == nil || !filepath.IsAbs(s.App.File) {
		return docroot, nil
	}
	root := commonDir(docroot, filepath.Dir(filepath.Clean(s.App.File)))
	if root == docroot {
		return docroot, nil
	}
	err := seal.CheckAppRoot(root)
	if err == nil && (labDir == root || strings.HasPrefix(labDir, root+"/")) {
		err = fmt.Errorf("%s holds the lab's own directory %s", root, labDir)
	}
	if err != nil {
		return docroot, []string{fmt.Sprintf("the app's configuration %s is outside its docroot, and the directory holding both cannot be shown to the lab (%v): the lab shows the docroot %s alone, so code and files above it, %s among them, are not there and pages that need them fail in the lab",
			s.App.File, err, docroot, s.App.File)}
	}
	return root, nil
}

// SiteAppRoot is the directory a site lab of s would show (siteAppRoot
// with no lab directory yet), with what it leaves out when it falls back
// to the docroot.
func SiteAppRoot(s *site.Site) (string, []string) { return siteAppRoot(s, "") }

// commonDir is the deepest directory that holds both a and b (absolute,
// clean paths).
func commonDir(a, b string) string {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	if d := strings.Join(as[:n], "/"); d != "" {
		return d
	}
	return "/"
}

// phpFileKeys are the pool settings that name a file every request runs.
var phpFileKeys = []string{
	"php_admin_value[auto_prepend_file]", "php_value[auto_prepend_file]",
	"php_admin_value[auto_append_file]", "php_value[auto_append_file]",
}

// sitePHPFiles are the files the live pool runs with every request
// (auto_prepend_file, auto_append_file: discovery reports the pool's,
// not php.ini's) that lie outside appRoot and the seal's allowlist: a
// site lab binds each read-only at its own path. notes say which such
// files the lab cannot show (a relative path, a link, a file another
// account could swap, a system directory).
func sitePHPFiles(s *site.Site, appRoot string) (files, notes []string) {
	if s.Pool == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, k := range phpFileKeys {
		v, ok := s.Pool.Overrides[k]
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if v == "" || strings.EqualFold(v, "none") {
			continue
		}
		if !filepath.IsAbs(v) {
			notes = append(notes, fmt.Sprintf("the pool's %s = %s is a relative path (PHP looks it up in include_path): the lab shows it only if it lies in %s", k, v, appRoot))
			continue
		}
		p := filepath.Clean(v)
		if seen[p] {
			continue
		}
		seen[p] = true
		switch {
		case inDir(p, appRoot), inDir(p, "/usr"), inDir(p, "/etc/php"):
			continue // in the overlay, or in the seal's allowlist
		case inDir(p, "/etc"), inDir(p, "/proc"), inDir(p, "/sys"), inDir(p, "/dev"), inDir(p, "/run"), inDir(p, "/tmp"), inDir(p, "/var/run"), inDir(p, Home()):
			notes = append(notes, fmt.Sprintf("the pool's %s = %s lies in a system directory the seal does not show: the lab runs without it", k, p))
			continue
		}
		if err := seal.CheckBindSource(p); err != nil {
			notes = append(notes, fmt.Sprintf("the pool's %s = %s is not shown to the lab: %v", k, p, err))
			continue
		}
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
			notes = append(notes, fmt.Sprintf("the pool's %s = %s is not a regular file: the lab does not show it", k, p))
			continue
		}
		files = append(files, p)
	}
	return files, notes
}

// siteDBSockets are the MariaDB socket paths the site's configuration
// names beside the lab's own /run/mysqld/mysqld.sock (its DB_HOST's or
// DB_SOCKET's, php.ini's or the pool's mysqli.default_socket and
// pdo_mysql.default_socket): a site lab makes each lead to its own
// MariaDB inside the seal (makeSeal), so the app's unmodified
// configuration reaches the lab's copy wherever it names it
// (/var/lib/mysql-panel/mysqld.sock as a hosting panel writes it). notes
// say which such paths the lab cannot make (a relative path, one in the
// app's root, the lab's home or the seal's read-only allowlist): the
// app's connections there fail inside, as nothing of the host is there.
func siteDBSockets(s *site.Site, appRoot string) (paths, notes []string) {
	var cands []string
	if s.DB != nil && s.DB.Endpoint.Network == "unix" {
		cands = append(cands, s.DB.Endpoint.Address)
	}
	if s.App != nil && s.App.DB.Socket != "" {
		cands = append(cands, s.App.DB.Socket)
	}
	if s.PHP != nil {
		for _, k := range []string{"mysqli.default_socket", "pdo_mysql.default_socket"} {
			if v, ok := s.PHP.Settings[k]; ok && strings.TrimSpace(v.Value) != "" {
				cands = append(cands, strings.Trim(strings.TrimSpace(v.Value), `"'`))
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c] {
			continue
		}
		seen[c] = true
		if !filepath.IsAbs(c) {
			notes = append(notes, fmt.Sprintf("the database socket %s the site's configuration names is not an absolute path: the lab cannot put its MariaDB there", c))
			continue
		}
		p := filepath.Clean(c)
		inside := sealPath(p)
		switch {
		case inside == "/run/mysqld/"+siteDBSocketName:
			continue // the lab's own socket
		case filepath.Dir(inside) == "/run/mysqld":
		default:
			switch socketProblem(p, appRoot) {
			case "":
			case problemChar:
				notes = append(notes, fmt.Sprintf("the database socket %q the site's configuration names holds a character a seal cannot carry: the app's connections to it fail in the lab", p))
				continue
			case problemAppRoot:
				notes = append(notes, fmt.Sprintf("the database socket %s the site's configuration names lies in the app's root %s, which the lab shows as an overlay: the app's connections to it fail in the lab", p, appRoot))
				continue
			default:
				notes = append(notes, fmt.Sprintf("the database socket %s the site's configuration names lies where the seal keeps the host's files read-only or phptune's own: the lab cannot put its MariaDB there, and the app's connections to it fail in the lab", p))
				continue
			}
		}
		paths = append(paths, p)
	}
	return paths, notes
}

// What socketProblem finds in a socket path.
const (
	problemChar     = "holds a character a seal cannot carry"
	problemAppRoot  = "lies in the app's root, which the lab shows as an overlay"
	problemSystem   = "lies where the seal keeps the host's files read-only or phptune's own"
	problemRelative = "is relative: the seal links absolute paths only"
)

// socketProblem says why a site lab cannot make the socket path p (clean,
// absolute) that the site's configuration names lead to a server of its
// own inside the seal (a link made in the seal's root), "" when it can:
// a character a seal cannot carry, a path in the app's overlay (appRoot),
// or one in the seal's read-only allowlist or phptune's home.
func socketProblem(p, appRoot string) string {
	inside := sealPath(p)
	switch {
	case !filepath.IsAbs(p):
		return problemRelative
	case strings.ContainsAny(p, ",:\\") || strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return problemChar
	case appRoot != "" && inDir(p, appRoot):
		return problemAppRoot
	case inDir(p, Home()), inDir(inside, "/proc"), inDir(inside, "/dev"), inDir(inside, "/etc"), inDir(inside, "/usr"),
		inDir(inside, "/bin"), inDir(inside, "/sbin"), inDir(inside, "/lib"), inDir(inside, "/lib32"), inDir(inside, "/lib64"), inDir(inside, "/libx32"):
		return problemSystem
	}
	return ""
}

// sealPath is p as the seal's root has it: /var/run is a link to /run
// there.
func sealPath(p string) string {
	if inDir(p, "/var/run") {
		return "/run" + strings.TrimPrefix(p, "/var/run")
	}
	return p
}

// siteDBLinks makes the lab's MariaDB reachable at every path of
// SiteDBSockets: a link beside the socket in the lab's socket directory
// (bound at /run/mysqld) for a path in /run/mysqld, a link in the seal's
// root to /run/mysqld/mysqld.sock for any other.
func (l *Lab) siteDBLinks() ([]seal.Link, error) {
	y := layout{l.Dir}
	var links []seal.Link
	for _, p := range l.SiteDBSockets {
		inside := sealPath(p)
		if filepath.Dir(inside) == "/run/mysqld" {
			if err := os.Symlink(siteDBSocketName, y.p(siteDBRunDir, filepath.Base(inside))); err != nil && !errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("linking the lab's MariaDB socket as %s: %v", p, err)
			}
			continue
		}
		links = append(links, seal.Link{Path: inside, Target: "/run/mysqld/" + siteDBSocketName})
	}
	return links, nil
}

// inDir reports whether p is dir or lies inside it.
func inDir(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// siteApp is the app a site lab serves: the site's code through its front
// controller, with a database.
func siteApp(s *site.Site) apps.App {
	return apps.App{Name: SiteApp, Description: "the site " + s.Query + " at " + siteDocRoot(s), FrontController: true, NeedsDB: true}
}

// siteUser is the account a site lab runs as: --user when given, else the
// site pool's.
func siteUser(opt Options) string {
	if opt.User != "" || opt.Site.Pool == nil {
		return opt.User
	}
	return opt.Site.Pool.User
}

// siteNames are the names the site answers to: its vhost's server_name
// entries that are host names, the Host its requests carry first.
func siteNames(s *site.Site) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		n = strings.ToLower(strings.TrimSuffix(n, "."))
		if n == "" || seen[n] || !plainHostName(n) {
			return
		}
		seen[n] = true
		out = append(out, n)
	}
	add(s.Host)
	for _, n := range s.Vhost.Names {
		add(n)
	}
	for _, v := range s.Also {
		for _, n := range v.Names {
			add(n)
		}
	}
	return out
}

// plainHostName reports whether n is a host name (no wildcard, no regular
// expression, no "_").
func plainHostName(n string) bool {
	if len(n) > 253 || strings.HasPrefix(n, ".") || strings.Contains(n, "..") {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// setSite records what a site lab is: its names, the port and scheme PHP
// sees, and where the host reaches it.
func (l *Lab) setSite(s *site.Site) {
	y := layout{l.Dir}
	l.Seal = y.p(sealDir)
	l.SiteNames = siteNames(s)
	l.SiteServed, l.SiteDBIP = siteServed(s), siteDBIP(s)
	if len(l.SiteNames) > 0 {
		l.Host = l.SiteNames[0]
	} else {
		l.Host = "localhost"
	}
	l.SiteHTTPS = s.HTTPS
	l.SiteAccessLogs = s.Vhost.AccessLogs
	l.SitePort = 80
	if s.HTTPS {
		l.SitePort = 443
	}
	l.HTTPSocket = y.p("run", "http.sock")
	// Not an http:// URL: nothing on the host may mistake the site's name
	// (production's) or a loopback port for the lab.
	l.URL = "unix:" + l.HTTPSocket
}

// Sealed reports whether the lab runs inside a seal (a site lab).
func (l *Lab) Sealed() bool { return l.Seal != "" }

// OpenNetNS opens a sealed lab's network namespace, where its servers'
// listeners are (seal.Seal.OpenNetNS); the caller closes it.
func (l *Lab) OpenNetNS() (*os.File, error) {
	if !l.Sealed() {
		return nil, fmt.Errorf("lab %s is not sealed: its listeners are in this host's namespace", l.Name)
	}
	s, err := seal.Open(l.Seal)
	if err != nil {
		return nil, err
	}
	return s.OpenNetNS()
}

// SealedNginxStatus is where a sealed lab's nginx answers its stub_status:
// on its web server's unix socket, asked with the site's host (ok false
// for another server, or a lab that is not sealed, whose page is at
// NginxStatusURL).
func (l *Lab) SealedNginxStatus() (socket, host, path string, ok bool) {
	w, _, err := webFor(l.Config)
	if !l.Sealed() || err != nil || w.component() != "nginx" || w.statusPath() == "" || l.HTTPSocket == "" || l.Host == "" {
		return "", "", "", false
	}
	return l.HTTPSocket, l.Host, w.statusPath(), true
}

// makeSeal creates the lab's seal: the lab's directory read-only at its
// own path (its configuration, the app's files), every directory the
// lab's servers write bound writable over it, the MariaDB socket
// directory also at /run/mysqld (and at every other socket path the
// site's configuration names: SiteDBSockets), the live pool's prepend and append files
// outside the app's root read-only (SiteFiles), the lab's account in the
// seal's /etc/passwd, the site's names on 127.0.0.1, the app's root
// (AppRoot, else the docroot) as an overlay; the seal's init starts in
// the lab's cgroup.
func (l *Lab) makeSeal(ctx context.Context, acct, dbAcct *account) error {
	y := layout{l.Dir}
	dbUID, dbGID := dbAcct.ids()
	// The socket's directory: MariaDB's alone until its root has a
	// password (the server starts with a passwordless root, and the
	// site's live code on this host could race for it), then passable by
	// the site's group (openSiteDBRun), writable by no one else, so
	// nothing but the server can put a socket or a link there.
	if err := mkdirOwned(y.p(siteDBRunDir), dbUID, dbGID, 0o700); err != nil {
		return err
	}
	for _, d := range []string{siteDBLogDir, siteDBTmpDir} {
		if err := mkdirOwned(y.p(d), dbUID, dbGID, 0o700); err != nil {
			return err
		}
	}
	binds := []seal.Bind{{Source: l.Dir, Target: l.Dir, ReadOnly: true}}
	for _, d := range append(append([]string{}, writableDirs...), fpmDir, "mysql", siteDBRunDir, siteDBLogDir, siteDBTmpDir) {
		binds = append(binds, seal.Bind{Source: y.p(d), Target: y.p(d)})
	}
	binds = append(binds, seal.Bind{Source: y.p(siteDBRunDir), Target: "/run/mysqld"})
	code := map[string]bool{}
	for _, f := range l.SiteCode {
		code[f] = true
	}
	for _, f := range l.SiteFiles {
		// The site's code outside its app root is checked again by the
		// seal as it binds it (no socket, FIFO or device; root's).
		binds = append(binds, seal.Bind{Source: f, Target: f, ReadOnly: true, Code: code[f]})
	}
	appRoot := ""
	if l.AppRoot != "" && l.AppRoot != l.DocRoot {
		appRoot = l.AppRoot
	}
	links, err := l.siteDBLinks()
	if err != nil {
		return err
	}
	cacheBinds, err := l.makeCacheDirs(acct, dbAcct)
	if err != nil {
		return err
	}
	binds = append(binds, cacheBinds...)
	binds = append(binds, phpRootBinds()...)
	links = append(links, cacheLinks(l.Caches)...)
	_, err = seal.Create(ctx, seal.Spec{
		Dir: l.Seal, Hosts: l.SiteNames, Binds: binds, Links: links, Docroot: l.DocRoot, AppRoot: appRoot,
		Refuse:   []string{Home()},
		Own:      append(append([]netip.AddrPort{siteHTTPAddr, siteDBAddr}, l.dbOwnAlso()...), cacheOwnAddrs(l.Caches)...),
		Served:   l.sealServed(),
		Accounts: []seal.Account{{Name: acct.Name, UID: int(acct.UID), GID: int(acct.GID)}, {Name: dbAcct.Name, UID: int(dbAcct.UID), GID: int(dbAcct.GID)}},
		Start:    l.Limits.startCapped,
	})
	return err
}

// startCmd starts a command l.command made: a sealed lab's inside the
// seal's pid namespace, every lab's within the lab's caps.
func (l *Lab) startCmd(cmd *exec.Cmd) error {
	if !l.Sealed() {
		return l.Limits.startCapped(cmd)
	}
	s, err := seal.Open(l.Seal)
	if err != nil {
		return err
	}
	return s.StartWith(cmd, l.Limits.startCapped)
}

// sealedCommand is command for a sealed lab: bin runs inside the seal as
// the lab's account (nsenter starts as root and drops to it there), in its
// own session.
func (l *Lab) sealedCommand(acct *account, bin string, args, env []string) *exec.Cmd {
	s, err := seal.Open(l.Seal)
	if err != nil {
		cmd := exec.Command(bin)
		cmd.Err = err
		return cmd
	}
	cmd := s.Command(int(acct.UID), int(acct.GID), bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = append([]string{labPath, "HOME=" + layout{l.Dir}.p("tmp")}, env...)
	return cmd
}

// provisionSite sets the lab server's root password, with the mariadb
// client run inside the seal as MariaDB's own account (dbAcct, not the
// site's) and the statements on its standard input. No file holds the
// password but root's secrets.json: root's tools (rootClient) get it in
// a pipe, and the site's account can neither read their memory nor
// their descriptors.
func (l *Lab) provisionSite(ctx context.Context, dbAcct *account, b *mariadb.Binaries, s Secrets) error {
	sql := mariadb.DropOtherAccountsSQL + fmt.Sprintf("ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\nFLUSH PRIVILEGES;\n", s.MariaDBRootPassword)
	args := []string{"--no-defaults", "--socket=" + l.MariaDBSocket, "--user=root", "--batch"}
	if err := l.runQuiet(ctx, dbAcct, "mariadb", b.Client, args, nil, strings.NewReader(sql), time.Minute); err != nil {
		return fmt.Errorf("provisioning MariaDB: %w", err)
	}
	return nil
}

// openSiteDBRun lets the site's group through the MariaDB socket's
// directory, once the server's root has its password (provisionSite).
func (l *Lab) openSiteDBRun(acct, dbAcct *account) error {
	dbUID, _ := dbAcct.ids()
	return mkdirOwned(layout{l.Dir}.p(siteDBRunDir), dbUID, acct.group(), 0o750)
}

// siteDB is what FillDatabase gets: Load runs the mariadb client as the
// lab's MariaDB account (rootClient).
func (l *Lab) siteDB(dbAcct *account, b *mariadb.Binaries, s *site.Site, rootPassword string) SiteDB {
	return SiteDB{
		Site: s, Socket: l.MariaDBSocket, PeerUID: l.DBPeerUID(), RootPassword: rootPassword,
		Load: func(ctx context.Context, stdin io.Reader, args ...string) error {
			return l.rootClient(ctx, dbAcct, b.Client, append([]string{"--batch"}, args...), rootPassword, stdin, nil, 4*time.Hour)
		},
	}
}

// FetchPage GETs path from the lab as a client would: a sealed lab through
// its web server's unix socket or inside its seal (DialSite) with the
// site's Host, any other at its URL.
func (l *Lab) FetchPage(ctx context.Context, path string) (pagecheck.Page, error) {
	if !l.Sealed() {
		return pagecheck.Fetch(ctx, l.URL+path)
	}
	p, err := pagecheck.FetchVia(ctx, l.siteTransport(), "http://"+l.Host+path, l.Host)
	if err == nil {
		p.URL = l.SiteURL() + path
	}
	return p, err
}

// SiteURL is the site's own URL as the lab serves it ("http://site.test").
func (l *Lab) SiteURL() string {
	scheme := "http"
	if l.SiteHTTPS {
		scheme = "https"
	}
	return scheme + "://" + l.Host
}

// Attempts are the connections the sealed lab's processes tried to open
// to anywhere but the lab's own listeners (all refused), by destination,
// most first; nil for a lab that is not sealed.
func (l *Lab) Attempts(ctx context.Context) ([]seal.Attempt, error) {
	if !l.Sealed() {
		return nil, nil
	}
	s, err := seal.Open(l.Seal)
	if err != nil {
		return nil, err
	}
	return s.Attempts(ctx)
}

// destroySeal takes down the seal of the lab in dir, if it has one: every
// process left in its namespaces, its mounts (the docroot's overlay with
// them) and its namespace files.
func destroySeal(dir string) error {
	p := filepath.Join(dir, sealDir)
	forgetSiteNetNS(p)
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	s, err := seal.Open(p)
	if err != nil {
		return err
	}
	if err := s.Destroy(); err != nil {
		return fmt.Errorf("destroying the lab's seal %s: %v", p, err)
	}
	return nil
}

// sitePlanChecks are the checks planUp makes for a site lab's server.
func sitePlanChecks(cfg knob.Config) error {
	if s := cfg.Server(); !SiteServers[s] {
		return fmt.Errorf("--site: server=%s cannot serve a site lab yet; a site lab runs %s (leave the server knob out to run the one production runs)", s, strings.Join(siteServerNames(), ", "))
	}
	if cfg["listen"] == "tcp" {
		return errors.New("--site: listen=tcp puts php-fpm on a loopback port, which a site lab keeps for the site's own addresses; leave the listen knob out")
	}
	return nil
}

// dbTCP is the loopback address a site lab's MariaDB also listens on
// inside its seal ("" for other labs: no networking).
func (l *Lab) dbTCP() string {
	if !l.Sealed() {
		return ""
	}
	return siteDBAddr.String()
}

// SiteServers are the servers a site lab can run: nginx, or Apache
// with either of its ways to run PHP, as production may.
var SiteServers = map[string]bool{knob.NginxFPM: true, knob.ApacheEventFPM: true, knob.ApachePreforkModPHP: true}

// siteServerNames is SiteServers in the server knob's order.
func siteServerNames() []string {
	var out []string
	for _, s := range knob.Servers {
		if SiteServers[s] {
			out = append(out, s)
		}
	}
	return out
}
