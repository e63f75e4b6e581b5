package statuspage

import (
	"fmt"
	"strings"
)

// Field is one "Key: value" line of a status page, both trimmed.
type Field struct{ Key, Value string }

// AutoFields reads a mod_status page in its machine format (?auto),
// Apache's or lighttpd's: the "Key: value" lines whose key is in keys, in
// the page's order. Other lines (a host name, counters phptune does not
// read) are skipped: known says which keys to keep. A page of more than limit bytes or a key given twice
// is an error wrapping notStatus; the values are the caller's to check.
func AutoFields(b []byte, limit int, known func(key string) bool, notStatus error) ([]Field, error) {
	if len(b) > limit {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", notStatus, len(b), limit)
	}
	var out []Field
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		key, value, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !known(key) {
			continue
		}
		if seen[key] {
			return nil, fmt.Errorf("%w: %s given twice", notStatus, key)
		}
		seen[key] = true
		out = append(out, Field{key, value})
	}
	return out, nil
}

// Missing returns the first of keys that no field has, or "".
func Missing(fields []Field, keys ...string) string {
	for _, k := range keys {
		found := false
		for _, f := range fields {
			found = found || f.Key == k
		}
		if !found {
			return k
		}
	}
	return ""
}
