package livehost

import (
	"path/filepath"
	"strings"
)

// What a lab carries of an Apache site's configuration: the directives
// that decide which script answers a URL and whether the docroot's
// .htaccess files apply, copied as production wrote them so the lab's
// Apache routes requests as production's does. Everything else (logs,
// TLS, proxies, aliases to paths outside the docroot, access rules by
// address) is production's business and stays out.

// ApacheLine is one directive as written (continuations joined,
// variables expanded) and where.
type ApacheLine struct {
	Text string `json:"text"`
	At   string `json:"at"`
}

// ApacheDirectory is a <Directory PATH> block: its path as written and
// the lines a lab carries of it (carriedInDirectory); Dropped counts the
// others.
type ApacheDirectory struct {
	Path    string       `json:"path"`
	At      string       `json:"at"`
	Lines   []ApacheLine `json:"lines,omitempty"`
	Dropped int          `json:"dropped,omitempty"`
}

// apacheSection is a section open around the directive being read:
// its name ("<directory") and, for a <Directory> block being carried,
// the block.
type apacheSection struct {
	name string
	dir  *ApacheDirectory
}

// carriedInVhost are the directives a lab carries from a <VirtualHost>
// (outside any section): how mod_rewrite and mod_dir map a URL to a
// script.
var carriedInVhost = map[string]bool{
	"rewriteengine": true, "rewritecond": true, "rewriterule": true, "rewritebase": true, "rewriteoptions": true,
	"directoryindex": true, "fallbackresource": true, "directoryslash": true, "acceptpathinfo": true,
}

// carriedInDirectory are the directives a lab carries from a <Directory>
// block: carriedInVhost's, whether .htaccess applies (AllowOverride,
// AllowOverrideList), Options, and Require all (an address rule would
// decide by production's clients, not the lab's).
var carriedInDirectory = func() map[string]bool {
	m := map[string]bool{"allowoverride": true, "allowoverridelist": true, "options": true}
	for k := range carriedInVhost {
		m[k] = true
	}
	return m
}()

// apacheServerSettings are the server-wide directives that size Apache
// (its MPM's processes and threads, keep-alive), by their name in lower
// case, with the name ApacheConfig.Settings keeps them under (Apache 2.2's
// MaxClients and MaxRequestsPerChild are its 2.4 names' aliases).
var apacheServerSettings = map[string]string{
	"startservers": "StartServers", "minsparethreads": "MinSpareThreads", "maxsparethreads": "MaxSpareThreads",
	"threadsperchild": "ThreadsPerChild", "serverlimit": "ServerLimit", "minspareservers": "MinSpareServers",
	"maxspareservers": "MaxSpareServers", "maxrequestworkers": "MaxRequestWorkers", "maxclients": "MaxRequestWorkers",
	"maxconnectionsperchild": "MaxConnectionsPerChild", "maxrequestsperchild": "MaxConnectionsPerChild",
	"keepalive": "KeepAlive", "keepalivetimeout": "KeepAliveTimeout", "maxkeepaliverequests": "MaxKeepAliveRequests",
}

// carry records the directive being read when a lab carries it: in a
// <Directory> block open at this level, or in the <VirtualHost> outside
// any section. It keeps track of the sections open.
func (p *apacheParser) carry(at, name string, args []string) {
	switch {
	case name == "<virtualhost" || name == "</virtualhost>":
		p.sections = nil
		return
	case strings.HasPrefix(name, "</"):
		p.closeSection(name)
		return
	case strings.HasPrefix(name, "<"):
		s := apacheSection{name: name}
		if name == "<directory" && len(p.sections) == 0 && len(args) == 1 {
			path := strings.TrimSuffix(args[0], ">")
			if filepath.IsAbs(path) && !strings.ContainsAny(path, "*?[") {
				s.dir = &ApacheDirectory{Path: path, At: at}
			}
		}
		p.sections = append(p.sections, s)
		return
	}
	line := ApacheLine{Text: strings.TrimSpace(p.line), At: at}
	if strings.Contains(line.Text, "${") {
		return
	}
	switch {
	case len(p.sections) == 0 && p.vhost == nil:
		if k, ok := apacheServerSettings[name]; ok && len(args) > 0 {
			if p.conf.Settings == nil {
				p.conf.Settings = map[string]ApacheLine{}
			}
			p.conf.Settings[k] = ApacheLine{Text: strings.Join(args, " "), At: at}
		}
	case len(p.sections) == 0:
		if carriedInVhost[name] {
			p.vhost.Carried = append(p.vhost.Carried, line)
		}
	case len(p.sections) == 1 && p.sections[0].dir != nil:
		d := p.sections[0].dir
		if carriedInDirectory[name] || name == "require" && len(args) == 2 && strings.EqualFold(args[0], "all") {
			d.Lines = append(d.Lines, line)
		} else {
			d.Dropped++
		}
	case p.sections[0].dir != nil:
		p.sections[0].dir.Dropped++
	}
}

// closeSection ends the innermost section; a <Directory> block ending
// is added to its vhost's, or the server's, blocks.
func (p *apacheParser) closeSection(name string) {
	if len(p.sections) == 0 {
		return
	}
	s := p.sections[len(p.sections)-1]
	p.sections = p.sections[:len(p.sections)-1]
	if s.dir == nil || name != "</directory>" {
		return
	}
	if p.vhost != nil {
		p.vhost.Directories = append(p.vhost.Directories, *s.dir)
	} else {
		p.conf.Directories = append(p.conf.Directories, *s.dir)
	}
}
