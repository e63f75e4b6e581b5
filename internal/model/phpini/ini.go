// Package phpini reads php.ini files and decides which of one PHP
// release's settings a lab carries onto another release's php.ini: the
// settings production changed from its Debian defaults, minus those the
// other release no longer has (listed, never dropped silently), with the
// ones it deprecates named. No I/O: callers read the files.
package phpini

import (
	"bufio"
	"bytes"
	"strings"
)

// Entry is one "key = value" line of a php.ini file. Value is what PHP
// reads (quotes taken off, a trailing comment cut); Raw is the value as
// written (quotes kept: an unquoted value may be an expression of
// constants, E_ALL & ~E_DEPRECATED, that a quoted one is not), or ""
// when the quoted string is followed by more than a comment (PHP joins
// "a" "b"; an escaped quote): a form Raw does not hold.
type Entry struct {
	Key, Value, Raw string
	Line            int
}

// Parse reads the settings of a php.ini file: "key = value" lines, ";"
// comments, section headers ignored (phptune reads what applies to every
// request; [PATH=]/[HOST=] sections are not php-fpm's), values
// double-quoted or bare (a trailing "; comment" cut). Lines it cannot
// read are skipped, as PHP warns and goes on. A line ends at "\n",
// "\r\n" or "\r", as for PHP.
func Parse(b []byte) []Entry {
	var out []Entry
	// PHP's ini scanner ends a line at "\r" too: so does this reader (a
	// value never spans one).
	b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"") {
			continue
		}
		v = strings.TrimSpace(v)
		raw := v
		if strings.HasPrefix(v, `"`) {
			if end := strings.IndexByte(v[1:], '"'); end >= 0 {
				rest := strings.TrimSpace(v[end+2:])
				v, raw = v[1:1+end], v[:end+2]
				if rest != "" && rest[0] != ';' {
					raw = "" // "a" "b", "x\"y": not this one string
				}
			} else {
				v = v[1:]
				raw = `"` + v + `"`
			}
		} else if i := strings.IndexByte(v, ';'); i >= 0 {
			v = strings.TrimSpace(v[:i])
			raw = v
		}
		out = append(out, Entry{Key: k, Value: v, Raw: raw, Line: n})
	}
	return out
}

// Last is each key's last value in es (PHP keeps the last one it reads).
func Last(es []Entry) map[string]Entry {
	m := make(map[string]Entry, len(es))
	for _, e := range es {
		m[e.Key] = e
	}
	return m
}
