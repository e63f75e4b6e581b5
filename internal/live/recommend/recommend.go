// Package recommend turns a recommended knob configuration into the files a
// user installs on a live Debian host, each in its component's own syntax: a
// php-fpm pool fragment, php.ini overrides, the configuration's web
// server's settings (an nginx snippet, an Apache or lighttpd drop-in, a
// Caddyfile, h2o.conf's top-level keys, Unit's JSON), a my.cnf fragment,
// and the kernel settings the host lacks for the recommendation (sysctl). Lines
// whose value differs from the starting configuration are marked with the
// value they replace. The package does no I/O.
package recommend

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/servers/caddy"
	"github.com/phptune/phptune/internal/servers/h2o"
	"github.com/phptune/phptune/internal/servers/lighttpd"
	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/servers/nginx"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// Target describes the host the files are for.
type Target struct {
	// PHPVersion is the distro's PHP branch, e.g. "8.2" (Debian 12).
	PHPVersion string
	// UsesDB adds my.cnf for apps that use MariaDB.
	UsesDB bool
	// Kernel is the host's kernel limits (the environment's, as read
	// before any --apply-sysctl) and Conns the concurrency the
	// recommendation is for: with them the files include SysctlFile.
	Kernel *results.KernelLimits
	Conns  int
}

// File names in the map Files returns.
const (
	PoolFile  = "php-fpm-pool.conf"
	IniFile   = "php.ini"
	NginxFile = "nginx.conf"
	MyCnfFile = "my.cnf"
	// ApacheFile is the Apache drop-in, for /etc/apache2/conf-available/.
	ApacheFile = "apache-phptune.conf"
	// UnitFile is NGINX Unit's application settings, JSON for its control
	// API.
	UnitFile = "unit-phptune.json"
	// LighttpdFile is the lighttpd drop-in, for
	// /etc/lighttpd/conf-available/99-phptune.conf.
	LighttpdFile = "lighttpd-phptune.conf"
	// CaddyFile is a Caddyfile to merge into /etc/caddy/Caddyfile.
	CaddyFile = "Caddyfile"
	// H2OFile holds the top-level keys of /etc/h2o/h2o.conf.
	H2OFile = "h2o.conf"
	// SysctlFile is the kernel settings, for /etc/sysctl.d/60-phptune.conf
	// (sysctl.FragmentPath), or a file of comments saying none is needed.
	SysctlFile = "sysctl-phptune.conf"
)

// WebFile names the web server's file of a recommendation for server.
func WebFile(server string) string {
	switch server {
	case knob.NginxFPM:
		return NginxFile
	case knob.LighttpdFPM:
		return LighttpdFile
	case knob.CaddyFPM:
		return CaddyFile
	case knob.H2OFPM:
		return H2OFile
	}
	return ApacheFile
}

// Files renders rec for t. start is the configuration the tune began from;
// changed values carry a comment with the value they replace.
//
// The web server's file is rec's server's (WebFile): nginx.conf for
// nginx-fpm, ApacheFile for the Apache servers, LighttpdFile, CaddyFile or
// H2OFile for the others. The pool fragment is written where
// php-fpm runs; with mod_php PHP's settings go to Apache's php.ini
// directory instead of php-fpm's.
func Files(start, rec knob.Config, t Target) map[string]string {
	if t.PHPVersion == "" {
		t.PHPVersion = "8.2"
	}
	out := map[string]string{IniFile: ini(start, rec, t)}
	if knob.RunsFPM(rec.Server()) {
		out[PoolFile] = pool(start, rec, t)
	}
	switch rec.Server() {
	case knob.NginxFPM:
		out[NginxFile] = nginxSnippet(start, rec, t)
	case knob.UnitPHP:
		out[UnitFile] = unitSettings(start, rec)
	case knob.LighttpdFPM:
		out[LighttpdFile] = lighttpdDropIn(start, rec, t)
	case knob.CaddyFPM:
		out[CaddyFile] = caddyfile(start, rec, t)
	case knob.H2OFPM:
		out[H2OFile] = h2oConf(start, rec, t)
	default:
		out[ApacheFile] = apacheDropIn(start, rec, t)
	}
	if t.UsesDB {
		out[MyCnfFile] = myCnf(start, rec)
	}
	if t.Kernel != nil {
		// listen(2) caps the recommended backlogs at somaxconn, and the
		// connections need ports and files: what the host lacks, or
		// that it lacks nothing.
		out[SysctlFile] = sysctl.Fragment(sysctl.Values(t.Kernel.Sysctl), sysctl.NeedOf([]knob.Config{rec}, t.Conns))
	}
	return out
}

// fpmSocket is where Debian's pool listens.
func fpmSocket(cfg knob.Config, t Target) string { return poolAddrs(cfg, t)[0] }

// poolAddrs is every pool's address (fpm.pools): Debian's socket or port
// for the first, the next ones beside it (php8.2-fpm-2.sock, port 9001).
func poolAddrs(cfg knob.Config, t Target) []string {
	var out []string
	for i := range cfg.Pools() {
		switch {
		case cfg["listen"] == "tcp":
			out = append(out, fmt.Sprintf("127.0.0.1:%d", 9000+i))
		case i == 0:
			out = append(out, "/run/php/php"+t.PHPVersion+"-fpm.sock")
		default:
			out = append(out, fmt.Sprintf("/run/php/php%s-fpm-%d.sock", t.PHPVersion, i+1))
		}
	}
	return out
}

// nginxPass is a pool address as nginx's fastcgi_pass or upstream server
// takes it.
func nginxPass(addr string) string {
	if strings.HasPrefix(addr, "/") {
		return "unix:" + addr
	}
	return addr
}

// was returns the end-of-line comment for a changed knob.
func was(start, rec knob.Config, name, comment string) string {
	if start[name] == rec[name] {
		return ""
	}
	return fmt.Sprintf("  %s phptune: was %s", comment, start[name])
}

// annotate appends was-comments to the lines of a rendered fragment whose
// directive belongs to a changed knob. directive maps a line's directive to
// its knob name.
func annotate(text string, directive map[string]string, start, rec knob.Config, comment string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		body := strings.TrimRight(line, "\n")
		key, _, ok := strings.Cut(strings.TrimSpace(body), "=")
		if name, known := directive[strings.TrimSpace(key)]; ok && known {
			body += was(start, rec, name, comment)
		}
		b.WriteString(body + "\n")
	}
	return b.String()
}

func pool(start, rec knob.Config, t Target) string {
	frag := phpfpm.RenderPool(rec, phpfpm.Paths{
		Listens: poolAddrs(rec, t), StatusPath: "/fpm-status", AsRoot: true, User: "www-data", PoolName: "www",
	})
	dirs := map[string]string{}
	for _, k := range knob.All() {
		if k.Component == knob.PHPFPM {
			dirs[k.Name] = k.Name
		}
	}
	dirs["listen"] = "listen"
	var b strings.Builder
	fmt.Fprintf(&b, "; phptune recommendation: php-fpm pool settings.\n")
	fmt.Fprintf(&b, "; Set these in /etc/php/%s/fpm/pool.d/www.conf (replacing the same directives),\n", t.PHPVersion)
	fmt.Fprintf(&b, "; then check and reload: php-fpm%s -t && systemctl reload php%s-fpm\n", t.PHPVersion, t.PHPVersion)
	if rec["listen"] != start["listen"] {
		where := map[string]string{
			knob.NginxFPM:       "nginx's fastcgi_pass",
			knob.ApacheEventFPM: "Apache's SetHandler proxy",
			knob.LighttpdFPM:    "lighttpd's fastcgi.server",
			knob.CaddyFPM:       "Caddy's php_fastcgi",
			knob.H2OFPM:         "h2o's fastcgi.connect",
		}[rec.Server()]
		fmt.Fprintf(&b, "; The socket changed: point %s at the new listen address (see %s).\n", where, WebFile(rec.Server()))
	}
	if n := rec.Pools(); n > 1 {
		fmt.Fprintf(&b, "; %s=%d: %d pools on sockets of their own, pm.max_children and the spares split between them\n", knob.PoolsKnob, n, n)
		fmt.Fprintf(&b, "; (the numbers below are each pool's share); nginx balances them with the upstream in %s.\n", NginxFile)
	}
	b.WriteString("; pm.status_path is what phptune observes; keep it reachable from loopback only.\n")
	b.WriteString(annotate(frag, dirs, start, rec, ";"))
	return b.String()
}

func ini(start, rec knob.Config, t Target) string {
	frag := phpfpm.RenderIni(rec)
	dirs := map[string]string{}
	for _, k := range knob.All() {
		if k.Component == knob.PHP {
			dirs[k.Name] = k.Name
		}
	}
	var b strings.Builder
	switch rec.Server() {
	case knob.UnitPHP:
		fmt.Fprintf(&b, "; phptune recommendation: php.ini overrides for PHP in NGINX Unit (its embed SAPI).\n")
		fmt.Fprintf(&b, "; Save as /etc/php/%s/embed/conf.d/99-phptune.ini (read after the distro's files),\n", t.PHPVersion)
		fmt.Fprintf(&b, "; then restart the application's processes:\n")
		fmt.Fprintf(&b, ";   curl --unix-socket /var/run/control.unit.sock http://localhost/control/applications/APP/restart\n")
		if rec["opcache.validate_timestamps"] == "off" {
			b.WriteString("; opcache.validate_timestamps is off: after deploying new PHP code, restart the application\n; (or call opcache_reset()) or the old code keeps running.\n")
		}
	case knob.ApachePreforkModPHP:
		fmt.Fprintf(&b, "; phptune recommendation: php.ini overrides for PHP inside Apache (mod_php).\n")
		fmt.Fprintf(&b, "; Save as /etc/php/%s/apache2/conf.d/99-phptune.ini (read after the distro's files),\n", t.PHPVersion)
		fmt.Fprintf(&b, "; then: apache2ctl configtest && systemctl reload apache2\n")
		if rec["opcache.validate_timestamps"] == "off" {
			b.WriteString("; opcache.validate_timestamps is off: after deploying new PHP code, reload apache2\n; (or call opcache_reset()) or the old code keeps running.\n")
		}
	default:
		fmt.Fprintf(&b, "; phptune recommendation: php.ini overrides for php-fpm.\n")
		fmt.Fprintf(&b, "; Save as /etc/php/%s/fpm/conf.d/99-phptune.ini (read after the distro's files),\n", t.PHPVersion)
		fmt.Fprintf(&b, "; then: systemctl reload php%s-fpm\n", t.PHPVersion)
		if rec["opcache.validate_timestamps"] == "off" {
			b.WriteString("; opcache.validate_timestamps is off: after deploying new PHP code, reload php-fpm\n; (or call opcache_reset()) or the old code keeps running.\n")
		}
	}
	_, rest, _ := strings.Cut(frag, "\n") // drop the lab's own header line
	b.WriteString(annotate(rest, dirs, start, rec, ";"))
	return b.String()
}

func nginxSnippet(start, rec knob.Config, t Target) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	c := func(name string) string { return was(start, rec, name, "#") }
	w("# phptune recommendation: nginx settings, in nginx's own syntax.")
	w("# Merge into /etc/nginx/nginx.conf and the PHP site's server block,")
	w("# then check and reload: nginx -t && systemctl reload nginx")
	w("worker_processes %s;%s", rec["nginx.worker_processes"], c("nginx.worker_processes"))
	if rec["nginx.worker_cpu_affinity"] == "auto" || start["nginx.worker_cpu_affinity"] == "auto" {
		w("worker_cpu_affinity %s;%s", rec["nginx.worker_cpu_affinity"], c("nginx.worker_cpu_affinity"))
	}
	if n := rec.Int("nginx.worker_rlimit_nofile"); n > 0 {
		w("worker_rlimit_nofile %d;%s", n, c("nginx.worker_rlimit_nofile"))
	}
	w("events {")
	w("    worker_connections %s;%s", rec["nginx.worker_connections"], c("nginx.worker_connections"))
	if rec.On("nginx.multi_accept") || start.On("nginx.multi_accept") {
		w("    multi_accept %s;%s", rec["nginx.multi_accept"], c("nginx.multi_accept"))
	}
	w("}")
	w("http {")
	w("    keepalive_timeout %s;%s", rec["nginx.keepalive_timeout"], c("nginx.keepalive_timeout"))
	pass := nginxPass(fpmSocket(rec, t))
	kept := rec.Int(knob.FastCGIKeepaliveKnob)
	if pools := poolAddrs(rec, t); len(pools) > 1 || kept > 0 {
		pass = nginx.UpstreamName
		w("    upstream %s {%s", nginx.UpstreamName, c(knob.PoolsKnob))
		for _, a := range pools {
			if len(pools) > 1 {
				w("        server %s %s;", nginxPass(a), nginx.UpstreamServerParams)
			} else {
				w("        server %s;", nginxPass(a))
			}
		}
		if kept > 0 {
			w("        keepalive %d;%s", kept, c(knob.FastCGIKeepaliveKnob))
		}
		w("    }")
	}
	if rec.On("nginx.access_log") {
		w("    # access_log: keep your own access_log line (phptune measured with logging on).%s", c("nginx.access_log"))
	} else {
		w("    access_log off;%s", c("nginx.access_log"))
	}
	w("    server {")
	reuse := ""
	if rec.On("nginx.reuseport") {
		reuse = " reuseport"
	}
	w("        listen 80 backlog=%s%s;%s%s", rec["nginx.listen_backlog"], reuse, c("nginx.listen_backlog"), c("nginx.reuseport"))
	w("        location ~ \\.php$ {")
	w("            fastcgi_pass %s;%s", pass, c("listen"))
	if kept > 0 {
		w("            fastcgi_keep_conn on;%s", c(knob.FastCGIKeepaliveKnob))
	}
	w("        }")
	w("    }")
	w("}")
	if n := rec.Int("nginx.listen_backlog"); n > 4096 {
		w("# A backlog above 4096 also needs sysctl net.core.somaxconn >= %d (see %s).", n, SysctlFile)
	}
	return b.String()
}

// apacheDropIn is rec's Apache settings as a conf-available/ drop-in
// (apache.Fragment) with how to install it and what it cannot say in
// Apache's syntax: the access log, and php-fpm's address with event.
func apacheDropIn(start, rec knob.Config, t Target) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	mpm, other := "event", "prefork"
	if !knob.RunsFPM(rec.Server()) {
		mpm, other = "prefork", "event"
	}
	w("# phptune recommendation: Apache settings (%s, %s MPM), in Apache's own syntax.", rec.Server(), mpm)
	w("# Save as /etc/apache2/conf-available/phptune.conf, then enable, check and restart:")
	w("#   a2enconf phptune && apache2ctl configtest && systemctl restart apache2")
	w("# (restart, not reload: Apache reads ServerLimit only at start). Debian reads")
	w("# conf-enabled/ after mods-enabled/mpm_%s.conf and apache2.conf's KeepAlive lines,", mpm)
	w("# so these values override Debian's without editing its files.")
	if mpm == "prefork" {
		w("# Needs the %s MPM with mod_php: a2dismod mpm_%s; a2disconf php%s-fpm; a2enmod mpm_prefork php%s", mpm, other, t.PHPVersion, t.PHPVersion)
		w("# Each child is a PHP worker: MaxRequestWorkers is PHP's concurrency.")
	} else {
		w("# Needs the %s MPM with php-fpm: a2dismod mpm_%s php%s; a2enmod mpm_event proxy_fcgi; a2enconf php%s-fpm", mpm, other, t.PHPVersion, t.PHPVersion)
		w("# PHP's concurrency is the pool's pm.max_children (%s).", PoolFile)
	}
	if rec.On("apache.access_log") != start.On("apache.access_log") || !rec.On("apache.access_log") {
		if rec.On("apache.access_log") {
			w("# Access log: phptune measured with it on; keep your site's CustomLog line.")
		} else {
			w("# Access log: off (was %s): remove or comment out the CustomLog line of the PHP site.", start["apache.access_log"])
		}
	}
	if knob.RunsFPM(rec.Server()) && rec["listen"] == "tcp" {
		w("# php-fpm listens on %s: in conf-available/php%s-fpm.conf use", fpmSocket(rec, t), t.PHPVersion)
		w("#   SetHandler \"proxy:fcgi://%s\"", fpmSocket(rec, t))
	}
	b.WriteString(apache.Fragment(rec, func(name string) string { return strings.TrimSpace(was(start, rec, name, "#")) }))
	return b.String()
}

// lighttpdDropIn is rec's lighttpd settings as a conf-available/ drop-in
// (lighttpd.Fragment) with how to install it and what the file does not
// hold: the access log and php-fpm's address.
func lighttpdDropIn(start, rec knob.Config, t Target) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# phptune recommendation: lighttpd settings (lighttpd-fpm), in lighttpd's own syntax.")
	w("# Save as /etc/lighttpd/conf-available/99-phptune.conf, then enable, check and restart:")
	w("#   lighty-enable-mod phptune && lighttpd -tt -f /etc/lighttpd/lighttpd.conf && systemctl restart lighttpd")
	w("# Debian's lighttpd.conf sets none of these keys (lighttpd refuses a key set twice).")
	w("# PHP runs in php-fpm: lighty-enable-mod fastcgi fastcgi-php-fpm (Debian's")
	w("# 15-fastcgi-php-fpm.conf); PHP's concurrency is the pool's pm.max_children (%s).", PoolFile)
	if rec.On("lighttpd.access_log") != start.On("lighttpd.access_log") {
		if rec.On("lighttpd.access_log") {
			w("# Access log: on (was off): lighty-enable-mod accesslog")
		} else {
			w("# Access log: off (was on): lighty-disable-mod accesslog")
		}
	}
	if rec["listen"] == "tcp" {
		w("# php-fpm listens on %s: in 15-fastcgi-php-fpm.conf use", fpmSocket(rec, t))
		w("#   \"host\" => \"127.0.0.1\", \"port\" => 9000 instead of \"socket\"")
	}
	b.WriteString(lighttpd.Fragment(rec, func(name string) string { return was(start, rec, name, "#") }))
	return b.String()
}

// caddyfile is rec's Caddy settings as a Caddyfile (caddy.Fragment) with
// how to merge it and what the file cannot say: GOMAXPROCS, which is the
// service's environment.
func caddyfile(start, rec knob.Config, t Target) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# phptune recommendation: Caddy settings (caddy-fpm), in the Caddyfile's own syntax.")
	w("# Merge into /etc/caddy/Caddyfile (the global options block first in the file, the")
	w("# php_fastcgi lines into your PHP site's block), then check and reload:")
	w("#   caddy validate --config /etc/caddy/Caddyfile && systemctl reload caddy")
	w("# PHP's concurrency is the pool's pm.max_children (%s).", PoolFile)
	if v := rec["caddy.gomaxprocs"]; v != "auto" || start["caddy.gomaxprocs"] != "auto" {
		if v == "auto" {
			w("# GOMAXPROCS: leave it unset (every CPU; was %s): systemctl edit caddy, remove the", start["caddy.gomaxprocs"])
			w("#   Environment=GOMAXPROCS line, then systemctl restart caddy")
		} else {
			w("# GOMAXPROCS=%s (was %s): systemctl edit caddy, add under [Service]", v, start["caddy.gomaxprocs"])
			w("#   Environment=GOMAXPROCS=%s", v)
			w("# then systemctl restart caddy (the environment is read at start).")
		}
	}
	upstream := "unix/" + fpmSocket(rec, t)
	if rec["listen"] == "tcp" {
		upstream = fpmSocket(rec, t)
	}
	b.WriteString(caddy.Fragment(rec, upstream, func(name string) string { return was(start, rec, name, "#") }))
	return b.String()
}

// h2oConf is rec's h2o settings as top-level keys of h2o.conf
// (h2o.Fragment) with how to install them and what they do not hold: the
// access log and php-fpm's address.
func h2oConf(start, rec knob.Config, t Target) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# phptune recommendation: h2o settings (h2o-fpm), in h2o's YAML.")
	w("# Set these keys at the top level of /etc/h2o/h2o.conf (replacing the same keys),")
	w("# then check and restart: h2o -t -c /etc/h2o/h2o.conf && systemctl restart h2o")
	w("# PHP runs in php-fpm: a path's file.custom-handler for .php with fastcgi.connect")
	if rec["listen"] == "tcp" {
		w("#   {host: 127.0.0.1, port: 9000, type: tcp}; PHP's concurrency is the pool's")
	} else {
		w("#   {port: %s, type: unix}; PHP's concurrency is the pool's", fpmSocket(rec, t))
	}
	w("#   pm.max_children (%s).", PoolFile)
	if rec.On("h2o.access_log") != start.On("h2o.access_log") {
		if rec.On("h2o.access_log") {
			w("# Access log: on (was off): keep Debian's access-log line.")
		} else {
			w("# Access log: off (was on): remove the access-log line.")
		}
	}
	if rec.Int("h2o.fastcgi_keepalive") > 0 {
		w("# fastcgi.timeout.keepalive keeps connections to php-fpm open: each holds a php-fpm")
		w("# worker while idle, so pm.max_children must cover them.")
	}
	b.WriteString(h2o.Fragment(rec, func(name string) string { return was(start, rec, name, "#") }))
	return b.String()
}

func myCnf(start, rec knob.Config) string {
	dirs := map[string]string{}
	for _, k := range knob.All() {
		if k.Component == knob.MariaDB {
			d := k.Directive
			if d == "" {
				d = strings.TrimPrefix(k.Name, "mariadb.")
			}
			dirs[d] = k.Name
		}
	}
	var b strings.Builder
	b.WriteString("# phptune recommendation: MariaDB server settings.\n")
	b.WriteString("# Save as /etc/mysql/mariadb.conf.d/99-phptune.cnf, then: systemctl restart mariadb\n")
	b.WriteString(annotate(mariadb.RenderFragment(rec), dirs, start, rec, "#"))
	return b.String()
}
