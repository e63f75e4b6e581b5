package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/apps"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/mariadb"
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
	w, _, err := webFor(l.Config)
	if err != nil {
		return err
	}
	l.setStatusURLs(w)
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
	extra := []string{}
	for _, kv := range l.PoolEnv() {
		name, value, _ := strings.Cut(kv, "=")
		extra = append(extra, "env["+name+"] = "+value)
	}
	fpmConf := phpfpm.RenderConf(l.Config, phpfpm.Paths{
		Conf: y.p("php-fpm.conf"), PidFile: y.p(fpmDir, "php-fpm.pid"), Log: y.p(fpmDir, "php-fpm.log"),
		Listen: listen, StatusPath: fpmStatusPath, PingPath: fpmPingPath, ExtraPool: extra,
	})
	front := frontOf(l)
	files := map[string]string{
		"php/00-build.ini":   buildIni(build),
		"php/99-phptune.ini": phpfpm.RenderIni(l.Config),
		w.conf():             w.render(l, nginxPass, front),
	}
	if knob.RunsFPM(l.Config.Server()) {
		files["php-fpm.conf"] = fpmConf
	} else {
		// PHP runs inside the web server: no php-fpm, no socket.
		l.FPMListen = ""
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

// frontOf is the lab's front controller, "/index.php", when its app
// routes every path through one (WordPress, a --docroot app), else "".
func frontOf(l *Lab) string {
	app, _ := apps.Lookup(l.App)
	if app.FrontController || l.App == "docroot" {
		return "/index.php"
	}
	return ""
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
