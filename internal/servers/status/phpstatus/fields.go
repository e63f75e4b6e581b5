package phpstatus

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode"
)

// maxFigure bounds every figure of the status document: 2^50 bytes (1 PiB)
// or counts, far above any real cache and far below float64's exact
// integers, so a figure that passes is a plausible whole number.
const maxFigure = 1 << 50

// maxString bounds a string of the status document (a version, a JIT
// mode, a path prefix).
const maxString = 256

// fields reads typed members of one decoded, untrusted JSON object,
// keeping the first problem. Every member the script always prints is
// required: a missing one is a problem, never a default.
type fields struct {
	obj  map[string]any
	path string
	err  error
}

func (f *fields) fail(key, format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("%s%s: %s", f.path, key, fmt.Sprintf(format, args...))
	}
}

// present says whether key is there and not null.
func (f *fields) present(key string) bool {
	v, ok := f.obj[key]
	return ok && v != nil
}

// num reads a whole number in [0, limit]; a float that is whole (PHP
// prints some sizes as floats) is accepted.
func (f *fields) num(key string, limit int64) int64 {
	if !f.present(key) {
		f.fail(key, "missing")
		return 0
	}
	n, ok := f.obj[key].(json.Number)
	if !ok {
		f.fail(key, "not a number")
		return 0
	}
	x, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > float64(limit) || x != math.Trunc(x) {
		f.fail(key, "%.30q is not a whole number in [0, %d]", n.String(), limit)
		return 0
	}
	return int64(x)
}

// optNum is num for a member PHP leaves out in some versions (0 then).
func (f *fields) optNum(key string, limit int64) int64 {
	if !f.present(key) {
		return 0
	}
	return f.num(key, limit)
}

// flag reads true or false.
func (f *fields) flag(key string) bool {
	switch v := f.obj[key].(type) {
	case bool:
		return v
	case nil:
		f.fail(key, "missing")
	default:
		f.fail(key, "not true or false")
	}
	return false
}

// str reads a short printable string.
func (f *fields) str(key string) string {
	if !f.present(key) {
		f.fail(key, "missing")
		return ""
	}
	v, ok := f.obj[key].(string)
	if !ok {
		f.fail(key, "not a string")
		return ""
	}
	if len(v) > maxString {
		f.fail(key, "longer than %d bytes", maxString)
		return ""
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			f.fail(key, "holds a character that is not printable")
			return ""
		}
	}
	return v
}

// optStr is str for a member that may be absent ("" then).
func (f *fields) optStr(key string) string {
	if !f.present(key) {
		return ""
	}
	return f.str(key)
}

// object returns the member key as an object, or nil when it is absent,
// null or an empty PHP array (json_encode writes [] for it).
func (f *fields) object(key string) *fields {
	switch v := f.obj[key].(type) {
	case map[string]any:
		return &fields{obj: v, path: f.path + key + "."}
	case nil:
		return nil
	case []any:
		if len(v) == 0 {
			return nil
		}
	}
	f.fail(key, "not an object")
	return nil
}
