package site

import (
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
)

// ApacheRules are an Apache vhost's directives a lab carries
// (livehost's carriedInVhost and carriedInDirectory): its own lines, the
// <Directory> blocks — its own and the server's — that hold its docroot
// or lie inside it, and the modules the server loads.
type ApacheRules struct {
	Lines       []livehost.ApacheLine      `json:"lines,omitempty"`
	Directories []livehost.ApacheDirectory `json:"directories,omitempty"`
	Modules     []string                   `json:"modules,omitempty"`
	// MPM is the MPM production loads; Settings its server-wide sizing
	// directives (livehost.ApacheConfig.Settings).
	MPM      string                         `json:"mpm,omitempty"`
	Settings map[string]livehost.ApacheLine `json:"settings,omitempty"`
}

// apacheRules collects what a lab carries of vhost a of configuration c
// whose docroot is root ("" when unknown: no <Directory> block is
// carried).
func apacheRules(c *livehost.ApacheConfig, a livehost.ApacheVirtualHost, root string) *ApacheRules {
	r := &ApacheRules{Lines: a.Carried, Modules: c.Modules, MPM: c.MPM, Settings: c.Settings}
	if root != "" {
		// Server-level blocks first: Apache merges the vhost's after.
		for _, blocks := range [][]livehost.ApacheDirectory{c.Directories, a.Directories} {
			for _, d := range blocks {
				if related(filepath.Clean(d.Path), root) {
					r.Directories = append(r.Directories, d)
				}
			}
		}
	}
	return r
}

// related says whether directory d holds root or lies inside it.
func related(d, root string) bool {
	return inside(root, d) || inside(d, root)
}

// inside says whether p is dir or below it.
func inside(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// apacheStart sets what a lab of an Apache-served site starts from: the
// server knob (event MPM in front of php-fpm, or prefork with mod_php
// when that is how production runs PHP) and what its Apache carries of
// the vhost, each left-out piece named in a note.
func (st *Start) apacheStart(s *Site, note func(string, ...any)) {
	st.Config[knob.ServerKnob] = knob.ApacheEventFPM
	modPHP := s.Vhost.ModPHP != nil && s.Pool == nil
	if modPHP {
		st.Config[knob.ServerKnob] = knob.ApachePreforkModPHP
	}
	out := &apache.Carried{}
	st.Apache = out
	r := s.Vhost.Rules
	if r == nil {
		note("the lab runs Apache (server=%s) as production does, its MPM sized as Debian ships it (production's settings were not read)", st.Config[knob.ServerKnob])
		return
	}
	st.apacheMPM(r, modPHP, note)
	for _, l := range r.Lines {
		out.Lines = append(out.Lines, l.Text)
	}
	for _, d := range r.Directories {
		cd := apache.Directory{Path: labDirectoryPath(d.Path, s.Vhost.Root, s.DocRoot.Real)}
		for _, l := range d.Lines {
			cd.Lines = append(cd.Lines, l.Text)
		}
		if d.Dropped > 0 {
			note("<Directory %s> at %s: %d of its directives are production's own (logs, access rules by address, handlers) and are not carried", d.Path, d.At, d.Dropped)
		}
		out.Directories = append(out.Directories, cd)
	}
	var left []string
	out.Modules, left = apache.CarriedModules(r.Modules)
	if len(left) > 0 {
		note("Apache modules production loads that the lab does not: %s", strings.Join(left, "; "))
	}
	if modPHP {
		st.modPHPValues(s, out, note)
	}
}

// labDirectoryPath is a <Directory> path as the lab sees it: one at or
// below the docroot as production writes it (through a deployment's
// link) moves to the same place under the docroot the lab serves (the
// link resolved); any other stays.
func labDirectoryPath(p, root, real string) string {
	p = filepath.Clean(p)
	if real == "" || root == "" || !inside(p, root) || root == "/" {
		return p
	}
	return filepath.Join(real, strings.TrimPrefix(p, root))
}

// modPHPValues maps a mod_php vhost's php_value and php_admin_value
// settings: a knob's value becomes the lab's start (the lab's php.ini
// carries it, so tune can change it), any other is carried as the
// vhost's line.
func (st *Start) modPHPValues(s *Site, out *apache.Carried, note func(string, ...any)) {
	for _, k := range keysOf(s.Vhost.PHPValues) {
		v := s.Vhost.PHPValues[k]
		directive, rest, _ := strings.Cut(k, "[")
		name := strings.TrimSuffix(rest, "]")
		switch {
		case phpKnobs[name]:
			pv, ok := phpValue(name, v)
			if !ok {
				note("%s = %s: phptune's knob cannot express it; the lab starts with %s", k, v, st.Config[name])
			} else if err := st.Config.Set(name, pv); err != nil {
				note("%s = %s: %v; the lab starts with %s", k, v, err, st.Config[name])
			}
		case notCarried[name] != "":
			note("%s = %s: not carried; %s", k, v, notCarried[name])
		default:
			line, ok := apachePHPLine(directive, name, v)
			if !ok {
				note("%s = %q: not carried, the value holds characters httpd.conf cannot quote", k, v)
				continue
			}
			out.Lines = append(out.Lines, line)
			note("%s = %s: carried as-is, not tuned", k, v)
		}
	}
}

// apachePHPLine writes a mod_php setting as httpd.conf takes it, the
// value quoted; ok is false for one it cannot carry.
func apachePHPLine(directive, name, value string) (string, bool) {
	value = strings.TrimSpace(value)
	if strings.ContainsAny(name, " \t\"\\") || name == "" || strings.Contains(value, "${") {
		return "", false
	}
	for _, r := range value {
		if r < 0x20 || r == 0x7f {
			return "", false
		}
	}
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value)
	return directive + " " + name + ` "` + q + `"`, true
}

// mpmKnobs map Apache's server-wide sizing directives onto the knobs of
// the lab's MPM: event's for a php-fpm site, prefork's for mod_php, and
// the ones both have.
var mpmKnobs = map[bool]map[string]string{
	false: {"StartServers": "apache.event.start_servers", "MinSpareThreads": "apache.event.min_spare_threads",
		"MaxSpareThreads": "apache.event.max_spare_threads", "ThreadsPerChild": "apache.event.threads_per_child",
		"ServerLimit": "apache.event.server_limit"},
	true: {"StartServers": "apache.prefork.start_servers", "MinSpareServers": "apache.prefork.min_spare_servers",
		"MaxSpareServers": "apache.prefork.max_spare_servers", "ServerLimit": "apache.prefork.server_limit"},
}

// mpmCommonKnobs are the sizing knobs of either MPM.
var mpmCommonKnobs = map[string]string{
	"MaxRequestWorkers": "apache.max_request_workers", "MaxConnectionsPerChild": "apache.max_connections_per_child",
	"KeepAlive": "apache.keepalive", "KeepAliveTimeout": "apache.keepalive_timeout", "MaxKeepAliveRequests": "apache.max_keepalive_requests",
}

// apacheMPM starts the lab's MPM from production's sizing: each setting
// whose MPM is the lab's (event for php-fpm, prefork for mod_php) becomes
// its knob, checked by the knob's rules; production on another MPM (worker,
// or event beside mod_php) keeps Debian's sizing, said in a note.
func (st *Start) apacheMPM(r *ApacheRules, modPHP bool, note func(string, ...any)) {
	want := "event"
	if modPHP {
		want = "prefork"
	}
	if r.MPM != want {
		note("production's Apache runs the %s MPM, the lab's %s (server=%s): its sizing starts from Debian's defaults", orNone(r.MPM), want, st.Config[knob.ServerKnob])
		return
	}
	before := st.Config.Clone()
	set := 0
	for _, name := range keysOf(r.Settings) {
		line := r.Settings[name]
		k, ok := mpmKnobs[modPHP][name]
		if !ok {
			k, ok = mpmCommonKnobs[name]
		}
		if !ok {
			continue
		}
		v := strings.ToLower(strings.TrimSpace(line.Text))
		if err := st.Config.Set(k, v); err != nil {
			note("%s %s (%s): %v; the lab starts with %s=%s", name, line.Text, line.At, err, k, st.Config[k])
			continue
		}
		set++
	}
	if err := st.Config.Validate(); err != nil {
		// Set before the pool and PHP: only Apache's knobs changed.
		note("production's Apache sizing breaks the MPM's rules (%v): the lab's Apache starts as Debian ships it", oneLine(err))
		st.Config = before
		return
	}
	note("the lab runs Apache (server=%s, %s MPM) as production does, sized from production's %d MPM and keep-alive settings", st.Config[knob.ServerKnob], want, set)
}
