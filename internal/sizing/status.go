package sizing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/results"
)

// MaxStatusBytes is the largest status document ParseStatus reads. The
// status script prints about 2 KiB; anything near this is not its output.
const MaxStatusBytes = 64 << 10

// maxFigure bounds every number of the status document: 2^50 bytes (1 PiB)
// or counts, far above any real cache and far below float64's exact
// integers, so a figure that passes is a plausible whole number.
const maxFigure = 1 << 50

// ErrStatus is wrapped by every error ParseStatus returns.
var ErrStatus = errors.New("runtime status")

// ParseStatus reads the lab's status script output (lab.StatusScript: a
// JSON object with opcache, directives and realpath_cache). The document
// comes from a process that runs the lab's app, so it is untrusted: at
// most MaxStatusBytes, every figure a whole number in [0, 2^50], bools
// bools. A part that is absent or malformed is left nil and named in
// problems; only a document that is not a JSON object at all is an error.
func ParseStatus(body []byte) (op *results.OpcacheStatus, rp *results.RealpathStatus, problems []string, err error) {
	if len(body) > MaxStatusBytes {
		return nil, nil, nil, fmt.Errorf("%w: %d bytes, more than the %d the status script prints", ErrStatus, len(body), MaxStatusBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: not a JSON object: %.80v", ErrStatus, err)
	}
	if op, err = parseOpcache(doc); err != nil {
		problems = append(problems, "opcache: "+err.Error())
	}
	if rp, err = parseRealpath(doc); err != nil {
		problems = append(problems, "realpath cache: "+err.Error())
	}
	return op, rp, problems, nil
}

// fields reads typed figures out of a decoded JSON object, keeping the
// first problem.
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

// num reads a whole number in [0, maxFigure]; a float that is whole (PHP
// prints some sizes as floats) is accepted.
func (f *fields) num(key string) int64 {
	v, ok := f.obj[key]
	if !ok || v == nil {
		f.fail(key, "missing")
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		f.fail(key, "not a number")
		return 0
	}
	x, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > maxFigure || x != math.Trunc(x) {
		f.fail(key, "%.30q is not a whole number in [0, 2^50]", n.String())
		return 0
	}
	return int64(x)
}

// optNum is num for a figure that may be absent (0 then).
func (f *fields) optNum(key string) int64 {
	if v, ok := f.obj[key]; !ok || v == nil {
		return 0
	}
	return f.num(key)
}

func (f *fields) flag(key string) bool {
	v, ok := f.obj[key]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		f.fail(key, "not true or false")
	}
	return b
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

func parseOpcache(doc map[string]any) (*results.OpcacheStatus, error) {
	top := &fields{obj: doc}
	o := top.object("opcache")
	if top.err != nil {
		return nil, top.err
	}
	if o == nil {
		return nil, errors.New("not reported (opcache not loaded, or opcache_get_status refused)")
	}
	s := &results.OpcacheStatus{Enabled: o.flag("enabled"), CacheFull: o.flag("cache_full")}
	if !s.Enabled {
		return s, o.err
	}
	if m := o.object("memory_usage"); m != nil {
		s.UsedB, s.FreeB, s.WastedB = m.num("used_memory"), m.num("free_memory"), m.num("wasted_memory")
		o.err = errors.Join(o.err, m.err)
	} else if o.err == nil {
		o.fail("memory_usage", "missing")
	}
	if in := o.object("interned_strings_usage"); in != nil {
		s.InternedBufferB, s.InternedUsedB, s.InternedStrings = in.num("buffer_size"), in.num("used_memory"), in.optNum("number_of_strings")
		o.err = errors.Join(o.err, in.err)
	}
	if st := o.object("statistics"); st != nil {
		s.CachedScripts, s.CachedKeys, s.MaxCachedKeys = st.num("num_cached_scripts"), st.num("num_cached_keys"), st.num("max_cached_keys")
		s.OOMRestarts, s.HashRestarts, s.ManualRestarts = st.num("oom_restarts"), st.num("hash_restarts"), st.optNum("manual_restarts")
		s.Hits, s.Misses = st.optNum("hits"), st.optNum("misses")
		o.err = errors.Join(o.err, st.err)
	} else if o.err == nil {
		o.fail("statistics", "missing")
	}
	if j := o.object("jit"); j != nil {
		s.JIT = &results.JITStatus{Enabled: j.flag("enabled"), On: j.flag("on"), BufferB: j.num("buffer_size"), BufferFreeB: j.num("buffer_free")}
		if j.err == nil && s.JIT.BufferFreeB > s.JIT.BufferB {
			j.fail("buffer_free", "larger than buffer_size")
		}
		o.err = errors.Join(o.err, j.err)
	}
	if d := top.object("directives"); d != nil {
		// opcache_get_configuration gives memory_consumption in bytes and
		// interned_strings_buffer in MiB, as the ini file sets it.
		s.MemoryConsumptionB, s.MaxAcceleratedFiles = d.optNum("opcache.memory_consumption"), d.optNum("opcache.max_accelerated_files")
		o.err = errors.Join(o.err, d.err)
	}
	o.err = errors.Join(o.err, top.err)
	if o.err != nil {
		return nil, o.err
	}
	return s, nil
}

func parseRealpath(doc map[string]any) (*results.RealpathStatus, error) {
	top := &fields{obj: doc}
	r := top.object("realpath_cache")
	if top.err != nil {
		return nil, top.err
	}
	if r == nil {
		return nil, errors.New("not reported")
	}
	s := &results.RealpathStatus{UsedB: r.num("used_bytes"), Entries: r.num("entries"), Reads: 1}
	if r.err != nil {
		return nil, r.err
	}
	ini, _ := r.obj["size_ini"].(string)
	size, err := ParseINISize(ini)
	if err != nil {
		return nil, fmt.Errorf("size_ini: %w", err)
	}
	s.SizeB = size
	return s, nil
}

// ParseINISize reads a php.ini size as PHP does ("4096K", "4M", "1g",
// "16384"): a whole number with an optional K, M or G suffix, within
// [0, 2^50] bytes.
func ParseINISize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 24 {
		return 0, fmt.Errorf("%.30q is not a size like 4096K", v)
	}
	mult := int64(1)
	switch v[len(v)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	}
	if mult != 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > maxFigure/mult {
		return 0, fmt.Errorf("%.30q is not a size like 4096K", v)
	}
	return n * mult, nil
}
