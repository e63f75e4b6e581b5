package site

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
)

// Start is a live site's configuration as a lab's starting point: what
// production runs, in phptune's knobs, with the pool lines phptune has no
// knob for carried as they are.
type Start struct {
	// Config is the live configuration in knobs; it passes
	// knob.Config.Validate.
	Config knob.Config
	// Pool are the live pool's settings that have no knob, as
	// phpfpm.Paths.ExtraPool lines ("php_admin_value[upload_max_filesize]
	// = 64M"), for the lab's pool to carry: the site's behaviour depends
	// on them. Their values are data (the renderer quotes them and
	// refuses control characters).
	Pool []string
	// Prepend is the live pool's own auto_prepend_file (also in Pool):
	// a lab that loads a prepend file of its own in its place
	// (wordpress.NoCronPrepend) must chain this one.
	Prepend string
	// Apache is, for a site Apache serves, what the lab's Apache carries
	// of its vhost (apacheStart).
	Apache *apache.Carried
	// Notes say, one per setting, what was carried as-is, what was left
	// out and why, and where production's value differs from what the
	// lab can run.
	Notes []string
}

// startupOnly are the PHP settings php-fpm's master reads once, when it
// starts: the opcache's shared memory is sized before a pool's
// php_value/php_admin_value apply, so a pool override of these has no
// effect in production (checked with Debian's php-fpm8.2: the segment
// stays at php.ini's size).
var startupOnly = map[string]bool{
	"opcache.memory_consumption": true, "opcache.interned_strings_buffer": true,
	"opcache.max_accelerated_files": true, "opcache.jit_buffer_size": true, "opcache.huge_code_pages": true,
}

// phpKnobs are the php.ini settings that are phptune knobs.
var phpKnobs = func() map[string]bool {
	out := map[string]bool{}
	for _, k := range knob.All() {
		if k.Component == knob.PHP {
			out[k.Name] = true
		}
	}
	return out
}()

// notCarried are pool settings and PHP values the lab does not copy:
// places production writes (logs, sessions, temporary files) and the
// pool's own filesystem view; the lab has its own.
var notCarried = map[string]string{
	"error_log":               "the lab's php-fpm logs to its own error log",
	"session.save_path":       "sessions land in the lab's own directory",
	"upload_tmp_dir":          "uploads land in the lab's temporary directory",
	"sys_temp_dir":            "temporary files land in the lab's temporary directory",
	"opcache.file_cache":      "the lab's opcache keeps no file cache of production's",
	"opcache.error_log":       "the lab's php-fpm logs to its own error log",
	"mail.log":                "the lab writes no log of production's",
	"slowlog":                 "the lab keeps its own slow log",
	"access.log":              "the lab's web server logs requests",
	"chroot":                  "the lab runs the pool without a chroot of production's",
	"chdir":                   "the lab's pool starts in its own directory",
	"catch_workers_output":    "the lab always catches workers' output into its error log",
	"request_slowlog_timeout": "the lab keeps its own slow log",
	"rlimit_core":             "the lab writes no core files",
}

// carriedPoolSettings are the pool settings without a knob that the lab's
// pool carries as written.
var carriedPoolSettings = map[string]bool{
	"request_terminate_timeout": true, "rlimit_files": true, "security.limit_extensions": true, "clear_env": true,
}

// LiveStart maps the site's live pool, its PHP overrides and the php.ini
// values its master loads onto phptune's knobs, each value checked by the
// knob's own rules. A live value phptune has no knob for is carried in
// Pool when the lab's pool can hold it, else named in Notes; a value the
// knob model refuses keeps the knob's default and is named in Notes.
// It does no I/O.
func LiveStart(s *Site) Start {
	st := Start{Config: knob.Defaults()}
	note := func(format string, args ...any) { st.Notes = append(st.Notes, fmt.Sprintf(format, args...)) }
	if s.Vhost.Server == "apache" {
		st.apacheStart(s, note)
	}
	for _, u := range s.Vhost.Uncarried {
		note("nginx vhost: %s", u)
	}
	switch {
	case s.Pool == nil && s.Vhost.ModPHP != nil:
		note("PHP runs inside Apache (mod_php), in no php-fpm pool: a php-fpm server tried as a challenger starts from Debian's default pool")
	case s.Pool == nil:
		note("no live php-fpm pool was found (%s): the lab starts from Debian's default pool", orNone(s.PoolError))
	default:
		st.pool(s.Pool, note)
	}
	st.php(s, note)
	if err := st.Config.Validate(); err != nil {
		fitted := st.Config.FitDynamic()
		if fitted.Validate() == nil {
			note("the live pool's spare settings break php-fpm's rules (%v): the lab starts with them fitted to pm.max_children=%s", oneLine(err), fitted["pm.max_children"])
			st.Config = fitted
		} else {
			note("the live settings do not form a configuration phptune can run (%v): the lab starts from Debian's defaults", oneLine(err))
			st.Config = knob.Defaults()
		}
	}
	sort.Strings(st.Pool)
	return st
}

// pool maps pm.*, listen and listen.backlog and carries the other
// settings that shape the pool.
func (st *Start) pool(p *Pool, note func(string, ...any)) {
	set := func(name, from, value string) {
		if err := st.Config.Set(name, value); err != nil {
			note("%s = %s in pool %s: %v; the lab starts with %s", from, value, p.Name, err, st.Config[name])
		}
	}
	pm := p.PM["pm"]
	if pm != "" {
		set("pm", "pm", pm)
	}
	if v, ok := p.PM["pm.max_children"]; ok {
		set("pm.max_children", "pm.max_children", v)
	}
	for _, k := range []string{"pm.min_spare_servers", "pm.max_spare_servers", "pm.max_requests"} {
		if v, ok := p.PM[k]; ok {
			set(k, k, v)
		}
	}
	if v, ok := p.PM["pm.start_servers"]; ok {
		set("pm.start_servers", "pm.start_servers", v)
	} else if st.Config["pm"] == "dynamic" {
		// php-fpm's own default: halfway between the spare bounds.
		minS, maxS := st.Config.Int("pm.min_spare_servers"), st.Config.Int("pm.max_spare_servers")
		st.Config["pm.start_servers"] = strconv.FormatInt(minS+(maxS-minS)/2, 10)
	}
	if v, ok := p.PM["pm.process_idle_timeout"]; ok {
		if secs, err := fpmSeconds(v); err != nil {
			note("pm.process_idle_timeout = %s in pool %s: %v; the lab starts with %ss", v, p.Name, err, st.Config["pm.process_idle_timeout"])
		} else {
			set("pm.process_idle_timeout", "pm.process_idle_timeout", strconv.FormatInt(secs, 10))
		}
	}
	for _, k := range keysOf(p.PM) {
		v := p.PM[k]
		switch k {
		case "pm", "pm.max_children", "pm.start_servers", "pm.min_spare_servers", "pm.max_spare_servers", "pm.max_requests", "pm.process_idle_timeout":
		case "pm.status_path", "pm.status_listen":
			note("%s = %s in pool %s: not carried; the lab serves its own status page", k, v, p.Name)
		default:
			note("%s = %s in pool %s: phptune has no knob for it; not carried", k, v, p.Name)
		}
	}
	if strings.HasPrefix(p.Listen, "tcp:") {
		st.Config["listen"] = "tcp"
	}
	for _, k := range keysOf(p.Settings) {
		v := p.Settings[k]
		switch {
		case k == "listen.backlog":
			if v == "-1" {
				// php-fpm takes -1 as the system's most (somaxconn).
				v = "65535"
			}
			set("listen.backlog", k, v)
		case carriedPoolSettings[k]:
			if line, ok := poolLine(k, v); ok {
				st.Pool = append(st.Pool, line)
				note("%s = %s in pool %s: carried as-is, not tuned", k, v, p.Name)
			} else {
				note("%s = %q in pool %s: not carried, the value holds characters php-fpm.conf cannot quote", k, v, p.Name)
			}
		case notCarried[k] != "":
			note("%s = %s in pool %s: not carried; %s", k, v, p.Name, notCarried[k])
		}
	}
	for _, e := range p.Env {
		if e == "USE_ZEND_ALLOC_HUGE_PAGES" {
			note("env[USE_ZEND_ALLOC_HUGE_PAGES] in pool %s: its value is not read; the lab starts with %s=%s", p.Name, knob.ZendAllocHugePagesKnob, st.Config[knob.ZendAllocHugePagesKnob])
			continue
		}
		note("env[%s] in pool %s: not carried (its value may be a secret and is not read); set it in the lab if the site needs it", e, p.Name)
	}
}

// php maps the PHP settings in effect (php.ini, conf.d and the pool's
// overrides, see PHPConfig.Settings) onto the PHP knobs, and carries the
// pool's overrides that have no knob.
func (st *Start) php(s *Site, note func(string, ...any)) {
	if s.PHP != nil {
		for _, name := range keysOf(s.PHP.Settings) {
			if !phpKnobs[name] {
				continue
			}
			set := s.PHP.Settings[name]
			if startupOnly[name] && strings.HasPrefix(set.From, "pool ") {
				// The master sized the cache before the pool's value applied.
				ini, ok := s.PHP.Shadowed[name]
				was := "PHP's default"
				if ok {
					was = ini.Value + " (" + ini.From + ")"
				}
				note("%s = %s from %s has no effect: php-fpm's master sizes the opcache before a pool's values apply, so production runs %s and so does the lab", name, set.Value, set.From, was)
				if !ok {
					continue
				}
				set = ini
			}
			v, ok := phpValue(name, set.Value)
			if !ok {
				note("%s = %s (%s): phptune's knob cannot express it; the lab starts with %s", name, set.Value, set.From, st.Config[name])
				continue
			}
			if err := st.Config.Set(name, v); err != nil {
				note("%s = %s (%s): %v; the lab starts with %s", name, set.Value, set.From, err, st.Config[name])
			}
		}
		for _, e := range s.PHP.Errors {
			note("php.ini: %s", e)
		}
	}
	if s.Pool == nil {
		return
	}
	for _, k := range keysOf(s.Pool.Overrides) {
		v := s.Pool.Overrides[k]
		_, rest, _ := strings.Cut(k, "[")
		name := strings.TrimSuffix(rest, "]")
		switch {
		case phpKnobs[name]:
			// A knob: rendered in the lab's php.ini, so the tune can change it.
		case notCarried[name] != "":
			note("%s = %s: not carried; %s", k, v, notCarried[name])
		default:
			if line, ok := poolLine(k, v); ok {
				st.Pool = append(st.Pool, line)
				if name == "auto_prepend_file" {
					st.Prepend = strings.TrimSpace(v)
				}
				note("%s = %s: carried as-is, not tuned", k, v)
			} else {
				note("%s = %q: not carried, the value holds characters php-fpm.conf cannot quote", k, v)
			}
		}
	}
}

// phpValue turns a php.ini value into the form knob name takes: PHP's
// booleans, the opcache.jit names and numbers, sizes. ok is false for a
// value the knob has no way to say (memory_limit = -1, a JIT mode by
// its CRTO digits other than tracing's or function's).
func phpValue(name, v string) (string, bool) {
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	k, err := knob.Lookup(name)
	if err != nil {
		return "", false
	}
	switch {
	case name == "opcache.jit":
		switch strings.ToLower(v) {
		case "", "0", "off", "disable", "false", "no":
			return "off", true
		case "on", "1", "true", "yes", "tracing", "1254":
			return "tracing", true
		case "function", "1205":
			return "function", true
		}
		return "", false
	case k.Kind == knob.Bool:
		if v == "" {
			return "off", true
		}
		return v, true
	case k.Kind == knob.Size:
		if strings.HasPrefix(v, "-") {
			return "", false
		}
		return v, true
	}
	return v, true
}

// poolLine is the ExtraPool line for key = value, when value is one the
// pool file can quote: no control characters, no leading '$' (php-fpm's
// environment expansion).
func poolLine(key, value string) (string, bool) {
	value = strings.TrimSpace(value)
	if strings.HasPrefix(value, "$") {
		return "", false
	}
	for _, r := range value {
		if r < 0x20 || r == 0x7f {
			return "", false
		}
	}
	return key + " = " + value, true
}

// fpmSeconds reads a php-fpm time: a number with an optional s, m, h or
// d suffix.
func fpmSeconds(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 's':
			v = v[:n-1]
		case 'm':
			mult, v = 60, v[:n-1]
		case 'h':
			mult, v = 3600, v[:n-1]
		case 'd':
			mult, v = 86400, v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, fmt.Errorf("not a time like 10s, 5m or 1h")
	}
	return n * mult, nil
}

// oneLine joins a multi-line error into one line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// keysOf is m's keys in order, so that notes come out the same way
// every time.
func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
