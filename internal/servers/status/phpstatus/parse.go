package phpstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
)

// MaxBytes is the largest answer Parse reads. The script prints about
// 2 KiB; anything near this is not its output.
const MaxBytes = 64 << 10

// ErrStatus is wrapped by every error Parse returns.
var ErrStatus = errors.New("runtime status")

// Report is what the status script printed, part by part. A part that is
// absent or malformed is nil (or zero) and named in Problems.
type Report struct {
	PHPVersion string
	// Loaded: opcache's functions exist (the extension is loaded and
	// they are not in disable_functions).
	Loaded bool
	// RestrictAPI is opcache.restrict_api: a script outside it gets no
	// status.
	RestrictAPI string
	// Opcache is opcache_get_status(false); its MemoryConsumptionB and
	// MaxAcceleratedFiles come from Directives (0 without them).
	Opcache *results.OpcacheStatus
	// Directives are opcache's settings as opcache_get_configuration
	// gives them.
	Directives *Directives
	// Realpath is the answering worker's realpath cache.
	Realpath *results.RealpathStatus
	Problems []string
}

// Directives are the opcache settings the script reports.
type Directives struct {
	Enable              bool
	ValidateTimestamps  bool
	RevalidateFreq      int64
	MemoryConsumptionB  int64
	InternedBufferMiB   int64
	MaxAcceleratedFiles int64
	// HasJIT: PHP has the JIT (8.0 and later, built with it); JIT is
	// opcache.jit as reported ("" while the buffer is 0).
	HasJIT     bool
	JIT        string
	JITBufferB int64
}

// Parse reads the status script's answer. It comes from a worker that
// also runs the app (an auto_prepend_file runs before the script), so it
// is untrusted: at most MaxBytes, every figure a whole number in range,
// bools bools, strings short and printable, and every member the script
// always prints present. A part that fails is left out and named in
// Problems; only an answer that is not a JSON object is an error.
func Parse(body []byte) (*Report, error) {
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d the status script prints", ErrStatus, len(body), MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, fmt.Errorf("%w: not a JSON object: %.80v", ErrStatus, err)
	}
	r := &Report{}
	top := &fields{obj: doc}
	r.PHPVersion = top.str("php_version")
	r.Loaded = top.flag("loaded")
	r.RestrictAPI = top.optStr("restrict_api")
	if top.err != nil {
		r.Problems = append(r.Problems, top.err.Error())
	}
	var err error
	if r.Directives, err = parseDirectives(doc, r.Loaded); err != nil {
		r.Problems = append(r.Problems, "directives: "+err.Error())
	}
	if r.Opcache, err = parseOpcache(doc, r.Directives); err != nil {
		r.Problems = append(r.Problems, "opcache: "+err.Error())
	}
	if r.Realpath, err = parseRealpath(doc); err != nil {
		r.Problems = append(r.Problems, "realpath cache: "+err.Error())
	}
	return r, nil
}

func parseDirectives(doc map[string]any, loaded bool) (*Directives, error) {
	top := &fields{obj: doc}
	d := top.object("directives")
	if top.err != nil {
		return nil, top.err
	}
	if d == nil {
		if loaded {
			return nil, errors.New("not reported")
		}
		return nil, nil // opcache is not there to report any
	}
	s := &Directives{
		Enable:             d.flag("opcache.enable"),
		ValidateTimestamps: d.flag("opcache.validate_timestamps"),
		RevalidateFreq:     d.num("opcache.revalidate_freq", 1<<31),
		// opcache_get_configuration gives memory_consumption in bytes and
		// interned_strings_buffer in MiB, as the ini file sets it.
		MemoryConsumptionB:  d.num("opcache.memory_consumption", maxFigure),
		InternedBufferMiB:   d.num("opcache.interned_strings_buffer", 1<<20),
		MaxAcceleratedFiles: d.num("opcache.max_accelerated_files", 1<<31),
		JITBufferB:          d.optNum("opcache.jit_buffer_size", maxFigure),
		JIT:                 d.optStr("opcache.jit"),
	}
	_, s.HasJIT = d.obj["opcache.jit"]
	if d.err != nil {
		return nil, d.err
	}
	return s, nil
}

func parseOpcache(doc map[string]any, dir *Directives) (*results.OpcacheStatus, error) {
	top := &fields{obj: doc}
	o := top.object("opcache")
	if top.err != nil {
		return nil, top.err
	}
	if o == nil {
		return nil, errors.New("not reported (opcache not loaded, or opcache_get_status refused)")
	}
	s := &results.OpcacheStatus{Enabled: o.flag("enabled"), CacheFull: o.flag("cache_full")}
	if o.err != nil {
		return nil, o.err
	}
	if !s.Enabled {
		return s, nil
	}
	if m := o.object("memory_usage"); m != nil {
		s.UsedB, s.FreeB, s.WastedB = m.num("used_memory", maxFigure), m.num("free_memory", maxFigure), m.num("wasted_memory", maxFigure)
		o.err = errors.Join(o.err, m.err)
	} else if o.err == nil {
		o.fail("memory_usage", "missing")
	}
	if in := o.object("interned_strings_usage"); in != nil {
		s.InternedBufferB, s.InternedUsedB = in.num("buffer_size", maxFigure), in.num("used_memory", maxFigure)
		s.InternedStrings = in.optNum("number_of_strings", maxFigure)
		o.err = errors.Join(o.err, in.err)
	}
	if st := o.object("statistics"); st != nil {
		s.CachedScripts, s.CachedKeys, s.MaxCachedKeys = st.num("num_cached_scripts", maxFigure), st.num("num_cached_keys", maxFigure), st.num("max_cached_keys", maxFigure)
		s.OOMRestarts, s.HashRestarts, s.ManualRestarts = st.num("oom_restarts", maxFigure), st.num("hash_restarts", maxFigure), st.optNum("manual_restarts", maxFigure)
		s.Hits, s.Misses = st.optNum("hits", maxFigure), st.optNum("misses", maxFigure)
		o.err = errors.Join(o.err, st.err)
	} else if o.err == nil {
		o.fail("statistics", "missing")
	}
	if j := o.object("jit"); j != nil {
		s.JIT = &results.JITStatus{Enabled: j.flag("enabled"), On: j.flag("on"), BufferB: j.num("buffer_size", maxFigure), BufferFreeB: j.num("buffer_free", maxFigure)}
		if j.err == nil && s.JIT.BufferFreeB > s.JIT.BufferB {
			j.fail("buffer_free", "larger than buffer_size")
		}
		o.err = errors.Join(o.err, j.err)
	}
	if o.err != nil {
		return nil, o.err
	}
	if dir != nil {
		s.MemoryConsumptionB, s.MaxAcceleratedFiles = dir.MemoryConsumptionB, dir.MaxAcceleratedFiles
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
	s := &results.RealpathStatus{UsedB: r.num("used_bytes", maxFigure), Entries: r.num("entries", maxFigure), Reads: 1}
	ini := r.str("size_ini")
	if r.err != nil {
		return nil, r.err
	}
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
