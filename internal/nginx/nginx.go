// Package nginx renders nginx's configuration for a lab from a knob.Config.
// The main file mirrors Debian's nginx.conf (worker_processes auto, 768
// connections, sendfile, gzip, an access log) with phptune's knobs applied and
// every path inside the lab directory, so nginx runs unprivileged.
package nginx

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/phptune/phptune/internal/knob"
)

// Find returns the path of the nginx binary or says how to install it.
func Find() (string, error) {
	for _, p := range []string{"/usr/sbin/nginx"} {
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("nginx is not installed; run: phptune setup (or apt-get install nginx)")
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
	// FrontController, when set (e.g. "/index.php"), receives every request
	// for a path that is not a file, as WordPress's pretty permalinks need.
	FrontController string
	FPMStatusPath   string // proxied to php-fpm, loopback only
	FPMPingPath     string
	StubStatusPath  string
}

// Render returns nginx.conf for site with cfg's nginx knobs.
func Render(cfg knob.Config, s Site) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Rendered by phptune: Debian's nginx.conf with the lab's paths and phptune's knobs.")
	w("worker_processes %s;", cfg["nginx.worker_processes"])
	w("pid %s;", s.PidFile)
	w("error_log %s;", s.ErrorLog)
	w("daemon off;")
	w("events {")
	w("    worker_connections %s;", cfg["nginx.worker_connections"])
	w("}")
	w("http {")
	w("    sendfile on;")
	w("    tcp_nopush on;")
	w("    types_hash_max_size 2048;")
	w("    include /etc/nginx/mime.types;")
	w("    default_type application/octet-stream;")
	if cfg.On("nginx.access_log") {
		w("    access_log %s;", s.AccessLog)
	} else {
		w("    access_log off;")
	}
	w("    gzip on;")
	w("    keepalive_timeout %s;", cfg["nginx.keepalive_timeout"])
	// Temporary files must live in the lab: the defaults under /var/lib/nginx
	// belong to root.
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w("    %s_temp_path %s/%s;", t, s.TempDir, t)
	}
	w("    server {")
	w("        listen %s backlog=%s;", s.Listen, cfg["nginx.listen_backlog"])
	w("        server_name localhost;")
	w("        root %s;", s.DocRoot)
	w("        index index.php index.html;")
	if s.StubStatusPath != "" {
		w("        location = %s { stub_status; allow 127.0.0.1; deny all; }", s.StubStatusPath)
	}
	for _, p := range []string{s.FPMStatusPath, s.FPMPingPath} {
		if p == "" {
			continue
		}
		w("        location = %s {", p)
		w("            allow 127.0.0.1; deny all;")
		writeFastCGI(w, s.FastCGI, p)
		w("        }")
	}
	if s.FrontController != "" {
		w("        location / { try_files $uri $uri/ %s?$args; }", s.FrontController)
	}
	w("        location ~ \\.php$ {")
	w("            try_files $uri =404;")
	writeFastCGI(w, s.FastCGI, "")
	w("        }")
	w("    }")
	w("}")
	return b.String()
}

// writeFastCGI writes the parameters of Debian's fastcgi_params, except that
// HTTP_HOST carries the port: with Debian's "$host" an app on a non-80 port
// (WordPress) sees a host without the port and redirects to itself forever.
func writeFastCGI(w func(string, ...any), pass, script string) {
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
		{"HTTP_HOST", "$host:$server_port"},
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
