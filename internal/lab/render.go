package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/apps"
	"github.com/phptune/phptune/internal/mariadb"
	"github.com/phptune/phptune/internal/nginx"
	"github.com/phptune/phptune/internal/phpfpm"
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
	for _, kv := range l.PoolEnv() {
		name, value, _ := strings.Cut(kv, "=")
		extra = append(extra, "env["+name+"] = "+value)
	}
	fpmConf := phpfpm.RenderConf(l.Config, phpfpm.Paths{
		Conf: y.p("php-fpm.conf"), PidFile: y.p(fpmDir, "php-fpm.pid"), Log: y.p(fpmDir, "php-fpm.log"),
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
		"php/00-build.ini":   buildIni(build),
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
		if err := writeOwned(y.p(name), []byte(content), acct.readFileMode(), acct.group()); err != nil {
			return err
		}
	}
	return l.writeStatusScript(acct)
}

// PoolEnv is the environment the lab's php-fpm pool gives the app
// (NAME=VALUE): where a built-in app finds its database settings. Another
// php-fpm serving the lab's app (a PHP build's training) sets the same.
func (l *Lab) PoolEnv() []string {
	if l.MariaDBSocket == "" {
		return nil
	}
	return []string{"PHPTUNE_DB_CONFIG=" + layout{l.Dir}.p("app", "db.php")}
}

// testConfigs runs php-fpm -t and nginx -t on the rendered files, as the
// stack user, and returns their own words when they refuse.
func (l *Lab) testConfigs(ctx context.Context, acct *account, fpmBin *phpfpm.Binary, nginxBin string) error {
	y := layout{l.Dir}
	out, err := l.output(ctx, acct, fpmBin.Path, fpmBin.TestArgs(y.p("php-fpm.conf")), l.fpmEnv())
	if err != nil {
		return fmt.Errorf("php-fpm -t refused the configuration: %s (%v)", strings.TrimSpace(out), err)
	}
	out, err = l.output(ctx, acct, nginxBin, nginx.TestArgs(l.Dir+"/", y.p("nginx.conf"), y.p("log", "nginx-error.log")), nil)
	if err != nil {
		return fmt.Errorf("nginx -t refused the configuration: %s (%v)", strings.TrimSpace(out), err)
	}
	return nil
}
