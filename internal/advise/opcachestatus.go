package advise

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode"

	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/sizing"
)

// Opcache is what advise's one-shot status script (package livehost)
// printed from a pool: opcache_get_status(false), opcache's directives and
// the answering worker's realpath cache. The cache is shared by every pool
// of a master, so one reading holds for them all.
type Opcache struct {
	PHPVersion string `json:"php_version"`
	// Loaded: opcache's functions exist (the extension is loaded and
	// they are not in disable_functions).
	Loaded bool `json:"loaded"`
	// Status is nil when opcache is off or reported nothing (Problems
	// says why).
	Status   *results.OpcacheStatus  `json:"status,omitempty"`
	Realpath *results.RealpathStatus `json:"realpath_cache,omitempty"`
	// Directives as opcache_get_configuration gives them.
	Enable              bool  `json:"enable"`
	ValidateTimestamps  bool  `json:"validate_timestamps"`
	RevalidateFreq      int64 `json:"revalidate_freq"`
	MemoryConsumptionB  int64 `json:"memory_consumption_bytes"`
	InternedBufferMiB   int64 `json:"interned_strings_buffer_mib"`
	MaxAcceleratedFiles int64 `json:"max_accelerated_files"`
	// HasJIT: PHP has the JIT (8.0 and later, built with it); JIT is
	// opcache.jit as reported ("" while the buffer is 0).
	HasJIT     bool   `json:"has_jit"`
	JIT        string `json:"jit,omitempty"`
	JITBufferB int64  `json:"jit_buffer_size_bytes"`
	// RestrictAPI is opcache.restrict_api: a script outside it gets no
	// status.
	RestrictAPI string   `json:"restrict_api,omitempty"`
	Problems    []string `json:"problems,omitempty"`
}

// maxString bounds a string of the status document (a version, a JIT
// mode, a path prefix).
const maxString = 256

// ParseOpcache reads the status script's output. It comes from a worker
// of the app's pool (an auto_prepend_file of the app runs before the
// script), so it is untrusted: at most sizing.MaxStatusBytes, every
// figure a whole number in range (sizing.ParseStatus's rules), bools
// bools, strings short and printable. A part that fails is left out and
// named in Problems; only a document that is not a JSON object is an
// error.
func ParseOpcache(body []byte) (*Opcache, error) {
	st, rp, problems, err := sizing.ParseStatus(body)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", sizing.ErrStatus, err)
	}
	o := &Opcache{Status: st, Realpath: rp, Problems: problems}
	top := strict{obj: doc}
	o.PHPVersion = top.str("php_version")
	o.Loaded = top.flag("loaded")
	o.RestrictAPI = top.optStr("restrict_api")
	if top.err != nil {
		o.Problems = append(o.Problems, top.err.Error())
		top.err = nil
	}
	if st != nil && !st.Enabled {
		o.Status = nil
	}
	if d, ok := doc["directives"].(map[string]any); ok {
		ds := strict{obj: d, path: "directives."}
		o.Enable = ds.flag("opcache.enable")
		o.ValidateTimestamps = ds.flag("opcache.validate_timestamps")
		o.RevalidateFreq = ds.num("opcache.revalidate_freq", 1<<31)
		o.MemoryConsumptionB = ds.num("opcache.memory_consumption", 1<<50)
		o.InternedBufferMiB = ds.num("opcache.interned_strings_buffer", 1<<20)
		o.MaxAcceleratedFiles = ds.num("opcache.max_accelerated_files", 1<<31)
		o.JITBufferB = ds.optNum("opcache.jit_buffer_size", 1<<50)
		o.JIT = ds.optStr("opcache.jit")
		_, o.HasJIT = d["opcache.jit"]
		if ds.err != nil {
			o.Problems = append(o.Problems, ds.err.Error())
		}
	} else if o.Loaded {
		o.Problems = append(o.Problems, "directives: not reported")
	}
	return o, nil
}

// strict reads typed members of an untrusted JSON object, keeping the
// first problem.
type strict struct {
	obj  map[string]any
	path string
	err  error
}

func (s *strict) fail(key, format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("%s%s: %s", s.path, key, fmt.Sprintf(format, args...))
	}
}

func (s *strict) flag(key string) bool {
	switch v := s.obj[key].(type) {
	case bool:
		return v
	case nil:
		s.fail(key, "missing")
	default:
		s.fail(key, "not true or false")
	}
	return false
}

// num reads a whole number in [0, limit].
func (s *strict) num(key string, limit int64) int64 {
	n, ok := s.obj[key].(json.Number)
	if !ok {
		s.fail(key, "missing or not a number")
		return 0
	}
	x, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > float64(limit) || x != math.Trunc(x) {
		s.fail(key, "%.30q is not a whole number in [0, %d]", n.String(), limit)
		return 0
	}
	return int64(x)
}

func (s *strict) optNum(key string, limit int64) int64 {
	if v, ok := s.obj[key]; !ok || v == nil {
		return 0
	}
	return s.num(key, limit)
}

// str reads a short printable string.
func (s *strict) str(key string) string {
	v, ok := s.obj[key].(string)
	if !ok {
		s.fail(key, "missing or not a string")
		return ""
	}
	if len(v) > maxString {
		s.fail(key, "longer than %d bytes", maxString)
		return ""
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			s.fail(key, "holds a character that is not printable")
			return ""
		}
	}
	return v
}

func (s *strict) optStr(key string) string {
	if v, ok := s.obj[key]; !ok || v == nil {
		return ""
	}
	return s.str(key)
}
