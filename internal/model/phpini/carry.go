package phpini

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// File is one php.ini file a PHP reads, with its settings.
type File struct {
	Path    string
	Entries []Entry
}

// CarryInput is what Carry decides from.
type CarryInput struct {
	// Live are the installed release's files in the order PHP reads them:
	// its php.ini, then its conf.d files.
	Live []File
	// LiveStock is the installed release's php.ini as Debian ships it
	// (/usr/lib/php/VERSION/php.ini-production): a setting of Live's
	// php.ini with the same value is Debian's default, not carried.
	LiveStock []Entry
	// Target is the php.ini the other release's lab reads (Debian 13's):
	// a setting it already has with the same value needs no carrying.
	Target []Entry
	// Known are the directives the other release knows (ini_get_all's
	// keys with its extensions loaded); nil when not known, and then
	// every setting is carried.
	Known map[string]bool
	// Skip are keys the lab sets itself (its knobs): never carried.
	Skip map[string]bool
	// To is the other release ("8.4"), for the notes.
	To string
}

// Carried is Carry's answer.
type Carried struct {
	// Lines are "key = value" lines, for an ini file the lab's PHP reads
	// after the target's php.ini (the lab's knobs come later still).
	Lines []string
	// Settings are the carried keys with where each was set.
	Settings []string
	// Dropped are the settings not carried (the other release has no
	// such setting), Deprecated those carried that it deprecates: each a
	// sentence naming the setting, its value and where it is set.
	Dropped, Deprecated []string
}

// notCarried are keys a lab of another release never takes from the
// installed one: where extensions are, which are loaded (the other
// release's own; a lab of it loads them by absolute path).
var notCarried = map[string]bool{"extension": true, "zend_extension": true, "extension_dir": true}

// Carry decides which settings of the installed release's configuration
// a lab of another release carries: every setting of its php.ini whose
// value differs from Debian's php.ini-production, and every setting of
// its conf.d files (Debian's own hold only extension lines) whose value
// differs from that file's, each at its last value, unless the target's
// php.ini has the same value. A setting the other release does not know
// is dropped and listed; one it deprecates is carried and listed.
func Carry(in CarryInput) Carried {
	stock := Last(in.LiveStock)
	target := Last(in.Target)
	type set struct {
		e    Entry
		from string
	}
	live := map[string]set{}
	for _, f := range in.Live {
		for _, e := range f.Entries {
			if notCarried[strings.ToLower(e.Key)] || in.Skip[e.Key] {
				continue
			}
			live[e.Key] = set{e, fmt.Sprintf("%s:%d", f.Path, e.Line)}
		}
	}
	keys := make([]string, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out Carried
	for _, k := range keys {
		s := live[k]
		if d, ok := stock[k]; ok && d.Value == s.e.Value {
			continue
		}
		if t, ok := target[k]; ok && t.Value == s.e.Value {
			continue
		}
		// Values are not said: a setting of an extension the root lacks
		// can be a licence key or a token.
		where := fmt.Sprintf("%s (%s)", k, s.from)
		if why := unwritable(s.e); why != "" {
			out.Dropped = append(out.Dropped, where+": its value "+why)
			continue
		}
		if in.Known != nil && !in.Known[k] {
			out.Dropped = append(out.Dropped, where+": PHP "+in.To+" here has no such setting (removed, or its extension is not in the root)")
			continue
		}
		if why := Deprecation(k, s.e.Value); why != "" {
			out.Deprecated = append(out.Deprecated, fmt.Sprintf("%s = %s (%s): %s", k, s.e.Value, s.from, why))
		}
		out.Lines = append(out.Lines, k+" = "+s.e.Raw)
		out.Settings = append(out.Settings, fmt.Sprintf("%s (%s)", k, s.from))
	}
	return out
}

// unwritable says why e's value is not written again as it was read
// ("" when it can be: PHP reads the line "key = Raw" back as Value):
// a control character; a quoted string followed by more (Raw ""); a
// quote, a backslash or an environment variable, which PHP would read
// otherwise in another file, or where the lab's environment differs.
func unwritable(e Entry) string {
	raw := e.Raw
	switch {
	case strings.ContainsFunc(raw+e.Value, func(r rune) bool { return unicode.IsControl(r) && r != '\t' }):
		return "holds a control character"
	case raw == "":
		return "is not one quoted string"
	case strings.Contains(raw, "${"):
		return "names an environment variable (the lab's environment is not production's)"
	case strings.HasPrefix(raw, `"`):
		if len(raw) < 2 || !strings.HasSuffix(raw, `"`) || strings.ContainsAny(raw[1:len(raw)-1], `"\`) {
			return "has a quote or backslash inside its quotes"
		}
	case strings.ContainsAny(raw, `"'\`):
		return "has a quote or backslash outside quotes"
	}
	return ""
}

// Deprecation says why PHP 8.3 or 8.4 deprecates setting key to value
// ("" when it does not): each checked on Debian 13's PHP 8.4.28, which
// logs "PHP Startup: … INI setting is deprecated" for it.
func Deprecation(key, value string) string {
	off := func() bool {
		v := strings.ToLower(strings.TrimSpace(value))
		return v == "0" || v == "off" || v == "false" || v == "no" || v == ""
	}
	switch key {
	case "assert.active", "assert.bail", "assert.callback", "assert.exception", "assert.warning":
		return "deprecated since PHP 8.3 (zend.assertions and exceptions replace it)"
	case "session.sid_length", "session.sid_bits_per_character":
		return "deprecated since PHP 8.4 (the session id's length and alphabet are fixed)"
	case "session.trans_sid_tags", "session.trans_sid_hosts", "session.referer_check":
		return "deprecated since PHP 8.4 (session ids in URLs go away)"
	case "session.use_only_cookies":
		if off() {
			return "turning it off is deprecated since PHP 8.4 (session ids in URLs go away)"
		}
	case "session.use_trans_sid":
		if !off() {
			return "turning it on is deprecated since PHP 8.4 (session ids in URLs go away)"
		}
	}
	return ""
}
