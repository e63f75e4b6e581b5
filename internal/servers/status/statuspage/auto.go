package statuspage

import (
	"fmt"
	"strconv"
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

// AutoPage describes a mod_status ?auto page, Apache's or lighttpd's, for
// Parse: the keys it reads and what each must be.
type AutoPage struct {
	Limit int // the most bytes of a page
	// Counts are the keys whose value is a non-negative count, stored
	// where each points.
	Counts map[string]*int64
	// Other are the keys whose value is the caller's to check, each by its
	// function, in the page's order among the counts.
	Other map[string]func(value string) error
	// Required are the keys the page must have.
	Required []string
	// NotStatus is wrapped by every error; Handler names, in the error for
	// a missing key, what should answer at the URL ("mod_status's handler").
	NotStatus error
	Handler   string
}

// Parse reads b as p's page (AutoFields): every count is checked and
// stored, every other key given to its function, then the required keys
// are looked for. The first problem is the error.
func (p AutoPage) Parse(b []byte) error {
	known := func(k string) bool {
		_, isCount := p.Counts[k]
		_, isOther := p.Other[k]
		return isCount || isOther
	}
	fields, err := AutoFields(b, p.Limit, known, p.NotStatus)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if check, ok := p.Other[f.Key]; ok {
			if err := check(f.Value); err != nil {
				return err
			}
			continue
		}
		n, err := strconv.ParseInt(f.Value, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %s %.40q is not a count", p.NotStatus, f.Key, f.Value)
		}
		*p.Counts[f.Key] = n
	}
	if k := Missing(fields, p.Required...); k != "" {
		return fmt.Errorf("%w: no %s line (is %s at that URL?)", p.NotStatus, k, p.Handler)
	}
	return nil
}
