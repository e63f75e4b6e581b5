package site

import (
	"bufio"
	"bytes"
	"strings"
)

// iniEntry is one "key = value" line of a php.ini file.
type iniEntry struct {
	Key, Value string
	Line       int
}

// parseINI reads the settings of a php.ini file: "key = value" lines,
// ";" comments, section headers ignored (phptune reads what applies to
// every request; [PATH=]/[HOST=] sections are not php-fpm's), values
// double-quoted or bare (a trailing "; comment" cut). Lines it cannot
// read are skipped, as PHP warns and goes on.
func parseINI(b []byte) []iniEntry {
	var out []iniEntry
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
		if strings.HasPrefix(v, `"`) {
			if end := strings.IndexByte(v[1:], '"'); end >= 0 {
				v = v[1 : 1+end]
			} else {
				v = v[1:]
			}
		} else if i := strings.IndexByte(v, ';'); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		out = append(out, iniEntry{Key: k, Value: v, Line: n})
	}
	return out
}
