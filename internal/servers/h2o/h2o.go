// Package h2o renders h2o's configuration for a lab from a knob.Config and
// says how to run Debian's h2o binary on it.
//
// The file is self-contained (/etc/h2o is not read) and carries Debian
// 12's h2o.conf — its server name, an access log, the status handler on
// /server-status — with phptune's knobs applied, php-fpm behind
// fastcgi.connect (a custom handler for .php files, as h2o's own
// documentation runs PHP), every path inside the lab and quoted as a YAML
// string, and no `user`: h2o runs unprivileged and never switches user.
package h2o

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/base/distrobin"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/fpmfront"
)

// Find returns the path of the h2o binary or says how to install it.
func Find() (string, error) {
	return distrobin.Find("/usr/bin/h2o", "apt-get install h2o, then disable its service: phptune needs only the binary")
}

// Site describes what h2o serves. Its FrontController, when set
// ("/index.php"), receives every request for a path that is not a file: an
// internal redirect to /index.php/PATH, h2o's way for WordPress
// (REQUEST_URI stays the original).
type Site struct {
	fpmfront.Site
	PidFile string
	// TempDir holds request bodies h2o buffers to disk (temp-buffer-path).
	TempDir string
	// StatusPath is h2o's status handler (its JSON at StatusPath/json).
	StatusPath string
}

// Check reports the first path or address of s that h2o.conf cannot
// carry, so that a caller can refuse it before anything starts.
func (s Site) Check() error { return fpmfront.Check(render, s) }

// Render returns h2o.conf for site with cfg's h2o knobs. A site the file
// cannot carry renders as a refusal instead: a directive named by the
// reason, which h2o rejects as an unknown command naming it, so `h2o -t`
// fails and no server can start from the file.
func Render(cfg knob.Config, s Site) string {
	return refused.Render(render(cfg, s))
}

var refused = confpath.Refused{
	File:  "h2o.conf",
	Lines: func(sentence string) string { return confpath.DoubleQuoted(sentence) + ": ON\n" },
}

func render(cfg knob.Config, s Site) (string, error) {
	r := &confpath.Refusals{File: "h2o.conf", Syntax: confpath.H2OYAML}
	q := r.Quote
	// u quotes a URL path of phptune's own.
	u := func(what, p string) string { return `"` + r.PlainURLPath(what, p) + `"` }
	host, port := r.Listen("listen", s.Listen)
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	// connect writes fastcgi.connect for php-fpm at indent.
	connect := func(indent string) {
		w("%sfastcgi.connect:", indent)
		socket, h, p := r.FastCGI("fastcgi.connect", s.FastCGI)
		if socket != "" {
			w("%s  port: %s", indent, socket)
			w("%s  type: unix", indent)
			return
		}
		w("%s  host: %s", indent, h)
		w("%s  port: %s", indent, p)
		w("%s  type: tcp", indent)
	}
	w("# Rendered by phptune: Debian's h2o.conf with the lab's paths and phptune's knobs.")
	w("# Self-contained: /etc/h2o is not read.")
	w("server-name: \"h2o (Debian)\"")
	w("pid-file: %s", q("pid-file", s.PidFile))
	w("error-log: %s", q("error-log", s.ErrorLog))
	if cfg.On("h2o.access_log") {
		w("access-log: %s", q("access-log", s.AccessLog))
	}
	w("temp-buffer-path: %s", q("temp-buffer-path", s.TempDir))
	w("listen:")
	w("  host: %s", host)
	w("  port: %s", port)
	w("# phptune's knobs")
	if v := cfg["h2o.num_threads"]; v != "auto" && v != "" {
		w("num-threads: %s", v)
	}
	w("max-connections: %s", cfg["h2o.max_connections"])
	w("http1-request-timeout: %s", cfg["h2o.http1_request_timeout"])
	w("fastcgi.timeout.keepalive: %s", cfg["h2o.fastcgi_keepalive"])
	w("hosts:")
	w("  default:")
	w("    paths:")
	if s.StatusPath != "" {
		w("      %s:", u("status path", s.StatusPath))
		w("        status: ON")
	}
	for _, p := range []string{s.FPMStatusPath, s.FPMPingPath} {
		if p == "" {
			continue
		}
		// php-fpm finds its status and ping pages by SCRIPT_NAME, which
		// h2o leaves empty for a path handled by FastCGI as a whole.
		w("      %s:", u("fastcgi path", p))
		w("        setenv:")
		w("          SCRIPT_NAME: %s", u("fastcgi path", p))
		w("          SCRIPT_FILENAME: %s", u("fastcgi path", p))
		connect("        ")
	}
	w("      \"/\":")
	w("        file.dir: %s", q("file.dir (the document root)", s.DocRoot))
	w("        file.index: [\"index.php\", \"index.html\"]")
	w("        file.custom-handler:")
	w("          extension: .php")
	connect("          ")
	if s.FrontController != "" {
		if s.FrontController != "/index.php" {
			r.Add(fmt.Errorf("h2o.conf: the front controller is index.php, not %q", s.FrontController))
		}
		// A path that is no file goes to /index.php/PATH; PHP sees the
		// original REQUEST_URI (WordPress's permalinks).
		w("        redirect:")
		w("          url: /index.php/")
		w("          internal: YES")
		w("          status: 307")
	}
	if err := r.Err(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Args is h2o's command line: h2o's default worker mode stays in the
// foreground, one process (with a helper that annotates crash
// backtraces), in the lab's process group.
func Args(conf string) []string {
	return []string{"-c", conf}
}

// TestArgs is `h2o -t`: the file parsed and checked.
func TestArgs(conf string) []string {
	return []string{"-t", "-c", conf}
}

// Env is the environment h2o starts with.
func Env() []string { return []string{"LANG=C"} }

// Fragment renders cfg's h2o knobs as the top-level lines of a Debian
// host's /etc/h2o/h2o.conf (h2o reads one file; these keys go at its top
// level, replacing any there). was, when non-nil, returns an end-of-line
// comment for a knob ("" when unchanged).
func Fragment(cfg knob.Config, was func(name string) string) string {
	if was == nil {
		was = func(string) string { return "" }
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if v := cfg["h2o.num_threads"]; v != "auto" && v != "" {
		w("num-threads: %s%s", v, was("h2o.num_threads"))
	} else if c := was("h2o.num_threads"); c != "" {
		w("# num-threads: not set (one per CPU)%s", c)
	}
	w("max-connections: %s%s", cfg["h2o.max_connections"], was("h2o.max_connections"))
	w("http1-request-timeout: %s%s", cfg["h2o.http1_request_timeout"], was("h2o.http1_request_timeout"))
	w("fastcgi.timeout.keepalive: %s%s", cfg["h2o.fastcgi_keepalive"], was("h2o.fastcgi_keepalive"))
	return b.String()
}
