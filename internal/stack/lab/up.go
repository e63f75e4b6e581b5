package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/servers/wordpress"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// Options says what lab to bring up.
type Options struct {
	Name string
	// App is a built-in app (see apps.Catalog); DocRoot, when set, serves the
	// user's own PHP directory instead.
	App     string
	DocRoot string
	// Set holds knob assignments (KNOB=VALUE) applied over the distro defaults.
	Set []string
	// Port is the HTTP port on 127.0.0.1; 0 picks a free one.
	Port int
	// User, when set (root only), runs the whole lab — nginx, php-fpm,
	// MariaDB, the helpers — as this account instead of phptune's: the app
	// then runs with that account's rights, so it can write the caches and
	// uploads it owns, and no other lab (phptune's account) can reach it.
	// root is refused.
	User string
	// CPUs ("0-1,3") and MemoryMax (bytes) cap every process of the lab
	// (see Limits); refused before anything starts when they cannot hold.
	CPUs      string
	MemoryMax int64
	// OwnedBy, when set ("tune", "compare"), makes the lab belong to the
	// calling process: once that process is gone, the next phptune command
	// takes the lab down.
	OwnedBy string
	// Progress, when set, receives one line per step.
	Progress func(string)
	// Site, when set, is a discovered site (site.Discover) whose own
	// docroot the lab serves, sealed (see sealed.go): the lab's account is
	// the site pool's unless User says otherwise, and MariaDB always runs.
	Site *site.Site
	// FillDatabase, for a site lab, fills its MariaDB once it answers and
	// before PHP starts: the site's database, its account and data (the
	// copy of production's: package dbcopy plugs in here). Nil leaves the
	// lab's server empty.
	FillDatabase func(ctx context.Context, db SiteDB) error
	// Data, for a site lab, is where its database comes from (a copy of
	// production's or a dump file): loaded once MariaDB answers, then
	// snapshotted for lab reset. It takes the place of FillDatabase.
	Data *SiteData
	// Live, for a site lab, is the live site's configuration
	// (site.LiveStart): its pool lines without a knob are carried into
	// the lab's pool, and its knobs are written to DIR/live.knobs. The
	// caller puts Live.Config's overrides in Set (before the user's own).
	Live *site.Start
}

// plan is everything Up checks before it creates anything.
type plan struct {
	app      apps.App
	docroot  string
	cfg      knob.Config
	fpm      *phpfpm.Binary // the php-fpm it runs: the distro's or a build's (CLI stays the distro's)
	build    *PHPBuild      // php.build, nil for the distro's PHP
	web      webServer      // the server knob's web server
	webBin   string
	db       *mariadb.Binaries
	port     int
	acct     *account // the lab's account: phptune's, or --user's
	dbAcct   *account // the account its MariaDB runs as: acct, or a site lab's DBUser
	limits   Limits
	dir      string
	progress func(string)
	site     *site.Site
	fill     func(ctx context.Context, db SiteDB) error
	data     *SiteData
	live     *site.Start
	// appRoot and siteFiles are what a site lab's seal overlays and binds
	// (siteAppRoot, sitePHPFiles); siteWarnings what it cannot show.
	appRoot      string
	siteFiles    []string
	siteWarnings []string
	// siteDBSockets are the database socket paths the site's
	// configuration names that lead to the lab's MariaDB inside
	// (siteDBSockets).
	siteDBSockets []string
	// siteCodeSaid say which include_path directories and php.ini
	// prepend/append files outside the app's root the seal binds
	// (siteCode; they are in siteFiles).
	siteCode, siteCodeSaid []string
}

// planUp validates opt: every input problem is reported here, before any
// process starts or any file is written.
func planUp(opt Options) (*plan, error) {
	p := &plan{progress: opt.Progress, site: opt.Site, fill: opt.FillDatabase, data: opt.Data, live: opt.Live}
	if p.progress == nil {
		p.progress = func(string) {}
	}
	if err := CheckName(opt.Name); err != nil {
		return nil, err
	}
	if opt.Site != nil {
		if err := checkSiteOptions(opt); err != nil {
			return nil, err
		}
		opt.User = siteUser(opt)
	}
	var err error
	if p.app, p.docroot, err = resolveApp(opt); err != nil {
		return nil, err
	}
	if p.cfg, err = knob.Defaults().Apply(opt.Set); err != nil {
		return nil, err
	}
	if err := p.cfg.Validate(); err != nil {
		return nil, err
	}
	if opt.Site != nil {
		if err := sitePlanChecks(p.cfg); err != nil {
			return nil, err
		}
	}
	if err := p.findPrograms(); err != nil {
		return nil, err
	}
	if p.port, err = planPort(opt); err != nil {
		return nil, err
	}
	if err := p.planAccounts(opt); err != nil {
		return nil, err
	}
	if p.limits, err = planLimits(opt.CPUs, opt.MemoryMax, p.acct.root); err != nil {
		return nil, err
	}
	if err := raiseOpenFiles(p.cfg); err != nil {
		return nil, err
	}
	if err := confpath.CheckHome(Home()); err != nil {
		return nil, err
	}
	p.dir = filepath.Join(Root(), opt.Name)
	if opt.Site != nil {
		if err := p.planSiteFiles(); err != nil {
			return nil, err
		}
	}
	// The longest socket name: the last pool's.
	if err := phpfpm.CheckSocketPath(layout{p.dir}.fpmPoolSocket(p.cfg.Pools() - 1)); err != nil {
		return nil, err
	}
	if c, ok := p.web.(siteChecker); ok {
		// The server's file may not carry every path nginx's can: the
		// home, or the user's docroot, decides.
		if err := c.checkSite(p.dir, p.docroot); err != nil {
			return nil, err
		}
	}
	if p.docroot != "" {
		if err := p.acct.checkReachable(filepath.Join(p.docroot, "index.php")); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// findPrograms finds what the configuration runs: its php-fpm, its web
// server and, for an app with a database, MariaDB; for WordPress, Debian's
// WordPress and the command line PHP that installs it.
func (p *plan) findPrograms() error {
	var err error
	if p.fpm, p.build, err = phpFor(p.cfg); err != nil {
		return err
	}
	if p.web, p.webBin, err = webFor(p.cfg); err != nil {
		return err
	}
	if p.app.NeedsDB {
		if p.db, err = mariadb.Find(); err != nil {
			return err
		}
	}
	if p.app.Name == "wordpress" {
		if err := wordpress.Check(); err != nil {
			return err
		}
		if p.fpm.CLI == "" {
			return fmt.Errorf("php%s (the command line PHP) is needed to install WordPress; run: phptune setup", p.fpm.Version)
		}
	}
	return nil
}

// planPort is the lab's HTTP port on 127.0.0.1: --port, checked and free,
// else a free one; a site lab's is 0 (inside the seal nginx listens on
// 127.0.0.1:80, and the host reaches it through its unix socket).
func planPort(opt Options) (int, error) {
	switch {
	case opt.Site != nil:
		if opt.Port != 0 {
			return 0, errors.New("--port: a site lab listens on the site's own port inside its seal and on a unix socket for this host; leave --port out")
		}
		return 0, nil
	case opt.Port != 0:
		if opt.Port < 1024 || opt.Port > 65535 {
			return 0, fmt.Errorf("--port %d: use 1024..65535 (the lab runs unprivileged), or leave it out to pick a free one", opt.Port)
		}
		return opt.Port, portFree(opt.Port)
	default:
		return freePort()
	}
}

// planAccounts picks the lab's account (phptune's, or --user's) and the
// one its MariaDB runs as: the same, or for a site lab the database
// account, which must differ from the lab's.
func (p *plan) planAccounts(opt Options) error {
	var err error
	if p.acct, err = newLabAccount(opt.User, p.userDocroot(opt)); err != nil {
		return err
	}
	p.dbAcct = p.acct
	if opt.Site != nil {
		if p.dbAcct, err = dbAccount(); err != nil {
			return err
		}
		if p.dbAcct.UID == p.acct.UID {
			return fmt.Errorf("--user %s: that is the account a site lab's MariaDB runs as; %s", p.acct.Name, pickAccount)
		}
	}
	return nil
}

// planSiteFiles finds what a site lab's seal overlays and binds: the
// app's root, the site's PHP files and code outside it, and the database
// sockets its configuration names; what it cannot show becomes a warning.
func (p *plan) planSiteFiles() error {
	s := p.site
	p.appRoot, p.siteWarnings = siteAppRoot(s, p.dir)
	var notes []string
	p.siteFiles, notes = sitePHPFiles(s, p.appRoot)
	p.siteWarnings = append(p.siteWarnings, notes...)
	p.siteDBSockets, notes = siteDBSockets(s, p.appRoot)
	p.siteWarnings = append(append(p.siteWarnings, notes...), servedNotes(s)...)
	code, said, notes, err := siteCode(s, p.appRoot, p.siteFiles)
	if err != nil {
		return err
	}
	p.siteFiles = append(p.siteFiles, code...)
	p.siteCode, p.siteCodeSaid = code, said
	p.siteWarnings = append(p.siteWarnings, notes...)
	return nil
}

// userDocroot is the docroot the --user rule judges the account against:
// the user's or the site's.
func (p *plan) userDocroot(opt Options) string {
	if opt.Site != nil {
		return p.docroot
	}
	return opt.DocRoot
}

func resolveApp(opt Options) (apps.App, string, error) {
	if opt.Site != nil {
		d := siteDocRoot(opt.Site)
		if err := apps.CheckDocRoot(d); err != nil {
			return apps.App{}, "", fmt.Errorf("--site %s: %w", opt.Site.Query, err)
		}
		return siteApp(opt.Site), d, nil
	}
	if opt.DocRoot != "" {
		abs, err := filepath.Abs(opt.DocRoot)
		if err != nil {
			return apps.App{}, "", err
		}
		if err := apps.CheckDocRoot(abs); err != nil {
			return apps.App{}, "", err
		}
		return apps.App{Name: "docroot", Description: "the user's app at " + abs, FrontController: true}, abs, nil
	}
	if opt.App == "" {
		opt.App = "hello"
	}
	a, err := apps.Lookup(opt.App)
	return a, "", err
}

// Up validates opt, then brings up a lab and returns its state. Every input
// problem is reported before any process starts. On failure or
// cancellation everything started is stopped and the lab directory removed;
// the error carries the end of the failing component's log.
func Up(ctx context.Context, opt Options) (_ *Lab, err error) {
	if opt.Name == "" {
		opt.Name = "lab"
	}
	p, err := planUp(opt)
	if err != nil {
		return nil, err
	}
	if _, err := EnsureHome(); err != nil {
		return nil, err
	}
	if err := p.reachDir(); err != nil {
		return nil, err
	}
	labs, err := openLabs()
	if err != nil {
		return nil, err
	}
	defer labs.Close()
	cleanDead(labs, opt.Name, p.progress)
	unlock, err := p.makeDir(labs, opt.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	l := p.newLab(opt)
	defer func() {
		if err != nil {
			tail := l.logTail(8)
			if terr := teardown(labs, l.owner(), l.Processes); terr != nil {
				err = fmt.Errorf("%w; cleaning up also failed: %v", err, terr)
			}
			if tail != "" {
				err = fmt.Errorf("%w\n%s", err, tail)
			}
		}
	}()
	if err := l.writeState(); err != nil {
		return nil, err
	}
	if err := l.Limits.makeCgroup(cgroupName(opt.Name, p.dir)); err != nil {
		return nil, err
	}
	if err := l.writeState(); err != nil {
		return nil, err
	}
	if err := l.build(ctx, p); err != nil {
		return nil, err
	}
	l.State = "up"
	if opt.OwnedBy == "" {
		l.OwnerPID, l.OwnerStart = 0, 0
	}
	if err := l.writeState(); err != nil {
		return nil, err
	}
	return l, nil
}

// reachDir lets the lab's account reach the lab's directory: another
// account than phptune's must traverse to it, so home and labs/ get o+x
// (others may pass through, never list; every lab is 0750 with its own
// account's group).
func (p *plan) reachDir() error {
	if (p.acct.Name != StackUser || p.site != nil) && p.acct.root {
		for _, d := range []string{Home(), Root()} {
			if err := allowTraverse(d); err != nil {
				return err
			}
		}
	}
	return p.acct.checkReachable(p.dir)
}

// makeDir makes the lab's directory, locked, owned and marked with the
// accounts that may act on it; on failure it is removed and unlocked
// again. It is made in the held labs directory: the lab's path is for the
// servers, root removes through the descriptor.
func (p *plan) makeDir(labs *labsDir, name string) (unlock func(), err error) {
	if err := labs.root.Mkdir(name, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lab name %q is already in use (%s); take it down with: phptune lab down %s, or choose another --name", name, p.dir, name)
		}
		return nil, err
	}
	unlock, err = lockLab(p.dir, false)
	if err != nil {
		labs.root.Remove(name)
		return nil, err
	}
	// Root's, readable (not writable) by the stack's group. A site lab's
	// MariaDB account passes through to its own directories (o+x: no
	// listing, and every file in it is root's or an account's own).
	mode, uids := p.acct.readDirMode(), []int{int(p.acct.UID)}
	if p.site != nil {
		mode |= 0o001
		uids = append(uids, int(p.dbAcct.UID))
	}
	if err := mkdirOwned(p.dir, -1, p.acct.group(), mode); err != nil {
		labs.remove(name)
		unlock()
		return nil, err
	}
	if err := writeMarker(p.dir, uids); err != nil {
		labs.remove(name)
		unlock()
		return nil, err
	}
	return unlock, nil
}

// newLab is the lab's state as it starts: what the plan decided, owned by
// this process.
func (p *plan) newLab(opt Options) *Lab {
	l := &Lab{
		ID: mariadb.Password()[:16], Name: opt.Name, Dir: p.dir, App: p.app.Name, State: "starting",
		OwnerPID: os.Getpid(), OwnerStart: startTime(os.Getpid()), OwnedBy: opt.OwnedBy,
		URL:           fmt.Sprintf("http://127.0.0.1:%d", p.port),
		FPMStatusPath: fpmStatusPath,
		DocRoot:       p.docroot,
		Config:        p.cfg,
		User:          p.acct.Name, UID: int(p.acct.UID), GID: int(p.acct.GID),
		BootID: bootID(),
	}
	l.Limits = p.limits
	if p.site != nil {
		l.DBUser, l.DBUID, l.DBGID = p.dbAcct.Name, int(p.dbAcct.UID), int(p.dbAcct.GID)
		l.setSite(p.site)
		l.setLive(p.site, p.live)
		l.AppRoot, l.SiteFiles, l.SiteDBSockets = p.appRoot, p.siteFiles, p.siteDBSockets
		l.Caches, l.SiteCaches = siteCacheServers(p.site, p.appRoot, p.dir, l.SiteNames, l.Limits.MemoryMaxB)
		l.SiteCode = p.siteCode
	}
	l.setStatusURLs(p.web)
	return l
}

// build makes the lab's files, initialises its database and app, and starts
// its servers.
func (l *Lab) build(ctx context.Context, p *plan) error {
	y := layout{l.Dir}
	say, acct := p.progress, p.acct
	if p.build != nil {
		say("PHP: build " + p.build.Summary)
		for _, n := range p.build.Notes {
			say(n)
		}
	}
	if err := y.makeDirs(acct); err != nil {
		return err
	}
	if l.DocRoot == "" {
		l.DocRoot = y.p("www")
	}
	l.ScriptFilename = filepath.Join(l.DocRoot, "index.php")
	if p.app.NeedsDB {
		l.MariaDBSocket = y.dbSocket()
		uid, gid := p.dbAcct.ids()
		if err := mkdirOwned(y.p("mysql"), uid, gid, 0o700); err != nil {
			return err
		}
	}
	if l.Sealed() {
		if err := l.sealLab(ctx, p); err != nil {
			return err
		}
	}
	secrets, err := l.prepareApp(p)
	if err != nil {
		return err
	}
	if err := l.writeSecrets(secrets); err != nil {
		return err
	}
	if err := l.writeLiveKnobs(acct, p.live); err != nil {
		return err
	}
	if err := l.render(acct); err != nil {
		return err
	}
	if err := l.testConfigs(ctx, acct, p.fpm, p.web, p.webBin); err != nil {
		return err
	}
	if p.app.NeedsDB {
		if err := l.startDatabase(ctx, p, &secrets); err != nil {
			return err
		}
	}
	if p.app.Name == "wordpress" {
		say("installing and seeding WordPress")
		if err := l.installWordPress(ctx, acct, p, secrets); err != nil {
			return err
		}
	}
	if err := l.startCaches(ctx, p.dbAcct, say, true); err != nil {
		return err
	}
	if knob.RunsFPM(l.Config.Server()) {
		say("starting php-fpm")
		if err := l.startFPM(ctx, acct, p.fpm); err != nil {
			return err
		}
	}
	say("starting " + p.web.component())
	if err := l.startWeb(ctx, acct, p.web, p.webBin); err != nil {
		return err
	}
	return l.smoke(ctx)
}

// sealLab says what a site lab's seal shows and binds, makes the seal, and
// points the lab at its MariaDB's socket inside it.
func (l *Lab) sealLab(ctx context.Context, p *plan) error {
	say := p.progress
	for _, w := range p.siteWarnings {
		say("warning: " + w)
	}
	for _, m := range p.siteCodeSaid {
		say(m)
	}
	shown := "the docroot " + l.DocRoot
	if l.AppRoot != "" && l.AppRoot != l.DocRoot {
		shown = "the app's root " + l.AppRoot + " (it holds the docroot and the app's configuration)"
	}
	say("sealing the lab (private network with loopback only, private pids, only the allowlisted host files read-only, " + shown + " as an overlay)")
	if err := l.makeSeal(ctx, p.acct, p.dbAcct); err != nil {
		return err
	}
	l.MariaDBSocket = layout{l.Dir}.p(siteDBRunDir, siteDBSocketName)
	return l.writeState()
}

// prepareApp puts the app in place and returns the lab's secrets: a
// built-in app is installed; a sealed lab gets its MariaDB's root password;
// an app with a database gets its database's account too, written to
// app/db.php, and WordPress is copied and configured for it.
func (l *Lab) prepareApp(p *plan) (Secrets, error) {
	y := layout{l.Dir}
	if p.docroot == "" && p.app.Name != "wordpress" {
		if err := apps.Install(p.app.Name, l.DocRoot); err != nil {
			return Secrets{}, err
		}
	}
	var secrets Secrets
	if l.Sealed() {
		secrets = Secrets{MariaDBRootPassword: mariadb.Password()}
	} else if p.app.NeedsDB {
		secrets = Secrets{MariaDBRootPassword: mariadb.Password(), DBName: "app", DBUser: "app", DBPassword: mariadb.Password()}
		if p.app.Name == "wordpress" {
			secrets.DBName, secrets.DBUser = "wordpress", "wordpress"
			secrets.WPAdminUser, secrets.WPAdminPassword = "admin", mariadb.Password()
		}
		dbConf := fmt.Sprintf("<?php\n// Rendered by phptune: the lab database for the app.\nreturn ['socket' => %s, 'user' => %s, 'password' => %s, 'db' => %s];\n",
			phpString(y.dbSocket()), phpString(secrets.DBUser), phpString(secrets.DBPassword), phpString(secrets.DBName))
		if err := writeOwned(y.p("app", "db.php"), []byte(dbConf), p.acct.readFileMode(), p.acct.group()); err != nil {
			return Secrets{}, err
		}
		if p.app.Name == "wordpress" {
			p.progress("copying WordPress from " + wordpress.Source)
			if err := l.prepareWordPress(p.acct, secrets); err != nil {
				return Secrets{}, err
			}
		}
	}
	return secrets, nil
}

// testHookSiteDBStarted, set by a test, runs when a site lab's MariaDB has
// started and its root has no password yet.
var testHookSiteDBStarted func(*Lab)

// startDatabase initialises the lab's MariaDB, starts it and provisions
// it: a site lab's with the site's database and data (copied, or filled by
// the caller), which may change secrets; another lab's with the app's
// account.
func (l *Lab) startDatabase(ctx context.Context, p *plan, secrets *Secrets) error {
	say, dbAcct := p.progress, p.dbAcct
	say("initialising MariaDB")
	if err := l.runQuiet(ctx, dbAcct, "mariadb", p.db.InstallDB, p.db.InstallArgs(layout{l.Dir}.p("mysql")), nil, nil, 3*time.Minute); err != nil {
		return fmt.Errorf("mariadb-install-db failed: %w", err)
	}
	if err := l.startMariaDB(ctx, dbAcct, p.db, "root", ""); err != nil {
		return err
	}
	if !l.Sealed() {
		return l.provision(ctx, p.acct, p.db, *secrets)
	}
	if testHookSiteDBStarted != nil {
		testHookSiteDBStarted(l)
	}
	if err := l.provisionSite(ctx, dbAcct, p.db, *secrets); err != nil {
		return err
	}
	if err := l.openSiteDBRun(p.acct, dbAcct); err != nil {
		return err
	}
	switch {
	case p.data != nil:
		return l.copySiteData(ctx, p.acct, p, secrets)
	case p.fill != nil:
		say("filling the lab's database")
		if err := p.fill(ctx, l.siteDB(dbAcct, p.db, p.site, secrets.MariaDBRootPassword)); err != nil {
			return fmt.Errorf("filling the lab's database: %w", err)
		}
	}
	return nil
}

// prepareWordPress copies Debian's WordPress into the lab's root-owned www/
// (the lab reads it; only wp-content/uploads is the lab's to write) and
// renders wp-config.php readable by the lab's group.
func (l *Lab) prepareWordPress(acct *account, s Secrets) error {
	y := layout{l.Dir}
	dbAcct := mariadb.Account{DB: s.DBName, User: s.DBUser, Password: s.DBPassword}
	if err := wordpress.Prepare(l.DocRoot); err != nil {
		return err
	}
	if err := writeOwned(filepath.Join(l.DocRoot, "wp-config.php"), []byte(wordpress.Config(l.URL, y.dbSocket(), dbAcct)), acct.readFileMode(), acct.group()); err != nil {
		return err
	}
	uid, gid := acct.ids()
	return mkdirOwned(filepath.Join(l.DocRoot, "wp-content", "uploads"), uid, gid, 0o750)
}

// installWordPress runs the installer as the stack account (the admin
// password in its environment, never in argv) and snapshots the database.
func (l *Lab) installWordPress(ctx context.Context, acct *account, p *plan, s Secrets) error {
	y := layout{l.Dir}
	script := y.p("app", "install.php")
	if err := writeOwned(script, wordpress.InstallScript(), acct.readFileMode(), acct.group()); err != nil {
		return err
	}
	host := strings.TrimPrefix(l.URL, "http://")
	env := []string{"PHPTUNE_WP_ADMIN_PASSWORD=" + s.WPAdminPassword}
	if err := l.runQuiet(ctx, acct, "app", p.fpm.CLI, []string{"-d", "memory_limit=512M", script, l.DocRoot, host}, env, nil, 5*time.Minute); err != nil {
		return fmt.Errorf("installing WordPress failed: %w", err)
	}
	return l.snapshot(ctx, acct, p.db, s.DBName)
}

func (l *Lab) startFPM(ctx context.Context, acct *account, b *phpfpm.Binary) error {
	y := layout{l.Dir}
	cmd, err := l.start(acct, "php-fpm", b.Path, b.Args(y.p("php-fpm.conf")), l.fpmEnv())
	if err != nil {
		return err
	}
	for i, listen := range l.FPMPoolListens() {
		network, addr := splitListen(listen)
		what := "php-fpm"
		if i > 0 {
			what = fmt.Sprintf("php-fpm (pool %s)", phpfpm.PoolName("", i))
		}
		if err := l.waitDial(ctx, what, network, addr, l.PeerUID(), cmd.Process.Pid); err != nil {
			return err
		}
	}
	return nil
}

// FPMAddr returns php-fpm's socket as a network and address for net.Dial.
// With several pools (fpm.pools) it is the first pool's; see
// FPMPoolListens.
func (l *Lab) FPMAddr() (network, address string) { return splitListen(l.FPMListen) }

// splitListen is a pool address in FPMListen's form as a network and
// address for net.Dial.
func splitListen(listen string) (network, address string) {
	if a, ok := strings.CutPrefix(listen, "tcp:"); ok {
		return "tcp", a
	}
	return "unix", strings.TrimPrefix(listen, "unix:")
}

// FPMPoolAddrs is every pool's socket as a network and address for
// net.Dial, the first pool's first.
func (l *Lab) FPMPoolAddrs() (networks, addresses []string) {
	for _, listen := range l.FPMPoolListens() {
		n, a := splitListen(listen)
		networks, addresses = append(networks, n), append(addresses, a)
	}
	return networks, addresses
}

// phpString is s as a PHP single-quoted string literal (only \\ and \'
// are special there: no variables, no escapes to expand).
func phpString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port on 127.0.0.1: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func portFree(port int) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("--port %d: 127.0.0.1:%d is already in use; choose another port or leave --port out to pick a free one", port, port)
	}
	return ln.Close()
}
