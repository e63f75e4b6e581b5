package confpath

import (
	"fmt"
	"net"
	"strings"
)

// Refusals keeps, while a renderer writes a server's configuration file for
// a site, the first reason the file cannot carry the site: a path its
// syntax cannot quote, or an address or URL path of phptune's own that is
// not of the form the file needs. A renderer writes on with what the
// methods return and, at the end, discards the file if Err is not nil.
type Refusals struct {
	// File names the file in messages ("Caddyfile", "h2o.conf").
	File string
	// Syntax quotes the file's paths.
	Syntax Syntax
	first  error
}

// Add keeps err if it is the first refusal; nil is ignored.
func (r *Refusals) Add(err error) {
	if err != nil && r.first == nil {
		r.first = err
	}
}

// Err returns the first refusal, or nil.
func (r *Refusals) Err() error { return r.first }

// Quote returns path p quoted in the file's syntax for the directive
// what, or refuses it.
func (r *Refusals) Quote(what, p string) string {
	out, err := r.Syntax.Quote(p)
	if err != nil {
		r.Add(fmt.Errorf("%s %s: %w", r.File, what, err))
	}
	return out
}

// PlainURLPath returns p, a URL path of phptune's own (a status page, the
// front controller), unquoted, or refuses it unless it is absolute and
// made only of ASCII letters, digits and "/-_.".
func (r *Refusals) PlainURLPath(what, p string) string {
	if !strings.HasPrefix(p, "/") || strings.ContainsFunc(p, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("/-_.", c))
	}) {
		r.Add(fmt.Errorf("%s %s: %q is not a plain absolute URL path", r.File, what, p))
	}
	return p
}

// Listen splits the address the server listens on, for the directive
// what, or refuses it unless it is a literal IP and a numeric port.
func (r *Refusals) Listen(what, addr string) (host, port string) {
	host, port, ok := ipPort(addr)
	if !ok {
		r.Add(fmt.Errorf("%s %s: %q is not IP:PORT", r.File, what, addr))
	}
	return host, port
}

// FastCGI splits php-fpm's address, "unix:PATH" or "IP:PORT", for the
// directive what: a socket's path comes back quoted in the file's syntax
// (socket is "" for a TCP address), an IP address and port as they are.
// Anything else is refused.
func (r *Refusals) FastCGI(what, addr string) (socket, host, port string) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return r.Quote(what+" (php-fpm's socket)", path), "", ""
	}
	host, port, ok := ipPort(addr)
	if !ok {
		r.Add(fmt.Errorf("%s %s: php-fpm's address %q is neither unix:PATH nor IP:PORT", r.File, what, addr))
	}
	return "", host, port
}

// ipPort splits addr into a literal IP address and a numeric port.
func ipPort(addr string) (host, port string, ok bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || net.ParseIP(host) == nil || port == "" || strings.Trim(port, "0123456789") != "" {
		return host, port, false
	}
	return host, port, true
}

// DoubleQuoted returns msg, a message Summary made printable, between
// double quotes with '\' and '"' escaped: a string in nginx's and YAML's
// syntax, for the line a refused file is rendered as.
func DoubleQuoted(msg string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(msg) + `"`
}

// Refused is how a server's configuration file is written when its
// renderer refused the site: a comment with the reason, then lines that the
// server's own check (nginx -t, caddy validate, h2o -t, lighttpd -tt,
// apache2 -t) rejects naming the reason, so that no server can start from
// the file.
type Refused struct {
	// File names the file in the comment ("Caddyfile", "h2o.conf").
	File string
	// Clean, when set, makes the reason (Summary's) safe for the file's
	// syntax first: Caddy expands braces, Apache "${".
	Clean func(msg string) string
	// Lines are the failing lines for sentence, "phptune refused to render
	// this file: " and the reason, each ended by a newline.
	Lines func(sentence string) string
}

// Render returns out, a rendered file, when err is nil, and otherwise the
// file f writes for the refusal err.
func (f Refused) Render(out string, err error) string {
	if err == nil {
		return out
	}
	msg := Summary(err)
	if f.Clean != nil {
		msg = f.Clean(msg)
	}
	return "# phptune refused to render this " + f.File + ": " + msg + "\n" +
		f.Lines("phptune refused to render this file: "+msg)
}

// Writer is a configuration file being written line by line, with the
// first refusal met writing it.
type Writer struct {
	Refusals
	b strings.Builder
}

// Line writes one line: format and args as fmt.Sprintf's.
func (w *Writer) Line(format string, args ...any) { fmt.Fprintf(&w.b, format+"\n", args...) }

// Result returns the file, or the first refusal.
func (w *Writer) Result() (string, error) {
	if err := w.Err(); err != nil {
		return "", err
	}
	return w.b.String(), nil
}
