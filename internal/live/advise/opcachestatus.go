package advise

import (
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/phpstatus"
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
	RestrictAPI string `json:"restrict_api,omitempty"`
	// DirectivesRead: the directives above were read; without them
	// (refused, or not reported) there is nothing to size from.
	DirectivesRead bool     `json:"-"`
	Problems       []string `json:"problems,omitempty"`
}

// ParseOpcache reads the status script's answer with phpstatus.Parse
// (the one parser of that document, and its rules for untrusted input)
// and arranges it as advise reports it. Only an answer that is not a JSON
// object is an error; a part that failed is left out and named in
// Problems.
func ParseOpcache(body []byte) (*Opcache, error) {
	r, err := phpstatus.Parse(body)
	if err != nil {
		return nil, err
	}
	o := &Opcache{PHPVersion: r.PHPVersion, Loaded: r.Loaded, RestrictAPI: r.RestrictAPI,
		Status: r.Opcache, Realpath: r.Realpath, Problems: r.Problems}
	if o.Status != nil && !o.Status.Enabled {
		o.Status = nil
	}
	if d := r.Directives; d != nil {
		o.DirectivesRead = true
		o.Enable, o.ValidateTimestamps, o.RevalidateFreq = d.Enable, d.ValidateTimestamps, d.RevalidateFreq
		o.MemoryConsumptionB, o.InternedBufferMiB, o.MaxAcceleratedFiles = d.MemoryConsumptionB, d.InternedBufferMiB, d.MaxAcceleratedFiles
		o.HasJIT, o.JIT, o.JITBufferB = d.HasJIT, d.JIT, d.JITBufferB
	}
	return o, nil
}
