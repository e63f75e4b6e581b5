// Package caddy renders a Caddyfile for a lab from a knob.Config and says
// how to run Debian's caddy binary on it.
//
// The file is self-contained (Debian's /etc/caddy/Caddyfile is not read)
// and keeps Caddy's own defaults — Debian's Caddyfile only serves a static
// directory on :80 — with phptune's knobs applied: php_fastcgi to the
// lab's php-fpm, no admin endpoint (`admin off`: nothing listens but the
// lab's port), no automatic HTTPS (no certificate is made, no port 443),
// logs in the lab, and every path quoted with confpath.Caddyfile. Caddy
// runs unprivileged; what it writes for itself (autosave.json, its
// instance id) goes under the lab's tmp/, its HOME.
package caddy

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/base/distrobin"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/fpmfront"
)

// Find returns the path of the caddy binary or says how to install it.
func Find() (string, error) {
	return distrobin.Find("/usr/bin/caddy", "apt-get install caddy, then disable its service: phptune needs only the binary")
}

// Site describes what Caddy serves: no more than every server in front of
// php-fpm has. Its FrontController, when set ("/index.php"), receives every
// request for a path that is not a file (php_fastcgi's default try_files);
// without it a missing script is php-fpm's 404.
type Site struct {
	fpmfront.Site
}

// Check reports the first path or address of s that a Caddyfile cannot
// carry, so that a caller can refuse it before anything starts.
func (s Site) Check() error { return fpmfront.Check(render, s) }

// Render returns the Caddyfile for site with cfg's Caddy knobs. A site the
// file cannot carry renders as a refusal instead: an import of a file
// named by the reason, which does not exist (no wildcard, no directory of
// that name), so `caddy validate` fails naming it and no server can start
// from the file.
func Render(cfg knob.Config, s Site) string {
	return refused.Render(render(cfg, s))
}

var refused = confpath.Refused{
	File: "Caddyfile",
	Clean: func(msg string) string {
		return strings.Map(func(r rune) rune {
			// Caddy expands braces, and an import with a wildcard that
			// matches nothing is only a warning.
			if strings.ContainsRune("\"\\{}*?[]`", r) {
				return '_'
			}
			return r
		}, msg)
	},
	Lines: func(sentence string) string { return "import \"" + sentence + "\"\n" },
}

func render(cfg knob.Config, s Site) (string, error) {
	r := &confpath.Refusals{File: "Caddyfile", Syntax: confpath.Caddyfile}
	q, u := r.Quote, r.PlainURLPath
	host, port := r.Listen("bind", s.Listen)
	upstream := upstream(r, s.FastCGI)

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Rendered by phptune: Caddy's defaults with the lab's paths and phptune's knobs.")
	w("# Self-contained: /etc/caddy is not read. No admin endpoint, no automatic HTTPS.")
	w("{")
	w("\tadmin off")
	w("\tauto_https off")
	w("\tskip_install_trust")
	w("\tlog {")
	w("\t\toutput file %s", q("log (Caddy's own)", s.ErrorLog))
	w("\t}")
	w("\tservers {")
	w("\t\ttimeouts {")
	w("\t\t\tidle %ss", cfg["caddy.idle_timeout"])
	w("\t\t}")
	w("\t}")
	w("}")
	w("")
	w("http://:%s {", port)
	w("\tbind %s", host)
	w("\troot * %s", q("root (the document root)", s.DocRoot))
	if cfg.On("caddy.access_log") {
		w("\tlog {")
		w("\t\toutput file %s", q("log (access)", s.AccessLog))
		w("\t}")
	}
	var private []string
	for _, p := range []string{s.FPMStatusPath, s.FPMPingPath} {
		if p != "" {
			private = append(private, u("status path", p))
		}
	}
	for i, p := range private {
		// php-fpm finds its status and ping pages by SCRIPT_NAME, which
		// a path without .php does not get. Loopback only (the lab
		// listens on nothing else; this holds if it ever does): from
		// elsewhere the path is an ordinary one.
		w("\t@fpm%d {", i)
		w("\t\tpath %s", p)
		w("\t\tremote_ip 127.0.0.1")
		w("\t}")
		w("\thandle @fpm%d {", i)
		w("\t\treverse_proxy %s {", upstream)
		w("\t\t\ttransport fastcgi {")
		w("\t\t\t\tenv SCRIPT_NAME %s", p)
		w("\t\t\t\tenv SCRIPT_FILENAME %s", p)
		w("\t\t\t}")
		w("\t\t}")
		w("\t}")
	}
	w("\tphp_fastcgi %s {", upstream)
	if s.FrontController == "" {
		w("\t\ttry_files {path} {path}/index.php")
	} else if s.FrontController != "/index.php" {
		r.Add(fmt.Errorf("Caddyfile php_fastcgi: the front controller is index.php, not %q", s.FrontController))
	}
	if d := cfg.Int("caddy.lb_try_duration"); d > 0 {
		w("\t\tlb_try_duration %dms", d)
	}
	w("\t}")
	w("\tfile_server")
	w("}")
	if err := r.Err(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// upstream is php-fpm's address as php_fastcgi takes it.
func upstream(r *confpath.Refusals, addr string) string {
	socket, _, _ := r.FastCGI("php_fastcgi", addr)
	if socket != "" {
		return `"unix/` + socket[1:]
	}
	return addr
}

// Args is caddy's command line: `caddy run` stays in the foreground, one
// process, in the lab's process group.
func Args(conf string) []string {
	return []string{"run", "--config", conf, "--adapter", "caddyfile"}
}

// TestArgs is `caddy validate`: the file adapted and every module
// provisioned, nothing started.
func TestArgs(conf string) []string {
	return []string{"validate", "--config", conf, "--adapter", "caddyfile"}
}

// Env is the environment Caddy runs with: GOMAXPROCS unless the knob is
// "auto" (Go then uses every CPU the process may run on).
func Env(cfg knob.Config) []string {
	env := []string{"LANG=C"}
	if v := cfg["caddy.gomaxprocs"]; v != "" && v != "auto" {
		env = append(env, "GOMAXPROCS="+v)
	}
	return env
}

// Fragment renders cfg's Caddy knobs for a Debian host's
// /etc/caddy/Caddyfile: the global options block's idle timeout, and the
// PHP site's php_fastcgi and log lines, for the site at addr. was, when
// non-nil, returns an end-of-line comment for a knob ("" when
// unchanged). GOMAXPROCS is the service's environment, not the file's:
// Fragment says so in a comment.
func Fragment(cfg knob.Config, upstream string, was func(name string) string) string {
	if was == nil {
		was = func(string) string { return "" }
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("{")
	w("\tservers {")
	w("\t\ttimeouts {")
	w("\t\t\tidle %ss%s", cfg["caddy.idle_timeout"], was("caddy.idle_timeout"))
	w("\t\t}")
	w("\t}")
	w("}")
	w("")
	w(":80 {")
	w("\troot * /var/www/html")
	if cfg.On("caddy.access_log") {
		w("\tlog%s", was("caddy.access_log"))
	} else if c := was("caddy.access_log"); c != "" {
		w("\t# no log directive: no access log%s", c)
	}
	w("\tphp_fastcgi %s {", upstream)
	if d := cfg.Int("caddy.lb_try_duration"); d > 0 || was("caddy.lb_try_duration") != "" {
		w("\t\tlb_try_duration %dms%s", d, was("caddy.lb_try_duration"))
	}
	w("\t}")
	w("\tfile_server")
	w("}")
	return b.String()
}
