package site

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteText writes what a lab of s would copy, for a person. The
// application's password is never written (Secret); the caller escapes
// control characters (the host wrote most of this text).
func WriteText(w io.Writer, s *Site) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	writeVhost(p, s)
	writePool(p, s)
	if s.PHP != nil {
		writePHP(p, s.PHP)
	}
	writeApp(p, s)
	if s.DB != nil {
		writeDB(p, s.DB)
	}
	writeRemote(p, s.Remote)
	for _, n := range s.Notes {
		p("note        %s", n)
	}
}

// linef writes one line of WriteText's.
type linef func(format string, args ...any)

// writeVhost writes the web server's side: the vhost, its names, host,
// port and listens, the other vhosts of the same names, and the docroot.
func writeVhost(p linef, s *Site) {
	v := s.Vhost
	p("vhost       %s server at %s", v.Server, v.At())
	p("names       %s", strings.Join(v.Names, " "))
	scheme := "http"
	if s.HTTPS {
		scheme = "https (PHP sees HTTPS=on)"
	}
	host := s.Host
	if host == "" {
		host = "(none: give --host)"
	}
	p("host        %s, port %d, %s", host, s.Port, scheme)
	var ls []string
	for _, l := range v.Listens {
		if v.Server == "apache" {
			ls = append(ls, l.Addr+flag(l.TLS, " SSLEngine on")+flag(l.DefaultServer, " (the address's default vhost)"))
			continue
		}
		ls = append(ls, l.Addr+flag(l.TLS, " ssl")+flag(l.DefaultServer, " default_server"))
	}
	p("listens     %s", strings.Join(ls, ", "))
	for _, a := range s.Also {
		p("also        %s (%s; %s)", a.At(), strings.Join(a.Names, " "), describeOther(a))
	}
	writeAccessLogs(p, v.AccessLogs)
	for _, u := range v.Uncarried {
		p("vhost rule  %s", u)
	}
	switch {
	case s.DocRoot.Path == "":
		p("docroot     not read")
	case s.DocRoot.Error != "":
		p("docroot     %s: %s", s.DocRoot.Path, s.DocRoot.Error)
	default:
		d := s.DocRoot
		real := ""
		if d.Real != "" {
			real = " -> " + d.Real
		}
		more := ""
		if d.Partial {
			more = " (counting stopped)"
		}
		p("docroot     %s%s (root at %s): %d files, %s%s, owned by %s", d.Path, real, v.RootAt, d.Files, size(d.Bytes), more, d.Owner)
	}
}

// writeAccessLogs writes the vhost's access logs, each with its format
// and where it is written, or that it names none.
func writeAccessLogs(p linef, logs []AccessLog) {
	if len(logs) == 0 {
		p("access log  none named (none, off, a pipe, syslog or a path with a variable)")
	}
	for _, l := range logs {
		var more []string
		if l.Shared {
			more = append(more, "the server level's: other vhosts log there too")
		}
		if l.Conditional {
			more = append(more, "conditional: some requests only")
		}
		if !l.KnownFormat() {
			more = append(more, "--workload-from-log reads combined, vhost_combined and common")
		}
		note := ""
		if len(more) > 0 {
			note = "; " + strings.Join(more, "; ")
		}
		p("access log  %s (%s, at %s%s)", l.Path, l.Format, l.At, note)
	}
}

// writePool writes the site's php-fpm pool, or why none was found.
func writePool(p linef, s *Site) {
	if m := s.Vhost.ModPHP; m != nil && s.Pool == nil {
		mpm := m.MPM
		if mpm == "" {
			mpm = "none loaded"
		}
		p("pool        none: PHP runs in Apache via mod_php (%s, loaded at %s; MPM %s)", m.Module, m.LoadedAt, mpm)
		if len(s.Vhost.PHPValues) > 0 {
			p("  vhost     %s", keyValues(s.Vhost.PHPValues))
		}
		return
	}
	if s.Pool == nil {
		p("pool        none: %s", s.PoolError)
		if s.Vhost.Server == "apache" && s.Vhost.FastCGIAt != "" {
			p("  handler   proxy_fcgi to %s (%s)", strings.Join(s.Vhost.FastCGI, ", "), s.Vhost.FastCGIAt)
		}
		return
	}
	pl := s.Pool
	via := ""
	if s.Vhost.Server == "apache" {
		via = ", via proxy_fcgi (" + s.Vhost.FastCGIAt + ")"
	}
	p("pool        %s of php-fpm master %d (%s), %s%s", pl.Name, pl.MasterPID, pl.MasterConf, pl.File, via)
	p("  listen    %s (tied by %s)", pl.Listen, pl.Verified)
	p("  account   user %s, group %s", orNone(pl.User), orNone(pl.Group))
	p("  pm        %s", keyValues(pl.PM))
	if len(pl.Overrides) > 0 {
		p("  overrides %s", keyValues(pl.Overrides))
	}
	if len(pl.Env) > 0 {
		p("  env       %s (values not shown)", strings.Join(pl.Env, ", "))
	}
}

// writePHP writes the pool's PHP: its binary, ini files and settings.
func writePHP(p linef, c *PHPConfig) {
	p("php         %s (PHP %s)", c.Binary, c.Version)
	p("  php.ini   %s", c.Ini)
	p("  conf.d    %s: %d files", strings.Join(c.ScanDirs, ":"), len(c.IniFiles))
	var keys []string
	for k := range c.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		st := c.Settings[k]
		p("  %-28s %s (%s)", k, st.Value, st.From)
	}
	if !hasPrefixKey(c.Settings, "opcache.") {
		p("  opcache   no opcache.* setting: PHP's defaults")
	}
	for _, e := range c.Errors {
		p("  not read  %s", e)
	}
}

// writeApp writes the application, its database settings (never the
// password) and caches, or why it was not recognised.
func writeApp(p linef, s *Site) {
	if s.App == nil {
		p("app         %s", s.AppError)
		return
	}
	a := s.App
	p("app         %s (database settings from %s)", a.Name(), a.Source())
	pw := "none"
	if a.DB.Password.Set() {
		pw = a.DB.Password.String()
	}
	p("  database  %s, user %s, password %s, host %s", orNone(a.DB.Name), orNone(a.DB.User), pw, orNone(a.DB.Host))
	if e := a.DB.Engine(); e != "mysql" {
		p("  engine    %s (%s): a lab copies only MariaDB/MySQL", e, a.DB.Driver)
	}
	if a.TablePrefix != "" {
		p("  prefix    %s", a.TablePrefix)
	}
	for _, n := range a.NotLiteral {
		p("  not literal: %s is set by code; the lab cannot know its value", n)
	}
	if len(s.Caches) == 0 {
		p("  caches    none named")
	}
	for _, c := range s.Caches {
		addr := c.Addr
		if addr == "" {
			addr = "(default address)"
		}
		p("  cache     %s at %s (%s)", c.Kind, addr, c.Setting)
		if line := c.sizeLine(); line != "" {
			p("            %s", line)
		}
	}
}

// sizeLine says what production gives cache c, as discovery read it: its
// memory, its eviction policy and where they were read, or why not.
func (c Cache) sizeLine() string {
	switch {
	case c.SizeFrom != "" && c.MaxMemoryBytes > 0:
		policy := ""
		if c.Policy != "" {
			policy = ", " + c.Policy
		}
		return fmt.Sprintf("production's size %d MiB%s (%s)", c.MaxMemoryBytes>>20, policy, c.SizeFrom)
	case c.SizeFrom != "":
		return "production's size: " + c.SizeFrom
	case c.SizeNote != "":
		return "production's size not read: " + c.SizeNote
	}
	return ""
}

// writeDB writes the database server the app reaches and its size.
func writeDB(p linef, d *DBTarget) {
	if d.Endpoint.Network == "" {
		p("db          %s", d.Error)
		return
	}
	p("db          reaches %s", d.Endpoint)
	if d.Error != "" {
		p("  server    %s", d.Error)
		return
	}
	if d.ServerPID == 0 {
		p("  server    %s", d.How)
	} else {
		p("  server    MariaDB pid %d, socket %s, datadir %s (found by %s)", d.ServerPID, d.Socket, d.DataDir, d.How)
	}
	if d.SizeNote != "" {
		p("  size      %s", d.SizeNote)
	} else {
		p("  size      %s on disk in %d tables (its directory; data in a shared ibdata1 is not counted)", size(d.SizeBytes), d.Tables)
	}
}

func describeOther(v Vhost) string {
	switch {
	case v.Return != "":
		return "return " + v.Return
	case len(v.FastCGI) > 0:
		return "passes PHP to " + strings.Join(v.FastCGI, ", ")
	}
	return "root " + orNone(v.Root)
}

func flag(b bool, s string) string {
	if b {
		return s
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func keyValues(m map[string]string) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, k+" = "+m[k])
	}
	return strings.Join(out, ", ")
}

func hasPrefixKey(m map[string]Setting, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
