// Package nginx renders nginx's configuration for a lab from a knob.Config.
// The main file mirrors Debian's nginx.conf (worker_processes auto, 768
// connections, sendfile, gzip, an access log) with phptune's knobs applied and
// every path inside the lab directory, so nginx runs unprivileged.
package nginx

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/base/distrobin"
	"github.com/phptune/phptune/internal/model/knob"
)

// Find returns the path of the nginx binary or says how to install it.
func Find() (string, error) {
	return distrobin.Find("/usr/sbin/nginx", "apt-get install nginx")
}

// Site describes what nginx serves.
type Site struct {
	Prefix    string // lab directory: nginx -p
	PidFile   string
	ErrorLog  string
	AccessLog string
	TempDir   string
	Listen    string // 127.0.0.1:PORT
	DocRoot   string
	// FastCGI is php-fpm's address as nginx writes it: "unix:/path" or "127.0.0.1:9000".
	FastCGI string
	// FastCGIPools, with fpm.pools above 1, holds every pool's address in
	// that form, the first pool's first: PHP requests are balanced over
	// them by an upstream. The status and ping pages go to FastCGI.
	FastCGIPools []string
	// FrontController, when set (e.g. "/index.php"), receives every request
	// for a path that is not a file, as WordPress's pretty permalinks need.
	FrontController string
	FPMStatusPath   string // proxied to php-fpm, loopback only
	FPMPingPath     string
	StubStatusPath  string
	// Names, when set, are the server_name of a site lab (the live
	// vhost's names); SiteHost then says what PHP sees of the site.
	Names []string
	// UnixListen, when set, is a unix socket path the server also
	// listens on: how the host reaches a sealed lab.
	UnixListen string
	// SiteHost, when set, makes PHP see the site as production serves
	// it instead of the lab's loopback address (see SiteHost).
	SiteHost *SiteHost
}

// SiteHost is what a site's production server passes PHP about itself.
// With it, SERVER_NAME is Name and SERVER_PORT is Port (HTTP_HOST is
// always the Host header the client sent: the generator's --host); HTTPS is "on" and REQUEST_SCHEME
// "https" for a site served over TLS, although the lab itself speaks
// plain HTTP on loopback. A WordPress or Laravel site then builds its own
// URLs and answers its pages instead of redirecting to its home URL.
type SiteHost struct {
	Name  string // the vhost's server_name, e.g. "site.test"
	Port  int    // 80, or 443 for TLS
	HTTPS bool
}

// check refuses a name or port nginx.conf would not carry as a plain word.
func (h *SiteHost) check() error {
	if h.Name == "" || len(h.Name) > 253 {
		return fmt.Errorf("nginx site host: the name %q is empty or longer than a host name (253 bytes); give the vhost's server_name", h.Name)
	}
	for i := 0; i < len(h.Name); i++ {
		c := h.Name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return fmt.Errorf("nginx site host: the name %q has %q, which is not part of a host name; give the vhost's server_name", h.Name, c)
		}
	}
	if h.Port < 1 || h.Port > 65535 {
		return fmt.Errorf("nginx site host: port %d is not a TCP port (1 to 65535)", h.Port)
	}
	return nil
}

// Render returns nginx.conf for site with cfg's nginx knobs. Every path is
// written as a quoted string. A site that nginx.conf cannot carry (see
// Check) renders as a refusal instead: a comment with the reason and a
// directive nginx rejects, so `nginx -t` fails naming it and no server can
// start from the file.
func Render(cfg knob.Config, s Site) string {
	return refused.Render(render(cfg, s, cfg.On("nginx.access_log")))
}

var refused = confpath.Refused{
	File: "nginx.conf",
	// An unknown directive is the one error nginx prints with its name,
	// so the name is the message.
	Lines: func(sentence string) string { return confpath.DoubleQuoted(sentence) + ";\n" },
}

func render(cfg knob.Config, s Site, accessLog bool) (string, error) {
	c := &nginxConf{Writer: confpath.Writer{Refusals: confpath.Refusals{File: "nginx", Syntax: confpath.NginxLiteral}}}
	c.mainContext(cfg, s)
	c.http(cfg, s, accessLog)
	if err := checkAddress(s.Listen); err != nil {
		c.Add(fmt.Errorf("nginx listen: %w", err))
	}
	pass, err := fastCGIPass(s.FastCGI)
	c.Add(err)
	if s.SiteHost != nil {
		c.Add(s.SiteHost.check())
	}
	phpPass, keepConn, err := writeUpstream(c.Line, cfg, s)
	c.Add(err)
	c.server(cfg, s, pass, phpPass, keepConn)
	c.Line("}")
	return c.Result()
}

// nginxConf is an nginx.conf being written, with the first refusal met
// writing it.
type nginxConf struct {
	confpath.Writer
}

// q quotes a path with the rules of its directive what: syntax is
// NginxLiteral, or NginxVariables where nginx expands variables.
func (c *nginxConf) q(what, p string, syntax confpath.Syntax) string {
	out, err := syntax.Quote(p)
	if err != nil {
		c.Add(fmt.Errorf("nginx %s: %w", what, err))
	}
	return out
}

// mainContext writes the main context's directives and the events block.
func (c *nginxConf) mainContext(cfg knob.Config, s Site) {
	w, lit := c.Line, confpath.NginxLiteral
	w("# Rendered by phptune: Debian's nginx.conf with the lab's paths and phptune's knobs.")
	w("worker_processes %s;", cfg["nginx.worker_processes"])
	if cfg["nginx.worker_cpu_affinity"] == "auto" {
		w("worker_cpu_affinity auto;")
	}
	if n := cfg.Int("nginx.worker_rlimit_nofile"); n > 0 {
		w("worker_rlimit_nofile %d;", n)
	}
	w("pid %s;", c.q("pid", s.PidFile, lit))
	w("error_log %s;", c.q("error_log", s.ErrorLog, lit))
	w("daemon off;")
	w("events {")
	w("    worker_connections %s;", cfg["nginx.worker_connections"])
	if cfg.On("nginx.multi_accept") {
		w("    multi_accept on;")
	}
	w("}")
}

// http opens the http block and writes its settings.
func (c *nginxConf) http(cfg knob.Config, s Site, accessLog bool) {
	w := c.Line
	w("http {")
	w("    sendfile on;")
	w("    tcp_nopush on;")
	w("    types_hash_max_size 2048;")
	w("    include /etc/nginx/mime.types;")
	w("    default_type application/octet-stream;")
	if accessLog {
		w("    access_log %s;", c.q("access_log", s.AccessLog, confpath.NginxVariables))
	} else {
		w("    access_log off;")
	}
	w("    gzip on;")
	// The Host header as sent, or the lab's address without one (HTTP/1.0).
	w("    map $http_host $phptune_http_host { \"\" $host:$server_port; default $http_host; }")
	w("    keepalive_timeout %s;", cfg["nginx.keepalive_timeout"])
	// Temporary files must live in the lab: the defaults under /var/lib/nginx
	// belong to root.
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w("    %s_temp_path %s;", t, c.q(t+"_temp_path", s.TempDir+"/"+t, confpath.NginxLiteral))
	}
}

// server writes the site's server block: its listens and names, the
// status pages (php-fpm's through pass), the front controller, and PHP
// through phpPass.
func (c *nginxConf) server(cfg knob.Config, s Site, pass, phpPass string, keepConn bool) {
	w, lit, vars := c.Line, confpath.NginxLiteral, confpath.NginxVariables
	w("    server {")
	reuse := ""
	if cfg.On("nginx.reuseport") {
		reuse = " reuseport"
	}
	w("        listen %s backlog=%s%s;", s.Listen, cfg["nginx.listen_backlog"], reuse)
	if s.UnixListen != "" {
		sock := c.q("listen", s.UnixListen, lit)
		if sock != "" {
			sock = `"unix:` + sock[1:]
		}
		w("        listen %s backlog=%s;", sock, cfg["nginx.listen_backlog"])
	}
	names := "localhost"
	if len(s.Names) > 0 {
		for _, n := range s.Names {
			if err := checkAddress(n); err != nil {
				c.Add(fmt.Errorf("nginx server_name: %w", err))
			}
		}
		names = strings.Join(s.Names, " ")
	}
	w("        server_name %s;", names)
	w("        root %s;", c.q("root (the document root)", s.DocRoot, vars))
	w("        index index.php index.html;")
	if s.StubStatusPath != "" {
		w("        location = %s { stub_status; %sdeny all; }", c.q("location", s.StubStatusPath, lit), allowLocal(s))
	}
	for _, p := range []string{s.FPMStatusPath, s.FPMPingPath} {
		if p == "" {
			continue
		}
		w("        location = %s {", c.q("location", p, lit))
		w("            %sdeny all;", allowLocal(s))
		writeFastCGI(w, pass, c.q("fastcgi_param", p, vars), nil)
		w("        }")
	}
	if s.FrontController != "" {
		// The quoted path with the query string appended inside the quotes.
		front := c.q("try_files", s.FrontController, vars)
		if front != "" {
			front = front[:len(front)-1] + `?$args"`
		}
		w("        location / { try_files $uri $uri/ %s; }", front)
	}
	w("        location ~ \\.php$ {")
	w("            try_files $uri =404;")
	writeFastCGI(w, phpPass, "", s.SiteHost)
	if keepConn {
		w("            fastcgi_keep_conn on;")
	}
	w("        }")
	w("    }")
}

// allowLocal is the allow directives of the status pages: loopback, and
// the unix socket when the server listens on one (a sealed lab's way in
// from the host).
func allowLocal(s Site) string {
	if s.UnixListen != "" {
		return "allow 127.0.0.1; allow unix:; "
	}
	return "allow 127.0.0.1; "
}

// fastCGIPass returns php-fpm's address for fastcgi_pass: a unix socket
// path quoted (nginx takes variables there), or a host:port.
func fastCGIPass(addr string) (string, error) {
	return quotedAddr("fastcgi_pass", addr, confpath.NginxVariables)
}

// quotedAddr is addr ("unix:/path" or host:port) as directive takes it:
// the socket path quoted in syntax's rules, "unix:" inside the quotes.
func quotedAddr(directive, addr string, syntax confpath.Syntax) (string, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		quoted, err := syntax.Quote(path)
		if err != nil {
			return "", fmt.Errorf("nginx %s: %w", directive, err)
		}
		return `"unix:` + quoted[1:], nil
	}
	if err := checkAddress(addr); err != nil {
		return "", fmt.Errorf("nginx %s: %w", directive, err)
	}
	return addr, nil
}

// checkAddress accepts a host:port (or [v6]:port, *:port, a port) written
// without quotes: letters, digits and . : [ ] * - only.
func checkAddress(addr string) error {
	if addr == "" {
		return fmt.Errorf("the address is empty")
	}
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".:[]*-", c) >= 0) {
			return fmt.Errorf("address %q has %q, which is not part of a host:port", addr, c)
		}
	}
	return nil
}

// writeFastCGI writes the parameters of Debian's fastcgi_params, except that
// HTTP_HOST is the Host header as the client sent it, port included
// ($phptune_http_host, see render): with Debian's "$host" an app on a
// non-80 port (WordPress) sees a host without the port and redirects to
// itself forever, and with "$host:$server_port" a site asked for by its
// own name (--host site.test) sees the lab's port and redirects to its
// home URL. A request without a Host header gets $host:$server_port.
// script, when set, is a quoted path that is SCRIPT_FILENAME and SCRIPT_NAME.
// site, when set (and checked), passes what the site's production server
// would: the client's Host header as it came, the site's name, port and
// HTTPS.
func writeFastCGI(w func(string, ...any), pass, script string, site *SiteHost) {
	params := [][2]string{
		{"QUERY_STRING", "$query_string"},
		{"REQUEST_METHOD", "$request_method"},
		{"CONTENT_TYPE", "$content_type"},
		{"CONTENT_LENGTH", "$content_length"},
		{"REQUEST_URI", "$request_uri"},
		{"DOCUMENT_URI", "$document_uri"},
		{"DOCUMENT_ROOT", "$document_root"},
		{"SERVER_PROTOCOL", "$server_protocol"},
		{"REQUEST_SCHEME", "$scheme"},
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "nginx/$nginx_version"},
		{"REMOTE_ADDR", "$remote_addr"},
		{"REMOTE_PORT", "$remote_port"},
		{"SERVER_ADDR", "$server_addr"},
		{"SERVER_PORT", "$server_port"},
		{"SERVER_NAME", "$server_name"},
		{"REDIRECT_STATUS", "200"},
		{"HTTP_HOST", "$phptune_http_host"},
	}
	if site != nil {
		scheme := "http"
		if site.HTTPS {
			scheme = "https"
		}
		for i, p := range params {
			switch p[0] {
			case "SERVER_NAME":
				params[i][1] = site.Name
			case "SERVER_PORT":
				params[i][1] = strconv.Itoa(site.Port)
			case "REQUEST_SCHEME":
				params[i][1] = scheme
			}
		}
		if site.HTTPS {
			params = append(params, [2]string{"HTTPS", "on"})
		}
	}
	if script != "" {
		params = append(params, [2]string{"SCRIPT_FILENAME", script}, [2]string{"SCRIPT_NAME", script})
	} else {
		params = append(params, [2]string{"SCRIPT_FILENAME", "$document_root$fastcgi_script_name"}, [2]string{"SCRIPT_NAME", "$fastcgi_script_name"})
	}
	for _, p := range params {
		w("            fastcgi_param %s %s;", p[0], p[1])
	}
	w("            fastcgi_pass %s;", pass)
}

// Args is nginx's command line: -e keeps nginx from opening the system error
// log before it has read the configuration.
func Args(prefix, conf, errorLog string) []string {
	return []string{"-p", prefix, "-c", conf, "-e", errorLog}
}

// TestArgs is `nginx -t` for the same files.
func TestArgs(prefix, conf, errorLog string) []string {
	return append([]string{"-t", "-q"}, Args(prefix, conf, errorLog)...)
}
