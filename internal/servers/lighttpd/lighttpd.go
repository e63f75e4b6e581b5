// Package lighttpd renders lighttpd's configuration for a lab from a
// knob.Config and says how to run Debian's lighttpd binary on it.
//
// The file is self-contained: nothing under /etc/lighttpd is read. It
// carries Debian 12's lighttpd.conf (its modules, HTTP/2 and parsing
// options, index files, denied suffixes, the MIME types its
// create-mime.conf.pl makes from /etc/mime.types) and its
// conf-available/15-fastcgi-php-fpm.conf (mod_fastcgi to php-fpm), with
// phptune's knobs applied, every path inside the lab, and no
// server.username: lighttpd runs unprivileged and never switches user.
package lighttpd

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/base/distrobin"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/fpmfront"
)

// ModulesDir is where Debian's lighttpd installs the modules it does not
// build in (mod_status, mod_accesslog ...).
var ModulesDir = "/usr/lib/lighttpd"

// MimeScript is Debian's script that writes mimetype.assign from
// /etc/mime.types (its lighttpd.conf includes its output).
const MimeScript = "/usr/share/lighttpd/create-mime.conf.pl"

// Find returns the path of the lighttpd binary or says how to install it.
func Find() (string, error) {
	return distrobin.Find("/usr/sbin/lighttpd", "apt-get install lighttpd, then disable its service: phptune needs only the binary")
}

// Site describes what lighttpd serves. Its FrontController, when set
// (e.g. "/index.php"), receives every request for a path that is not a
// file (url.rewrite-if-not-file); REQUEST_URI stays the original.
type Site struct {
	fpmfront.Site
	PidFile string
	// UploadDir holds request bodies lighttpd buffers to disk.
	UploadDir string
	// StatusPath is mod_status's page, StatisticsPath its counters
	// (mod_fastcgi's among them); loopback only.
	StatusPath     string
	StatisticsPath string
}

// Check reports the first path or address of s that lighttpd.conf
// cannot carry, so that a caller can refuse it before anything starts.
func (s Site) Check() error { return fpmfront.Check(render, s) }

// Render returns lighttpd.conf for site with cfg's lighttpd knobs. Every
// path is a quoted string. A site the file cannot carry renders as a
// refusal instead: a module whose name is the reason, which lighttpd
// fails to load naming it (a name with no existing directory in it, so
// no file is ever loaded), so `lighttpd -tt` fails and no server can
// start from the file.
func Render(cfg knob.Config, s Site) string {
	return refused.Render(render(cfg, s))
}

var refused = confpath.Refused{
	File: "lighttpd.conf",
	Lines: func(sentence string) string {
		// lighttpd checks its settings before it loads modules, and
		// wants a document root among them.
		return "server.document-root = \"/nonexistent\"\n" +
			"server.modules = ( " + quoteMessage(sentence) + " )\n"
	},
}

// quoteMessage quotes a message that confpath.Summary made printable: a
// quote is escaped, and a trailing backslash, which would escape the
// closing quote, gets a space after it.
func quoteMessage(msg string) string {
	msg = strings.ReplaceAll(msg, `"`, `\"`)
	if strings.HasSuffix(msg, `\`) {
		msg += " "
	}
	return `"` + msg + `"`
}

// parseOpts are Debian's server.http-parseopts (lighttpd.conf).
var parseOpts = [][2]string{
	{"header-strict", "enable"},
	{"host-strict", "enable"},
	{"host-normalize", "enable"},
	{"url-normalize-unreserved", "enable"},
	{"url-normalize-required", "enable"},
	{"url-ctrls-reject", "enable"},
	{"url-path-2f-decode", "enable"},
	{"url-path-dotseg-remove", "enable"},
}

func render(cfg knob.Config, s Site) (string, error) {
	r := &confpath.Refusals{File: "lighttpd.conf", Syntax: confpath.Lighttpd}
	q := r.Quote
	host, port := r.Listen("server.bind", s.Listen)
	backend := fastCGIBackend(r, s.FastCGI)

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Rendered by phptune: Debian's lighttpd.conf and 15-fastcgi-php-fpm.conf with the")
	w("# lab's paths and phptune's knobs. Self-contained: nothing under /etc/lighttpd is read.")
	modules := []string{"mod_indexfile", "mod_access", "mod_alias", "mod_redirect", "mod_rewrite", "mod_fastcgi", "mod_status"}
	if cfg.On("lighttpd.access_log") {
		modules = append(modules, "mod_accesslog")
	}
	modules = append(modules, "mod_staticfile")
	w("server.modules = (")
	for _, m := range modules {
		w("\t%q,", m)
	}
	w(")")
	w("server.document-root = %s", q("server.document-root (the document root)", s.DocRoot))
	w("server.upload-dirs = ( %s )", q("server.upload-dirs", s.UploadDir))
	w("server.errorlog = %s", q("server.errorlog", s.ErrorLog))
	w("server.pid-file = %s", q("server.pid-file", s.PidFile))
	w("server.bind = %q", host)
	w("server.port = %s", port)
	w("")
	writeKnobs(w, cfg)
	w("")
	w(`server.feature-flags += ("server.h2proto" => "enable")`)
	w(`server.feature-flags += ("server.h2c" => "enable")`)
	w(`server.feature-flags += ("server.graceful-shutdown-timeout" => 5)`)
	w("server.http-parseopts = (")
	for _, o := range parseOpts {
		w("\t%q => %q,", o[0], o[1])
	}
	w(")")
	w(`index-file.names = ( "index.php", "index.html" )`)
	w(`url.access-deny = ( "~", ".inc" )`)
	w(`static-file.exclude-extensions = ( ".php", ".pl", ".fcgi" )`)
	w("include_shell %q", MimeScript)
	if cfg.On("lighttpd.access_log") {
		w("accesslog.filename = %s", q("accesslog.filename", s.AccessLog))
	}
	if s.StatusPath != "" {
		w("status.status-url = %s", urlPath(r, "status.status-url", s.StatusPath))
	}
	if s.StatisticsPath != "" {
		w("status.statistics-url = %s", urlPath(r, "status.statistics-url", s.StatisticsPath))
	}
	w("")
	writePHP(w, r, s, backend)
	if err := r.Err(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// writeKnobs writes phptune's lighttpd knobs.
func writeKnobs(w func(format string, args ...any), cfg knob.Config) {
	w("# phptune's knobs")
	w("server.max-worker = %s", cfg["lighttpd.max_worker"])
	w("server.max-fds = %d", FDs(cfg))
	w("server.max-connections = %s", cfg["lighttpd.max_connections"])
	w("server.listen-backlog = %s", cfg["lighttpd.listen_backlog"])
	w("server.max-keep-alive-requests = %s", cfg["lighttpd.max_keep_alive_requests"])
	w("server.max-keep-alive-idle = %s", cfg["lighttpd.max_keep_alive_idle"])
}

// writePHP writes php-fpm as the FastCGI backend of .php scripts and of
// php-fpm's status pages (backend, fastCGIBackend's), the front
// controller, and the loopback-only rule of every status page.
func writePHP(w func(format string, args ...any), r *confpath.Refusals, s Site, backend string) {
	w("# PHP runs in php-fpm (Debian's conf-available/15-fastcgi-php-fpm.conf).")
	w("fastcgi.server = (")
	w("\t\".php\" => (( %s, \"broken-scriptfilename\" => \"enable\" )),", backend)
	for _, p := range []string{s.FPMStatusPath, s.FPMPingPath} {
		if p != "" {
			w("\t%s => (( %s, \"check-local\" => \"disable\" )),", urlPath(r, "fastcgi.server", p), backend)
		}
	}
	w(")")
	if s.FrontController != "" {
		// The original REQUEST_URI reaches PHP (WordPress's permalinks);
		// ${qsa} appends the query string.
		front := urlPath(r, "url.rewrite-if-not-file", s.FrontController)
		w("url.rewrite-if-not-file = ( \"\" => %s )", front[:len(front)-1]+`${qsa}"`)
	}
	var private []string
	for _, p := range []string{s.StatusPath, s.StatisticsPath, s.FPMStatusPath, s.FPMPingPath} {
		if p != "" {
			private = append(private, p)
		}
	}
	if len(private) > 0 {
		// The status pages answer loopback only (the lab listens on
		// nothing else; this holds if it ever does).
		w(`$HTTP["remoteip"] != "127.0.0.1" {`)
		for _, p := range private {
			w("\t$HTTP[\"url\"] == %s { url.access-deny = ( \"\" ) }", urlPath(r, "status path", p))
		}
		w("}")
	}
}

// urlPath quotes a URL path of phptune's own (a status page, the front
// controller) for the directive what, or refuses it unless it is an
// absolute path with no quote, backslash, '$' or '%'.
func urlPath(r *confpath.Refusals, what, p string) string {
	out, err := confpath.Lighttpd.QuoteValue(p)
	if err == nil && (!strings.HasPrefix(p, "/") || strings.ContainsAny(p, `"\$%`)) {
		err = fmt.Errorf("%s %q is not a plain absolute URL path", what, p)
	}
	if err != nil {
		r.Add(fmt.Errorf("lighttpd.conf %s: %w", what, err))
	}
	return out
}

// fastCGIBackend is php-fpm's address as a mod_fastcgi host's options.
func fastCGIBackend(r *confpath.Refusals, addr string) string {
	socket, host, port := r.FastCGI("fastcgi.server", addr)
	if socket != "" {
		return `"socket" => ` + socket
	}
	return fmt.Sprintf(`"host" => %q, "port" => %s`, host, port)
}

// FDs is server.max-fds for cfg: three descriptors per connection (a
// client's, php-fpm's, a file's), lighttpd's own ratio by default, and at
// least its default 4096.
func FDs(cfg knob.Config) int64 {
	return max(4096, 3*cfg.Int("lighttpd.max_connections"))
}

// CheckLimit refuses a configuration whose descriptors (FDs) exceed hard,
// the RLIMIT_NOFILE hard limit lighttpd will run under: unprivileged, it
// cannot raise its limit above it, and would then lower max-connections
// to half the descriptors it got, running another configuration than the
// one asked.
func CheckLimit(cfg knob.Config, hard uint64) error {
	if need := FDs(cfg); uint64(need) > hard {
		return fmt.Errorf("lighttpd.max_connections=%s needs server.max-fds=%d, above the descriptors a lab may open (hard limit %d, ulimit -Hn); lighttpd would lower it: use at most %d, or raise the hard limit",
			cfg["lighttpd.max_connections"], need, hard, hard/3)
	}
	return nil
}

// Args is lighttpd's command line: -D keeps it in the foreground, so the
// started process is lighttpd itself (with server.max-worker, the parent
// of its workers) and stays in the lab's process group.
func Args(conf string) []string {
	return []string{"-D", "-f", conf}
}

// TestArgs is `lighttpd -tt`: the file parsed and the modules loaded.
func TestArgs(conf string) []string {
	return []string{"-tt", "-f", conf}
}

// Env is the environment lighttpd starts with (include_shell runs
// Debian's perl script with it).
func Env() []string { return []string{"LANG=C"} }

// Fragment renders cfg's lighttpd knobs as a drop-in for a Debian host's
// /etc/lighttpd/conf-available/ (enabled with lighty-enable-mod). Debian's
// lighttpd.conf sets none of these keys, and lighttpd refuses a key set
// twice, so the drop-in adds them without editing its file. was, when
// non-nil, returns an end-of-line comment for a knob ("" when
// unchanged).
func Fragment(cfg knob.Config, was func(name string) string) string {
	if was == nil {
		was = func(string) string { return "" }
	}
	var b strings.Builder
	d := func(key string, value any, name string) {
		fmt.Fprintf(&b, "%s = %v%s\n", key, value, was(name))
	}
	d("server.max-worker", cfg["lighttpd.max_worker"], "lighttpd.max_worker")
	fmt.Fprintf(&b, "server.max-fds = %d\n", FDs(cfg))
	d("server.max-connections", cfg["lighttpd.max_connections"], "lighttpd.max_connections")
	d("server.listen-backlog", cfg["lighttpd.listen_backlog"], "lighttpd.listen_backlog")
	d("server.max-keep-alive-requests", cfg["lighttpd.max_keep_alive_requests"], "lighttpd.max_keep_alive_requests")
	d("server.max-keep-alive-idle", cfg["lighttpd.max_keep_alive_idle"], "lighttpd.max_keep_alive_idle")
	return b.String()
}
