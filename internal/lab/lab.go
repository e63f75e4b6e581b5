package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/apps"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/mariadb"
	"github.com/phptune/phptune/internal/nginx"
	"github.com/phptune/phptune/internal/phpfpm"
	"github.com/phptune/phptune/internal/wordpress"
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
	// Progress, when set, receives one line per step.
	Progress func(string)
}

// Secrets are a lab's credentials, kept in DIR/secrets.json (mode 0600) and
// shown only by `lab status --secrets`.
type Secrets struct {
	MariaDBRootPassword string `json:"mariadb_root_password,omitempty"`
	DBName              string `json:"db_name,omitempty"`
	DBUser              string `json:"db_user,omitempty"`
	DBPassword          string `json:"db_password,omitempty"`
	WPAdminUser         string `json:"wordpress_admin_user,omitempty"`
	WPAdminPassword     string `json:"wordpress_admin_password,omitempty"`
}

const (
	fpmStatusPath   = "/fpm-status"
	fpmPingPath     = "/fpm-ping"
	nginxStatusPath = "/nginx-status"
)

// layout names the files of a lab below its directory.
type layout struct{ dir string }

func (y layout) p(parts ...string) string { return filepath.Join(append([]string{y.dir}, parts...)...) }
func (y layout) fpmSocket() string        { return y.p("run", "php-fpm.sock") }
func (y layout) dbSocket() string         { return y.p("run", "mariadb.sock") }
func (y layout) snapshot() string         { return y.p("db-snapshot.sql") }
func (y layout) clientConf() string       { return y.p("client.cnf") }

// logFiles maps a component to its log files.
func (y layout) logFiles(component string) []string {
	switch component {
	case "nginx":
		return []string{y.p("log", "nginx-error.log"), y.p("log", "nginx.out")}
	case "php-fpm":
		return []string{y.p("log", "php-fpm.log"), y.p("log", "php-fpm.out")}
	case "mariadb":
		return []string{y.p("log", "mariadb.log"), y.p("log", "mariadb.out")}
	case "app":
		return []string{y.p("log", "app-install.out")}
	}
	return nil
}

// Components lists the components that have logs.
var Components = []string{"nginx", "php-fpm", "mariadb", "app"}

// Up validates opt, then brings up a lab and returns its state. Every input
// problem is reported before any process starts. On failure or
// cancellation everything started is stopped and the lab directory removed;
// the error carries the end of the failing component's log.
func Up(ctx context.Context, opt Options) (_ *Lab, err error) {
	say := opt.Progress
	if say == nil {
		say = func(string) {}
	}
	if opt.Name == "" {
		opt.Name = "lab"
	}
	if err := CheckName(opt.Name); err != nil {
		return nil, err
	}
	app, docroot, err := resolveApp(opt)
	if err != nil {
		return nil, err
	}
	cfg, err := knob.Defaults().Apply(opt.Set)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fpmBin, err := phpfpm.Find()
	if err != nil {
		return nil, err
	}
	nginxBin, err := nginx.Find()
	if err != nil {
		return nil, err
	}
	var dbBin *mariadb.Binaries
	if app.NeedsDB {
		if dbBin, err = mariadb.Find(); err != nil {
			return nil, err
		}
	}
	if app.Name == "wordpress" {
		if err := wordpress.Check(); err != nil {
			return nil, err
		}
		if fpmBin.CLI == "" {
			return nil, fmt.Errorf("php%s (the command line PHP) is needed to install WordPress; run: phptune setup", fpmBin.Version)
		}
	}
	port := opt.Port
	if port != 0 {
		if port < 1024 || port > 65535 {
			return nil, fmt.Errorf("--port %d: use 1024..65535 (the lab runs unprivileged), or leave it out to pick a free port", port)
		}
		if err := portFree(port); err != nil {
			return nil, err
		}
	} else if port, err = freePort(); err != nil {
		return nil, err
	}
	acct, err := stackAccount()
	if err != nil {
		return nil, err
	}
	root := Root()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("creating the labs directory: %v", err)
	}
	dir := filepath.Join(root, opt.Name)
	y := layout{dir}
	if err := phpfpm.CheckSocketPath(y.fpmSocket()); err != nil {
		return nil, err
	}
	if err := acct.checkReachable(dir); err != nil {
		return nil, err
	}
	if opt.DocRoot != "" {
		if err := acct.checkReachable(filepath.Join(docroot, "index.php")); err != nil {
			return nil, err
		}
	}
	if old, err := readState(dir); err == nil {
		if reason := deadReason(old); reason != "" {
			say("cleaning dead lab " + opt.Name + ": " + reason)
			if err := teardown(old.Dir, old.Processes); err != nil {
				return nil, err
			}
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lab name %q is already in use (%s); take it down with: phptune lab down %s, or choose another --name", opt.Name, dir, opt.Name)
		}
		return nil, err
	}

	l := &Lab{
		Name: opt.Name, Dir: dir, App: app.Name, State: "starting", OwnerPID: os.Getpid(),
		URL:            fmt.Sprintf("http://127.0.0.1:%d", port),
		FPMStatusPath:  fpmStatusPath,
		NginxStatusURL: fmt.Sprintf("http://127.0.0.1:%d%s", port, nginxStatusPath),
		DocRoot:        docroot,
		Config:         cfg,
		User:           acct.Name,
	}
	if l.DocRoot == "" {
		l.DocRoot = y.p("www")
	}
	l.ScriptFilename = filepath.Join(l.DocRoot, "index.php")
	if app.NeedsDB {
		l.MariaDBSocket = y.dbSocket()
	}
	defer func() {
		if err != nil {
			tail := l.logTail(8)
			if terr := teardown(l.Dir, l.Processes); terr != nil {
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
	for _, d := range []string{"run", "log", "tmp", "php", "app"} {
		if err := os.MkdirAll(y.p(d), 0o700); err != nil {
			return nil, err
		}
	}
	if opt.DocRoot == "" && app.Name != "wordpress" {
		if err := apps.Install(app.Name, l.DocRoot); err != nil {
			return nil, err
		}
	}

	var secrets Secrets
	if app.NeedsDB {
		secrets = Secrets{MariaDBRootPassword: mariadb.Password(), DBName: "app", DBUser: "app", DBPassword: mariadb.Password()}
		if app.Name == "wordpress" {
			secrets.DBName, secrets.DBUser = "wordpress", "wordpress"
			secrets.WPAdminUser, secrets.WPAdminPassword = "admin", mariadb.Password()
		}
		dbConf := fmt.Sprintf("<?php\n// Rendered by phptune: the lab database for the app.\nreturn ['socket' => %q, 'user' => %q, 'password' => %q, 'db' => %q];\n",
			y.dbSocket(), secrets.DBUser, secrets.DBPassword, secrets.DBName)
		if err := os.WriteFile(y.p("app", "db.php"), []byte(dbConf), 0o600); err != nil {
			return nil, err
		}
		if app.Name == "wordpress" {
			say("copying WordPress from " + wordpress.Source)
			acctDB := mariadb.Account{DB: secrets.DBName, User: secrets.DBUser, Password: secrets.DBPassword}
			if err := wordpress.Prepare(l.DocRoot, l.URL, y.dbSocket(), acctDB); err != nil {
				return nil, err
			}
		}
	}
	if err := l.render(fpmBin); err != nil {
		return nil, err
	}
	if err := acct.chownTree(dir); err != nil {
		return nil, err
	}
	if err := l.writeSecrets(secrets); err != nil {
		return nil, err
	}
	if err := l.testConfigs(ctx, acct, fpmBin, nginxBin); err != nil {
		return nil, err
	}

	if app.NeedsDB {
		say("initialising MariaDB")
		if err := l.runQuiet(ctx, acct, "mariadb", dbBin.InstallDB, dbBin.InstallArgs(y.p("mysql")), nil, 3*time.Minute); err != nil {
			return nil, fmt.Errorf("mariadb-install-db failed: %w", err)
		}
		if err := l.startMariaDB(ctx, acct, dbBin, ""); err != nil {
			return nil, err
		}
		if err := mariadb.Provision(ctx, y.dbSocket(), secrets.MariaDBRootPassword,
			mariadb.Account{DB: secrets.DBName, User: secrets.DBUser, Password: secrets.DBPassword}); err != nil {
			return nil, err
		}
		if err := os.WriteFile(y.clientConf(), []byte(mariadb.ClientConf(y.dbSocket(), "root", secrets.MariaDBRootPassword)), 0o600); err != nil {
			return nil, err
		}
	}
	if app.Name == "wordpress" {
		say("installing and seeding WordPress")
		script := y.p("app", "install.php")
		if err := os.WriteFile(script, wordpress.InstallScript(), 0o644); err != nil {
			return nil, err
		}
		if err := acct.chownTree(y.p("app")); err != nil {
			return nil, err
		}
		host := strings.TrimPrefix(l.URL, "http://")
		if err := l.runQuiet(ctx, acct, "app", fpmBin.CLI, []string{"-d", "memory_limit=512M", script, l.DocRoot, host, secrets.WPAdminPassword}, nil, 5*time.Minute); err != nil {
			return nil, fmt.Errorf("installing WordPress failed: %w", err)
		}
		if err := l.snapshot(ctx, dbBin, secrets.DBName); err != nil {
			return nil, err
		}
	}
	say("starting php-fpm")
	if err := l.startFPM(ctx, acct, fpmBin); err != nil {
		return nil, err
	}
	say("starting nginx")
	if err := l.startNginx(ctx, acct, nginxBin); err != nil {
		return nil, err
	}
	if err := l.smoke(ctx); err != nil {
		return nil, err
	}
	l.State, l.OwnerPID = "up", 0
	if err := l.writeState(); err != nil {
		return nil, err
	}
	return l, nil
}

func resolveApp(opt Options) (apps.App, string, error) {
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

// render writes every configuration file of the lab from l.Config.
func (l *Lab) render(fpmBin *phpfpm.Binary) error {
	y := layout{l.Dir}
	listen := y.fpmSocket()
	l.FPMListen = "unix:" + listen
	nginxPass := "unix:" + listen
	if l.Config["listen"] == "tcp" {
		// Keep the port across restarts so the URL users saw stays valid.
		port := 0
		if strings.HasPrefix(l.FPMListen, "tcp:") {
			port, _ = strconv.Atoi(l.FPMListen[strings.LastIndexByte(l.FPMListen, ':')+1:])
		}
		if port == 0 {
			var err error
			if port, err = freePort(); err != nil {
				return err
			}
		}
		listen = fmt.Sprintf("127.0.0.1:%d", port)
		l.FPMListen = "tcp:" + listen
		nginxPass = listen
	}
	app, _ := apps.Lookup(l.App)
	if l.App == "docroot" {
		app.FrontController = true
	}
	extra := []string{}
	if l.MariaDBSocket != "" {
		extra = append(extra, "env[PHPTUNE_DB_CONFIG] = "+y.p("app", "db.php"))
	}
	fpmConf := phpfpm.RenderConf(l.Config, phpfpm.Paths{
		Conf: y.p("php-fpm.conf"), PidFile: y.p("run", "php-fpm.pid"), Log: y.p("log", "php-fpm.log"),
		Listen: listen, StatusPath: fpmStatusPath, PingPath: fpmPingPath, ExtraPool: extra,
	})
	front := ""
	if app.FrontController {
		front = "/index.php"
	}
	port := strings.TrimPrefix(l.URL, "http://")
	nginxConf := nginx.Render(l.Config, nginx.Site{
		Prefix: l.Dir + "/", PidFile: y.p("run", "nginx.pid"), ErrorLog: y.p("log", "nginx-error.log"),
		AccessLog: y.p("log", "nginx-access.log"), TempDir: y.p("tmp"), Listen: port, DocRoot: l.DocRoot,
		FastCGI: nginxPass, FrontController: front, FPMStatusPath: fpmStatusPath, FPMPingPath: fpmPingPath,
		StubStatusPath: nginxStatusPath,
	})
	files := map[string]string{
		"php-fpm.conf":       fpmConf,
		"php/99-phptune.ini": phpfpm.RenderIni(l.Config),
		"nginx.conf":         nginxConf,
	}
	if l.MariaDBSocket != "" {
		files["my.cnf"] = mariadb.Render(l.Config, mariadb.Paths{
			DataDir: y.p("mysql"), Socket: y.dbSocket(), PidFile: y.p("run", "mariadb.pid"),
			Log: y.p("log", "mariadb.log"), TmpDir: y.p("tmp"),
		})
	}
	for name, content := range files {
		if err := os.WriteFile(y.p(name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// testConfigs runs php-fpm -t and nginx -t on the rendered files, as the
// stack user, and returns their own words when they refuse.
func (l *Lab) testConfigs(ctx context.Context, acct *account, fpmBin *phpfpm.Binary, nginxBin string) error {
	y := layout{l.Dir}
	out, err := l.output(ctx, acct, fpmBin.Path, fpmBin.TestArgs(y.p("php-fpm.conf")), phpfpm.Env(y.p("php")))
	if err != nil {
		return fmt.Errorf("php-fpm -t refused the configuration: %s", strings.TrimSpace(out))
	}
	out, err = l.output(ctx, acct, nginxBin, nginx.TestArgs(l.Dir+"/", y.p("nginx.conf"), y.p("log", "nginx-error.log")), nil)
	if err != nil {
		return fmt.Errorf("nginx -t refused the configuration: %s", strings.TrimSpace(out))
	}
	return nil
}

func (l *Lab) output(ctx context.Context, acct *account, bin string, args, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = acct.sysProcAttr()
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, env...)
	cmd.Dir = l.Dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// runQuiet runs a short-lived helper (mariadb-install-db, the WordPress
// installer) as the stack user with its output in the component's log; its
// pid is recorded while it runs so a crash of phptune leaves no orphan.
func (l *Lab) runQuiet(ctx context.Context, acct *account, component, bin string, args, env []string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	y := layout{l.Dir}
	logPath := y.logFiles(component)[len(y.logFiles(component))-1]
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = acct.sysProcAttr()
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + l.Dir}, env...)
	cmd.Dir = l.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	l.Processes = append(l.Processes, Process{Component: component + "-setup", PID: cmd.Process.Pid})
	if err := l.writeState(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		killAll(l.Dir, []int{cmd.Process.Pid}, 2*time.Second)
		err = <-done
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("%s did not finish within %v", filepath.Base(bin), limit)
		} else {
			err = ctx.Err()
		}
	}
	l.dropProcess(cmd.Process.Pid)
	if werr := l.writeState(); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("%v (log: %s)", err, logPath)
	}
	return nil
}

func (l *Lab) dropProcess(pid int) {
	out := l.Processes[:0]
	for _, p := range l.Processes {
		if p.PID != pid {
			out = append(out, p)
		}
	}
	l.Processes = out
}

// start launches a long-running server as the stack user in its own
// session, records its pid at once (before waiting for it to be ready) and
// reaps it in the background if it dies while phptune still runs.
func (l *Lab) start(acct *account, component, bin string, args, env []string) (*exec.Cmd, error) {
	y := layout{l.Dir}
	files := y.logFiles(component)
	logf, err := os.OpenFile(files[len(files)-1], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	if acct.root {
		_ = os.Chown(files[len(files)-1], int(acct.UID), int(acct.GID))
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = acct.sysProcAttr()
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, env...)
	cmd.Dir = l.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", component, err)
	}
	l.Processes = append(l.Processes, Process{Component: component, PID: cmd.Process.Pid})
	if err := l.writeState(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait() }()
	return cmd, nil
}

func (l *Lab) startMariaDB(ctx context.Context, acct *account, b *mariadb.Binaries, rootPassword string) error {
	cmd, err := l.start(acct, "mariadb", b.Server, b.ServerArgs(layout{l.Dir}.p("my.cnf")), nil)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return mariadb.WaitReady(wctx, l.MariaDBSocket, "root", rootPassword, func() bool { return alive(cmd.Process.Pid) })
}

func (l *Lab) startFPM(ctx context.Context, acct *account, b *phpfpm.Binary) error {
	y := layout{l.Dir}
	cmd, err := l.start(acct, "php-fpm", b.Path, b.Args(y.p("php-fpm.conf")), phpfpm.Env(y.p("php")))
	if err != nil {
		return err
	}
	network, addr := l.FPMAddr()
	return waitDial(ctx, "php-fpm", network, addr, cmd.Process.Pid)
}

func (l *Lab) startNginx(ctx context.Context, acct *account, bin string) error {
	y := layout{l.Dir}
	cmd, err := l.start(acct, "nginx", bin, nginx.Args(l.Dir+"/", y.p("nginx.conf"), y.p("log", "nginx-error.log")), nil)
	if err != nil {
		return err
	}
	return waitDial(ctx, "nginx", "tcp", strings.TrimPrefix(l.URL, "http://"), cmd.Process.Pid)
}

// FPMAddr returns php-fpm's socket as a network and address for net.Dial.
func (l *Lab) FPMAddr() (network, address string) {
	if strings.HasPrefix(l.FPMListen, "tcp:") {
		return "tcp", strings.TrimPrefix(l.FPMListen, "tcp:")
	}
	return "unix", strings.TrimPrefix(l.FPMListen, "unix:")
}

func waitDial(ctx context.Context, what, network, addr string, pid int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if !alive(pid) {
			return fmt.Errorf("%s exited while starting", what)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on %s within 30s: %v", what, addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// smoke fetches the front page once: a stack that starts but cannot serve
// its app is a failed lab, not an "up" one.
func (l *Lab) smoke(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", l.URL+"/", nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("fetching %s/: %v", l.URL, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("the app's front page %s/ answered %s: %.300s", l.URL, resp.Status, body)
	}
	return nil
}

func (l *Lab) writeSecrets(s Secrets) error {
	data, _ := json.MarshalIndent(s, "", "  ")
	return os.WriteFile(filepath.Join(l.Dir, "secrets.json"), data, 0o600)
}

// ReadSecrets returns the lab's credentials.
func (l *Lab) ReadSecrets() (*Secrets, error) {
	data, err := os.ReadFile(filepath.Join(l.Dir, "secrets.json"))
	if err != nil {
		return nil, err
	}
	var s Secrets
	return &s, json.Unmarshal(data, &s)
}

// snapshot dumps the seeded database so Reset can restore it (seed 004: a
// growing comments table silently slowed every later run).
func (l *Lab) snapshot(ctx context.Context, b *mariadb.Binaries, db string) error {
	y := layout{l.Dir}
	out, err := os.OpenFile(y.snapshot(), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, b.Dump, "--defaults-extra-file="+y.clientConf(), "--single-transaction", "--skip-dump-date", db)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mariadb-dump: %v: %s", err, stderr.String())
	}
	return out.Close()
}

// Reset restores the app's database to its state right after seeding.
func (l *Lab) Reset(ctx context.Context) error {
	y := layout{l.Dir}
	if _, err := os.Stat(y.snapshot()); err != nil {
		return fmt.Errorf("lab %s (app %s) has no database snapshot to reset to; only apps with a seeded database (wordpress) can be reset", l.Name, l.App)
	}
	b, err := mariadb.Find()
	if err != nil {
		return err
	}
	s, err := l.ReadSecrets()
	if err != nil {
		return err
	}
	in, err := os.Open(y.snapshot())
	if err != nil {
		return err
	}
	defer in.Close()
	cmd := exec.CommandContext(ctx, b.Client, "--defaults-extra-file="+y.clientConf(), s.DBName)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = in, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("restoring the snapshot: %v: %s", err, stderr.String())
	}
	return nil
}

// Apply restarts the lab's servers with cfg (the tuner's trial step). MariaDB
// restarts only when one of its knobs changes. Invalid configurations are
// refused before anything stops.
func (l *Lab) Apply(ctx context.Context, cfg knob.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	fpmBin, err := phpfpm.Find()
	if err != nil {
		return err
	}
	nginxBin, err := nginx.Find()
	if err != nil {
		return err
	}
	acct, err := stackAccount()
	if err != nil {
		return err
	}
	dbChanged := false
	for _, ch := range knob.Diff(l.Config, cfg) {
		if k, _ := knob.Lookup(ch.Knob); k.Component == knob.MariaDB {
			dbChanged = true
		}
	}
	old := l.Config
	l.Config = cfg.Clone()
	if err := l.render(fpmBin); err != nil {
		return err
	}
	if err := acct.chownTree(l.Dir + "/php"); err != nil {
		return err
	}
	for _, f := range []string{"php-fpm.conf", "nginx.conf", "my.cnf"} {
		_ = acct.chownPath(filepath.Join(l.Dir, f))
	}
	if err := l.testConfigs(ctx, acct, fpmBin, nginxBin); err != nil {
		l.Config = old
		_ = l.render(fpmBin)
		return err
	}
	stop := []string{"nginx", "php-fpm"}
	if dbChanged {
		stop = append(stop, "mariadb")
	}
	if err := l.stopComponents(stop...); err != nil {
		return err
	}
	if dbChanged {
		dbBin, err := mariadb.Find()
		if err != nil {
			return err
		}
		s, err := l.ReadSecrets()
		if err != nil {
			return err
		}
		if err := l.startMariaDB(ctx, acct, dbBin, s.MariaDBRootPassword); err != nil {
			return err
		}
	}
	if err := l.startFPM(ctx, acct, fpmBin); err != nil {
		return err
	}
	if err := l.startNginx(ctx, acct, nginxBin); err != nil {
		return err
	}
	return l.writeState()
}

func (a *account) chownPath(p string) error {
	if !a.root {
		return nil
	}
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	return os.Chown(p, int(a.UID), int(a.GID))
}

// stopComponents stops the named components' process groups and forgets them.
func (l *Lab) stopComponents(names ...string) error {
	var groups []int
	keep := l.Processes[:0]
	for _, p := range l.Processes {
		stop := false
		for _, n := range names {
			if p.Component == n {
				stop = true
			}
		}
		if stop {
			groups = append(groups, p.PID)
		} else {
			keep = append(keep, p)
		}
	}
	l.Processes = keep
	// Only the recorded groups: the lab's other servers keep running.
	if left := killAll("", groups, 15*time.Second); len(left) > 0 {
		return fmt.Errorf("processes %v did not stop", left)
	}
	return l.writeState()
}

// Down stops every process of the lab called name and removes its directory.
func Down(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	dir := filepath.Join(Root(), name)
	l, err := readState(dir)
	if errors.Is(err, ErrNoLab) {
		if _, serr := os.Stat(dir); serr != nil {
			return err
		}
		// A directory without state: an `up` killed before it wrote any.
		l = &Lab{Dir: dir}
	} else if err != nil {
		l = &Lab{Dir: dir}
	}
	if l.Dir == "" {
		l.Dir = dir
	}
	if l.State != "" {
		l.State = "stopping"
		_ = l.writeState()
	}
	return teardown(dir, l.Processes)
}

// teardown kills every process of the lab in dir and removes the directory.
func teardown(dir string, procs []Process) error {
	var groups []int
	for _, p := range procs {
		groups = append(groups, p.PID)
	}
	if left := killAll(dir, groups, 10*time.Second); len(left) > 0 {
		return fmt.Errorf("lab processes %v would not stop; the lab directory %s is kept", left, dir)
	}
	return os.RemoveAll(dir)
}

// Health describes a lab found under Root.
type Health struct {
	Lab    *Lab
	Status string // "up", "starting", "broken: ...", "cleaned: ..."
}

// List returns every lab under Root with its health. Labs that are dead (all
// processes gone, or left "starting" by a phptune that died) are cleaned as
// they are found, as `lab status` promises.
func List() ([]Health, error) {
	entries, err := os.ReadDir(Root())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Health
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(Root(), e.Name())
		l, err := readState(dir)
		if err != nil {
			l = &Lab{Name: e.Name(), Dir: dir}
		}
		h := Health{Lab: l, Status: healthOf(l)}
		if reason := deadReason(l); reason != "" {
			if terr := teardown(dir, l.Processes); terr != nil {
				h.Status = "dead, cleaning failed: " + terr.Error()
			} else {
				h.Status = "cleaned: " + reason
			}
		}
		out = append(out, h)
	}
	return out, nil
}

func healthOf(l *Lab) string {
	if l.State == "starting" {
		return "starting"
	}
	var dead []string
	for _, p := range l.Processes {
		if !alive(p.PID) {
			dead = append(dead, p.Component)
		}
	}
	if len(dead) > 0 {
		return "broken: " + strings.Join(dead, ", ") + " exited; see phptune lab logs " + l.Name + ", then phptune lab down " + l.Name
	}
	return l.State
}

// deadReason says why a lab should be cleaned, or "" when it is alive (or
// still being started by a live phptune).
func deadReason(l *Lab) string {
	if l.State == "" {
		return "no state recorded (an interrupted lab up)"
	}
	if (l.State == "starting" || l.State == "stopping") && !alive(l.OwnerPID) {
		return fmt.Sprintf("phptune (pid %d) died while it was %s the lab", l.OwnerPID, l.State)
	}
	if l.State == "up" {
		for _, p := range l.Processes {
			if alive(p.PID) {
				return ""
			}
		}
		return "all its processes have exited"
	}
	return ""
}

// Logs returns the logs of component (or all components) of the lab.
func (l *Lab) Logs(component string, lines int) (string, error) {
	comps := Components
	if component != "" {
		ok := false
		for _, c := range Components {
			ok = ok || c == component
		}
		if !ok {
			return "", fmt.Errorf("unknown component %q; choose one of %s", component, strings.Join(Components, ", "))
		}
		comps = []string{component}
	}
	var b strings.Builder
	for _, c := range comps {
		for _, f := range (layout{l.Dir}).logFiles(c) {
			data, err := os.ReadFile(f)
			if err != nil || len(data) == 0 {
				continue
			}
			fmt.Fprintf(&b, "==> %s <==\n%s\n", f, lastLines(string(data), lines))
		}
	}
	return b.String(), nil
}

// logTail is the end of every log, for error messages.
func (l *Lab) logTail(n int) string {
	s, _ := l.Logs("", n)
	return strings.TrimSpace(s)
}

var passwordRE = regexp.MustCompile(`(?i)(password\S*\s*[=:]\s*)\S+`)

func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	parts := strings.Split(s, "\n")
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	return passwordRE.ReplaceAllString(strings.Join(parts, "\n"), "${1}[hidden]")
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
