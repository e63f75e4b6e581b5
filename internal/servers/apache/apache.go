// Package apache renders Apache's configuration for a lab from a
// knob.Config and says how to run Debian's apache2 binary on it.
//
// The file is self-contained: nothing under /etc/apache2 is read (Debian's
// apache2.conf needs the APACHE_* variables of its envvars file and writes
// to /var/log/apache2 and /run/apache2, which belong to root). It carries
// Debian's defaults — apache2.conf's timeouts and keep-alive, the MPM's
// mods-available/mpm_*.conf, the modules Debian enables by default that a
// PHP site uses (dir, mime, env, deflate, reqtimeout, status, authz) — with
// phptune's knobs applied and every path inside the lab, so Apache runs
// unprivileged. The MPM follows the server knob: event in front of php-fpm
// (mod_proxy_fcgi) for apache-event-fpm, prefork with PHP inside Apache's
// children (libphp8.2.so) for apache-prefork-modphp.
package apache

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/base/distrobin"
	"github.com/phptune/phptune/internal/model/knob"
)

// ModulesDir is where Debian's apache2-bin installs Apache's modules (and
// libapache2-mod-php8.2 its libphp8.2.so).
var ModulesDir = "/usr/lib/apache2/modules"

// Find returns the path of the apache2 binary or says how to install it.
func Find() (string, error) {
	return distrobin.Find("/usr/sbin/apache2", "apt-get install apache2-bin libapache2-mod-php8.2 — phptune needs only the binary and its modules, not Debian's apache2 service")
}

// FindModPHP returns Debian's PHP module for Apache (libphp8.2.so), the
// newest when several PHP versions are installed.
func FindModPHP() (string, error) {
	m, _ := filepath.Glob(filepath.Join(ModulesDir, "libphp*.so"))
	sort.Strings(m)
	if len(m) == 0 {
		return "", fmt.Errorf("Apache's PHP module (%s/libphp8.2.so) is not installed; run: phptune setup (or apt-get install libapache2-mod-php8.2)", ModulesDir)
	}
	return m[len(m)-1], nil
}

// Site describes what Apache serves.
type Site struct {
	ServerRoot string // the lab directory (apache2 -d)
	PidFile    string
	RuntimeDir string // DefaultRuntimeDir: lab-writable (run/)
	ErrorLog   string
	AccessLog  string
	Listen     string // 127.0.0.1:PORT
	DocRoot    string
	// FastCGI is php-fpm's address: "unix:/path" or "127.0.0.1:9000".
	// Empty with ModPHP.
	FastCGI string
	// ModPHP is the path of libphp8.2.so when PHP runs inside Apache
	// (server apache-prefork-modphp).
	ModPHP string
	// FrontController, when set (e.g. "/index.php"), receives every request
	// for a path that is not a file (FallbackResource), as WordPress's
	// pretty permalinks need.
	FrontController string
	// StatusPath is mod_status's page (loopback only).
	StatusPath string
	// FPMStatusPath and FPMPingPath are proxied to php-fpm (loopback only).
	FPMStatusPath string
	FPMPingPath   string
	// Env are NAME=VALUE pairs the app sees (SetEnv): with mod_php,
	// getenv() reads them, as a php-fpm pool's env[] does.
	Env []string
	// SiteHost, for a site lab, is the production site's names and the
	// port and scheme PHP sees there; Carried what the lab carries of
	// its vhost. Both nil for other labs.
	SiteHost *SiteHost
	Carried  *Carried
}

// SiteHost is a production site as a site lab's Apache answers for it:
// its names (the first is ServerName; the main server answers every
// Host), the port
// PHP sees in SERVER_PORT (UseCanonicalName), and HTTPS=on when
// production serves it over TLS (the lab itself speaks plain HTTP).
type SiteHost struct {
	Names []string
	Port  int
	HTTPS bool
}

// Check reports the first path or address of s that httpd.conf cannot
// carry, so that a caller can refuse it before anything starts.
func (s Site) Check() error {
	cfg := knob.Defaults()
	if s.ModPHP != "" {
		cfg[knob.ServerKnob] = knob.ApachePreforkModPHP
	} else {
		cfg[knob.ServerKnob] = knob.ApacheEventFPM
	}
	_, err := render(cfg, s)
	return err
}

// Render returns httpd.conf for site with cfg's Apache knobs (the MPM
// follows cfg's server knob). Every path is written as a quoted string. A
// site the file cannot carry renders as a refusal instead: Apache's Error
// directive with the reason (and the MPM Apache wants before it reads
// it), so `apache2 -t` fails naming it and no
// server can start from the file.
func Render(cfg knob.Config, s Site) string {
	return refused.Render(render(cfg, s))
}

var refused = confpath.Refused{
	File: "httpd.conf",
	// A "${" would be expanded, so it is broken up.
	Clean: func(msg string) string { return strings.ReplaceAll(msg, "${", "$ {") },
	// Apache reads the Error line only in a file that loads an MPM.
	Lines: func(sentence string) string {
		return "Error " + confpath.DoubleQuoted(sentence) + "\n" +
			"LoadModule mpm_event_module " + confpath.DoubleQuoted(filepath.Join(ModulesDir, "mod_mpm_event.so")) + "\n"
	},
}

// phpFiles is Debian's php8.2.conf / php8.2-fpm.conf pattern for PHP scripts.
const phpFiles = `".+\.ph(?:ar|p|tml)$"`

func render(cfg knob.Config, s Site) (string, error) {
	c := &httpdConf{Writer: confpath.Writer{Refusals: confpath.Refusals{File: "httpd.conf", Syntax: confpath.Apache}}}
	modPHP := cfg.Server() == knob.ApachePreforkModPHP
	if modPHP && s.ModPHP == "" {
		c.Add(fmt.Errorf("server=%s needs the path of Apache's PHP module", cfg.Server()))
	}
	if !modPHP && s.FastCGI == "" {
		c.Add(fmt.Errorf("server=%s needs php-fpm's address", cfg.Server()))
	}
	if err := checkAddress(s.Listen); err != nil {
		c.Add(fmt.Errorf("httpd.conf Listen: %w", err))
	}
	mpm := "event"
	if modPHP {
		mpm = "prefork"
	}
	c.server(cfg, s, mpm)
	c.mpm(cfg, mpm)
	c.modules(s, modPHP)
	c.site(cfg, s)
	c.php(s, modPHP)
	return c.Result()
}

// httpdConf is an httpd.conf being written, with the first refusal met
// writing it.
type httpdConf struct {
	confpath.Writer
}

// qv quotes the URL path of directive what, which must be absolute.
func (c *httpdConf) qv(what, v string) string {
	out, err := confpath.Apache.QuoteValue(v)
	if err == nil && !strings.HasPrefix(v, "/") {
		err = fmt.Errorf("%s %q is not an absolute URL path", what, v)
	}
	if err != nil {
		c.Add(fmt.Errorf("httpd.conf %s: %w", what, err))
	}
	return out
}

// mod writes the LoadModule line of Debian's module file.
func (c *httpdConf) mod(name, file string) {
	c.Line("LoadModule %s_module %s", name, c.Quote("LoadModule", filepath.Join(ModulesDir, file)))
}

// server writes the server-wide settings: paths, logs, keep-alive.
func (c *httpdConf) server(cfg knob.Config, s Site, mpm string) {
	w := c.Line
	w("# Rendered by phptune: Debian's Apache defaults (%s MPM) with the lab's paths and", mpm)
	w("# phptune's knobs. Self-contained: nothing under /etc/apache2 is read.")
	w("ServerRoot %s", c.Quote("ServerRoot", s.ServerRoot))
	w("DefaultRuntimeDir %s", c.Quote("DefaultRuntimeDir", s.RuntimeDir))
	w("PidFile %s", c.Quote("PidFile", s.PidFile))
	w("ErrorLog %s", c.Quote("ErrorLog", s.ErrorLog))
	w("LogLevel warn")
	w("Listen %s", s.Listen)
	c.serverName(s.SiteHost)
	w("ServerTokens OS")
	w("Timeout 300")
	w("KeepAlive %s", onOff(cfg.On("apache.keepalive")))
	w("MaxKeepAliveRequests %s", cfg["apache.max_keepalive_requests"])
	w("KeepAliveTimeout %s", cfg["apache.keepalive_timeout"])
	w("HostnameLookups Off")
	w("")
}

// mpm loads the MPM (prefork or event) and writes its process and thread
// limits.
func (c *httpdConf) mpm(cfg knob.Config, mpm string) {
	w := c.Line
	w("# The MPM (Debian's mods-available/mpm_%s.conf with phptune's knobs).", mpm)
	c.mod("mpm_"+mpm, "mod_mpm_"+mpm+".so")
	if mpm == "prefork" {
		w("StartServers %s", cfg["apache.prefork.start_servers"])
		w("MinSpareServers %s", cfg["apache.prefork.min_spare_servers"])
		w("MaxSpareServers %s", cfg["apache.prefork.max_spare_servers"])
		w("ServerLimit %s", cfg["apache.prefork.server_limit"])
	} else {
		threads := cfg.Int("apache.event.threads_per_child")
		w("StartServers %s", cfg["apache.event.start_servers"])
		w("MinSpareThreads %s", cfg["apache.event.min_spare_threads"])
		w("MaxSpareThreads %s", cfg["apache.event.max_spare_threads"])
		w("ServerLimit %s", cfg["apache.event.server_limit"])
		w("ThreadLimit %d", max(64, threads))
		w("ThreadsPerChild %d", threads)
	}
	w("MaxRequestWorkers %s", cfg["apache.max_request_workers"])
	w("MaxConnectionsPerChild %s", cfg["apache.max_connections_per_child"])
	w("")
}

// modules loads the modules the lab uses, PHP's (mod_php, or mod_proxy
// and mod_proxy_fcgi for php-fpm) among them.
func (c *httpdConf) modules(s Site, modPHP bool) {
	c.Line("# Modules (mod_log_config is built into Debian's apache2).")
	for _, m := range [][2]string{
		{"authz_core", "mod_authz_core.so"}, {"authz_host", "mod_authz_host.so"},
		{"dir", "mod_dir.so"}, {"mime", "mod_mime.so"}, {"env", "mod_env.so"},
		{"filter", "mod_filter.so"}, {"deflate", "mod_deflate.so"},
		{"reqtimeout", "mod_reqtimeout.so"}, {"status", "mod_status.so"},
		{"rewrite", "mod_rewrite.so"},
	} {
		c.mod(m[0], m[1])
	}
	if modPHP {
		c.Line("LoadModule php_module %s", c.Quote("LoadModule", s.ModPHP))
	} else {
		c.mod("proxy", "mod_proxy.so")
		c.mod("proxy_fcgi", "mod_proxy_fcgi.so")
	}
	c.carriedModules(s)
	c.Line("")
}

// site writes how the site is served: types, compression, the access
// log, the document root, its front controller, environment and status
// page.
func (c *httpdConf) site(cfg knob.Config, s Site) {
	w := c.Line
	w("TypesConfig /etc/mime.types")
	w("AddDefaultCharset Off")
	w("RequestReadTimeout header=20-40,MinRate=500 body=20,MinRate=500")
	w("AddOutputFilterByType DEFLATE text/html text/plain text/xml text/css text/javascript application/javascript application/x-javascript application/rss+xml application/xml")
	w(`LogFormat "%%h %%l %%u %%t \"%%r\" %%>s %%O \"%%{Referer}i\" \"%%{User-Agent}i\"" combined`)
	if cfg.On("apache.access_log") {
		w("CustomLog %s combined", c.Quote("CustomLog", s.AccessLog))
	}
	w("ExtendedStatus On")
	w("")
	w("DocumentRoot %s", c.Quote("DocumentRoot (the document root)", s.DocRoot))
	w("DirectoryIndex index.php index.html")
	w(`<FilesMatch "^\.ht">`)
	w("    Require all denied")
	w("</FilesMatch>")
	if s.FrontController != "" && s.Carried == nil {
		// mod_dir's FallbackResource: a request for no file is served by
		// the front controller, with REQUEST_URI kept (WordPress's
		// permalinks); .htaccess is not read (AllowOverride None). A site
		// lab routes as production does instead (carried).
		w("FallbackResource %s", c.qv("FallbackResource", s.FrontController))
	}
	c.carried(s)
	if s.SiteHost != nil && s.SiteHost.HTTPS {
		w("SetEnv HTTPS on")
	}
	for _, kv := range s.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !envName(name) {
			c.Add(fmt.Errorf("httpd.conf SetEnv: %q is not NAME=VALUE", kv))
			continue
		}
		w("SetEnv %s %s", name, c.Quote("SetEnv "+name, value))
	}
	if s.StatusPath != "" {
		w("<Location %s>", c.qv("Location", s.StatusPath))
		w("    SetHandler server-status")
		w("    Require ip 127.0.0.1")
		w("</Location>")
	}
}

// php hands PHP scripts to mod_php, or to php-fpm with its status and
// ping pages.
func (c *httpdConf) php(s Site, modPHP bool) {
	w := c.Line
	if modPHP {
		w("# PHP runs in Apache's children (Debian's mods-available/php8.2.conf).")
		w("<FilesMatch %s>", phpFiles)
		w("    SetHandler application/x-httpd-php")
		w("</FilesMatch>")
		return
	}
	handler, err := proxyHandler(s.FastCGI)
	c.Add(err)
	w("# PHP runs in php-fpm (Debian's conf-available/php8.2-fpm.conf).")
	w("<FilesMatch %s>", phpFiles)
	w("    SetHandler %s", handler)
	w("</FilesMatch>")
	for _, p := range []string{s.FPMStatusPath, s.FPMPingPath} {
		if p == "" {
			continue
		}
		w("<Location %s>", c.qv("Location", p))
		w("    Require ip 127.0.0.1")
		w("    SetHandler %s", handler)
		w("</Location>")
	}
}

// proxyHandler is mod_proxy_fcgi's handler for php-fpm's address.
func proxyHandler(addr string) (string, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		quoted, err := confpath.ApacheProxy.Quote(path)
		if err != nil {
			return "", fmt.Errorf("httpd.conf SetHandler (php-fpm's socket): %w", err)
		}
		return `"proxy:unix:` + quoted[1:len(quoted)-1] + `|fcgi://localhost"`, nil
	}
	if err := checkAddress(addr); err != nil {
		return "", fmt.Errorf("httpd.conf SetHandler (php-fpm's address): %w", err)
	}
	return `"proxy:fcgi://` + addr + `"`, nil
}

// checkAddress accepts a host:port written without quotes: letters,
// digits and . : [ ] - only.
func checkAddress(addr string) error {
	if addr == "" {
		return fmt.Errorf("the address is empty")
	}
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".:[]-", c) >= 0) {
			return fmt.Errorf("address %q has %q, which is not part of a host:port", addr, c)
		}
	}
	return nil
}

// envName accepts an environment variable name: letters, digits, _.
func envName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func onOff(on bool) string {
	if on {
		return "On"
	}
	return "Off"
}

// Args is apache2's command line: the lab's directory as ServerRoot, its
// file, in the foreground (-DFOREGROUND), so the started process is
// Apache's parent and stays in the lab's process group.
func Args(root, conf string) []string {
	return []string{"-d", root, "-f", conf, "-DFOREGROUND"}
}

// TestArgs is `apache2 -t` for the same file.
func TestArgs(root, conf string) []string {
	return []string{"-t", "-d", root, "-f", conf}
}

// Env is the environment apache2 starts with. With mod_php, iniDir is added
// to PHP's scan directories after Debian's conf.d for Apache
// (/etc/php/8.2/apache2/conf.d), as php-fpm's PHP_INI_SCAN_DIR does, so the
// lab's php.ini knobs apply to PHP inside Apache. Apache itself needs none
// of Debian's APACHE_* variables: the file names every path.
func Env(modPHP bool, iniDir string) []string {
	env := []string{"LANG=C"}
	if modPHP {
		env = append(env, "PHP_INI_SCAN_DIR=:"+iniDir)
	}
	return env
}

// Installed reports whether Debian's apache2 binary is present (tests skip
// without it).
func Installed() bool {
	_, err := os.Stat("/usr/sbin/apache2")
	return err == nil
}
