package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/servers/phpfpm"
)

const (
	fpmStatusPath   = "/fpm-status"
	fpmPingPath     = "/fpm-ping"
	nginxStatusPath = "/nginx-status"
)

// render writes every configuration file of the lab from l.Config: owned by
// root, readable by the stack's group (mode 0640), in directories the stack
// cannot write.
func (l *Lab) render(acct *account) error {
	y := layout{l.Dir}
	_, build, err := phpFor(l.Config)
	if err != nil {
		return err
	}
	w, _, err := webFor(l.Config)
	if err != nil {
		return err
	}
	l.setStatusURLs(w)
	listens, err := l.poolListens()
	if err != nil {
		return err
	}
	extra := []string{}
	for _, kv := range l.PoolEnv() {
		name, value, _ := strings.Cut(kv, "=")
		extra = append(extra, "env["+name+"] = "+value)
	}
	siteLines, err := l.sitePoolLines(acct)
	if err != nil {
		return err
	}
	extra = append(extra, siteLines...)
	extra = append(extra, l.modPHPPoolLines()...)
	fpmConf := phpfpm.RenderConf(l.Config, phpfpm.Paths{
		Conf: y.p("php-fpm.conf"), PidFile: y.p(fpmDir, "php-fpm.pid"), Log: y.p(fpmDir, "php-fpm.log"),
		Listens: listens, StatusPath: fpmStatusPath, PingPath: fpmPingPath, ExtraPool: extra,
	})
	front := frontOf(l)
	files := map[string]string{
		"php/00-build.ini":    buildIni(build),
		"php/99-phptune.ini":  phpfpm.RenderIni(l.Config),
		"php/98-profiler.ini": l.profilerIni(),
		w.conf():              w.render(l, webPass(l.FPMListen), front),
	}
	if knob.RunsFPM(l.Config.Server()) {
		files["php-fpm.conf"] = fpmConf
	} else {
		// PHP runs inside the web server: no php-fpm, no socket.
		l.FPMListen, l.FPMPools = "", nil
	}
	if l.MariaDBSocket != "" && l.DBUser == "" {
		files["my.cnf"] = mariadb.Render(l.Config, mariadb.Paths{
			DataDir: y.p("mysql"), Socket: l.MariaDBSocket, PidFile: y.p("run", "mariadb.pid"),
			Log: y.p("log", "mariadb.log"), TmpDir: y.p("tmp"), TCP: l.dbTCP(),
		})
	}
	if l.MariaDBSocket != "" && l.DBUser != "" {
		// A site lab's MariaDB writes only directories of its own account
		// (siteDBDirs), and reads my.cnf through that account's group.
		conf := mariadb.Render(l.Config, mariadb.Paths{
			DataDir: y.p("mysql"), Socket: l.MariaDBSocket, PidFile: y.p(siteDBRunDir, "mysqld.pid"),
			Log: y.p(siteDBLogDir, "mariadb.log"), TmpDir: y.p(siteDBTmpDir), TCP: l.dbTCP(), BindAlso: l.dbBindAlso(),
			FilePriv: y.p(siteDBTmpDir),
		})
		if err := writeOwned(y.p("my.cnf"), []byte(conf), 0o640, l.DBGID); err != nil {
			return err
		}
	}
	for name, content := range files {
		if err := writeOwned(y.p(name), []byte(content), acct.readFileMode(), acct.group()); err != nil {
			return err
		}
	}
	if err := l.writeStatusScript(acct); err != nil {
		return err
	}
	if l.PHPProfiler == ProfilerCPU || l.PHPProfiler == ProfilerWall {
		return l.writeProfiler(acct)
	}
	return nil
}

// poolListens decides the address of every php-fpm pool (one unless
// fpm.pools says more) and records them in l.FPMListen and l.FPMPools:
// unix sockets in the lab's fpm directory, or loopback ports, kept across
// restarts so the URLs users saw stay valid.
func (l *Lab) poolListens() ([]string, error) {
	y := layout{l.Dir}
	n := l.Config.Pools()
	old := l.FPMPools
	if len(old) == 0 && l.FPMListen != "" {
		old = []string{l.FPMListen}
	}
	var listens, labels []string
	for i := range n {
		if l.Config["listen"] != "tcp" {
			listens = append(listens, y.fpmPoolSocket(i))
			labels = append(labels, "unix:"+y.fpmPoolSocket(i))
			continue
		}
		port := 0
		if i < len(old) && strings.HasPrefix(old[i], "tcp:") {
			port, _ = strconv.Atoi(old[i][strings.LastIndexByte(old[i], ':')+1:])
		}
		if port == 0 {
			var err error
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		listens = append(listens, fmt.Sprintf("127.0.0.1:%d", port))
		labels = append(labels, "tcp:"+listens[i])
	}
	l.FPMListen, l.FPMPools = labels[0], nil
	if n > 1 {
		l.FPMPools = labels
	}
	return listens, nil
}

// webPass is a pool address of the lab's (FPMListen's form) as web
// servers write it: "unix:/path" or 127.0.0.1:PORT.
func webPass(listen string) string {
	if a, ok := strings.CutPrefix(listen, "tcp:"); ok {
		return a
	}
	return listen
}

// FPMPoolListens is every pool's address in FPMListen's form, the first
// pool's first; empty where no php-fpm runs.
func (l *Lab) FPMPoolListens() []string {
	if len(l.FPMPools) > 0 {
		return l.FPMPools
	}
	if l.FPMListen == "" {
		return nil
	}
	return []string{l.FPMListen}
}

// frontOf is the lab's front controller, "/index.php", when its app
// routes every path through one (WordPress, a --docroot app), else "".
func frontOf(l *Lab) string {
	app, _ := apps.Lookup(l.App)
	if app.FrontController || l.App == "docroot" || l.App == SiteApp {
		return "/index.php"
	}
	return ""
}

// PoolEnv is the environment the lab's php-fpm pool gives the app
// (NAME=VALUE): where a built-in app finds its database settings. Another
// php-fpm serving the lab's app (a PHP build's training) sets the same.
func (l *Lab) PoolEnv() []string {
	if l.MariaDBSocket == "" || l.Sealed() {
		return nil
	}
	return []string{"PHPTUNE_DB_CONFIG=" + layout{l.Dir}.p("app", "db.php")}
}

// testConfigs runs php-fpm -t (when the lab runs php-fpm) and the web
// server's own check (nginx -t, apache2 -t) on the rendered files, as the
// stack user, and returns their own words when they refuse.
func (l *Lab) testConfigs(ctx context.Context, acct *account, fpmBin *phpfpm.Binary, w webServer, webBin string) error {
	y := layout{l.Dir}
	if knob.RunsFPM(l.Config.Server()) {
		out, err := l.output(ctx, acct, fpmBin.Path, fpmBin.TestArgs(y.p("php-fpm.conf")), l.fpmEnv())
		if err != nil {
			return fmt.Errorf("php-fpm -t refused the configuration: %s (%v)", strings.TrimSpace(out), err)
		}
	}
	out, err := l.output(ctx, acct, webBin, w.testArgs(l), w.env(l))
	if err != nil {
		return fmt.Errorf("%s -t refused the configuration: %s (%v)", w.component(), strings.TrimSpace(out), err)
	}
	return nil
}
