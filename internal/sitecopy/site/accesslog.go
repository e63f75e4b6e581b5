package site

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/live/livehost"
)

// AccessLog is an access log a vhost writes: production's own traffic,
// which tune --workload-from-log can replay in a lab of the site.
type AccessLog struct {
	// Path is the file, absolute and cleaned (a relative one resolved
	// against nginx's prefix or Apache's ServerRoot).
	Path string `json:"path"`
	// Format is the format the server writes it in, as the configuration
	// names it: an Apache LogFormat nickname ("vhost_combined",
	// "combined", "common") or format string, an nginx log_format name
	// ("combined" when none is written).
	Format string `json:"format"`
	// At is where it is written ("file:line").
	At string `json:"at"`
	// Shared says it is the server level's (nginx's http block, Apache's
	// main server), which every vhost without a log of its own writes
	// too: it holds other sites' requests beside this one's.
	Shared bool `json:"shared,omitempty"`
	// Conditional says only some requests are logged (Apache's env= or
	// expr=, nginx's if=).
	Conditional bool `json:"conditional,omitempty"`
}

// replayFormats are the formats --workload-from-log reads
// (internal/traffic/accesslog).
var replayFormats = map[string]bool{"combined": true, "vhost_combined": true, "common": true}

// KnownFormat says whether l is written in a format --workload-from-log
// reads: nginx's and Apache's combined, Apache's vhost_combined and
// common (by name: a LogFormat or log_format that redefines one of these
// names is not looked at).
func (l AccessLog) KnownFormat() bool { return replayFormats[l.Format] }

// logPath is an access log's target as a file: absolute and cleaned,
// relative ones against base; ok is false for what is not a file phptune
// can name: "off", a pipe ("|..."), syslog, a path with a variable.
func logPath(target, base string) (string, bool) {
	switch {
	case target == "" || target == "off" || strings.HasPrefix(target, "|") || strings.HasPrefix(target, "syslog:"):
		return "", false
	case strings.Contains(target, "$"):
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(base, target)
	}
	return filepath.Clean(target), true
}

// nginxAccessLogs are the access logs of the server block ds: its own
// server-level access_log directives (a location's logs only part of its
// requests and is not counted), else the http level's, shared by every
// server without its own. An "access_log off" of its own means none.
// prefix is nginx's, against which relative paths resolve.
func nginxAccessLogs(ds, http []livehost.NginxDirective, prefix string) []AccessLog {
	shared := false
	own := named(ds, "access_log")
	if len(own) == 0 {
		own, shared = named(http, "access_log"), true
	}
	var out []AccessLog
	for _, d := range own {
		if len(d.Args) == 0 {
			continue
		}
		p, ok := logPath(d.Args[0], prefix)
		if !ok {
			continue
		}
		l := AccessLog{Path: p, Format: "combined", At: d.At(), Shared: shared}
		for i, a := range d.Args[1:] {
			switch {
			case strings.HasPrefix(a, "if="):
				l.Conditional = true
			case i == 0 && !strings.Contains(a, "="):
				l.Format = a
			}
		}
		out = append(out, l)
	}
	return out
}

// named is the directives of ds called name.
func named(ds []livehost.NginxDirective, name string) []livehost.NginxDirective {
	var out []livehost.NginxDirective
	for _, d := range ds {
		if d.Name == name && !d.IsBlock {
			out = append(out, d)
		}
	}
	return out
}

// apacheAccessLogs are the access logs of the <VirtualHost> a: its own
// CustomLog directives, else the main server's, which every vhost
// without its own writes too. Pipes and paths with an unexpanded
// variable are left out; relative paths resolve against ServerRoot.
func apacheAccessLogs(c *livehost.ApacheConfig, a livehost.ApacheVirtualHost) []AccessLog {
	logs, shared := a.AccessLogs, false
	if len(logs) == 0 {
		logs, shared = c.AccessLogs, true
	}
	var out []AccessLog
	for _, cl := range logs {
		p, ok := logPath(cl.File, "/etc/apache2")
		if !ok {
			continue
		}
		out = append(out, AccessLog{Path: p, Format: cl.Format, At: cl.At, Shared: shared, Conditional: cl.Conditional})
	}
	return out
}

// CheckAccessLog says why the access log l of a site on h cannot be
// replayed, nil when it can: it is written in a format
// --workload-from-log reads, and it is a regular file (not a link)
// in directories only root can write, so no other account (the site's
// own included) can swap it for a link to another file between this
// check and the read. Debian's logs are root's (/var/log/nginx,
// /var/log/apache2).
func (h Host) CheckAccessLog(l AccessLog) error {
	if !l.KnownFormat() {
		return fmt.Errorf("it is written in the format %q; --workload-from-log reads combined, vhost_combined and common", l.Format)
	}
	p := l.Path
	if h.Root != "" && h.Root != "/" {
		p = filepath.Join(h.Root, p)
	}
	if u := saferead.RootOnlyParents(p); u != nil {
		return fmt.Errorf("not read: %v", u)
	}
	f, err := saferead.Open(p, saferead.AnyOwner)
	if err != nil {
		return err
	}
	return f.Close()
}

// ErrNoAccessLog is ReplayLog's answer for a vhost without an access
// log it can name.
var ErrNoAccessLog = errors.New("its configuration names no access log file (none, off, a pipe, syslog or a path with a variable)")

// ReplayLog is the first of logs that CheckAccessLog passes on h; when
// none does, the first and why it cannot be replayed (ErrNoAccessLog
// when there are none).
func (h Host) ReplayLog(logs []AccessLog) (AccessLog, error) {
	if len(logs) == 0 {
		return AccessLog{}, ErrNoAccessLog
	}
	var first error
	for i, l := range logs {
		err := h.CheckAccessLog(l)
		if err == nil {
			return l, nil
		}
		if i == 0 {
			first = err
		}
	}
	return logs[0], first
}
