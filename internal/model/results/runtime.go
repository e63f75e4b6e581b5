package results

// Runtime is what the stack's servers said about their caches at the end of
// a run: opcache and the realpath cache from a status script run by
// php-fpm, the InnoDB buffer pool from MariaDB. The tuner sizes those
// caches from it (Tune.Sizing). A part that could not be read is absent
// and Errors says why; a figure is never invented.
type Runtime struct {
	Opcache  *OpcacheStatus  `json:"opcache,omitempty"`
	Realpath *RealpathStatus `json:"realpath_cache,omitempty"`
	InnoDB   *InnoDBStatus   `json:"innodb,omitempty"`
	Errors   []string        `json:"errors,omitempty"`
}

// OpcacheStatus is opcache_get_status() and opcache's directives as the
// pool's shared memory held them after the load (the cache is shared by
// every worker of the pool).
type OpcacheStatus struct {
	Enabled bool `json:"enabled"`
	// CacheFull is set when opcache could not add a script: its memory or
	// its key table was full.
	CacheFull bool `json:"cache_full"`
	// MemoryConsumptionB is opcache.memory_consumption; the interned
	// strings buffer is carved out of it. Used, free and wasted are the
	// scripts' part (wasted: scripts replaced or invalidated, reclaimed
	// only by a restart).
	MemoryConsumptionB int64 `json:"memory_consumption_bytes"`
	UsedB              int64 `json:"used_memory_bytes"`
	FreeB              int64 `json:"free_memory_bytes"`
	WastedB            int64 `json:"wasted_memory_bytes"`
	// InternedBufferB is the interned strings buffer's size; InternedUsedB
	// what its strings (InternedStrings of them) take.
	InternedBufferB int64 `json:"interned_strings_buffer_bytes"`
	InternedUsedB   int64 `json:"interned_strings_used_bytes"`
	InternedStrings int64 `json:"interned_strings"`
	// CachedKeys against MaxCachedKeys (opcache.max_accelerated_files
	// rounded up by PHP to the next prime of its table).
	CachedScripts       int64 `json:"cached_scripts"`
	CachedKeys          int64 `json:"cached_keys"`
	MaxCachedKeys       int64 `json:"max_cached_keys"`
	MaxAcceleratedFiles int64 `json:"max_accelerated_files"`
	// Restarts opcache made: out of memory, out of keys, asked for.
	OOMRestarts    int64 `json:"oom_restarts"`
	HashRestarts   int64 `json:"hash_restarts"`
	ManualRestarts int64 `json:"manual_restarts"`
	Hits           int64 `json:"hits"`
	Misses         int64 `json:"misses"`
	// JIT is the JIT's buffer; absent when PHP has no JIT.
	JIT *JITStatus `json:"jit,omitempty"`
}

// JITStatus is the JIT's part of opcache_get_status().
type JITStatus struct {
	Enabled     bool  `json:"enabled"`
	On          bool  `json:"on"`
	BufferB     int64 `json:"buffer_size_bytes"`
	BufferFreeB int64 `json:"buffer_free_bytes"`
}

// RealpathStatus is a php-fpm worker's realpath cache (each worker has its
// own): the largest of Reads readings, each answered by whichever worker
// took the request.
type RealpathStatus struct {
	UsedB   int64 `json:"used_bytes"`
	Entries int64 `json:"entries"`
	SizeB   int64 `json:"size_bytes"` // realpath_cache_size
	Reads   int   `json:"reads"`
}

// InnoDBStatus is MariaDB's InnoDB data and buffer pool: the tables' size
// from information_schema.TABLES at the end of the run, the pool's pages
// then, and its page requests during the run (warm-up included).
type InnoDBStatus struct {
	DataB       int64 `json:"data_bytes"`
	IndexB      int64 `json:"index_bytes"`
	BufferPoolB int64 `json:"buffer_pool_bytes"` // innodb_buffer_pool_size
	PagesData   int64 `json:"pages_data"`
	PagesTotal  int64 `json:"pages_total"`
	PageSizeB   int64 `json:"page_size_bytes"`
	// ReadRequests are logical page reads during the run, Reads those the
	// pool missed and read from disk.
	ReadRequests int64 `json:"read_requests"`
	Reads        int64 `json:"reads"`
}

// SizeDecision is the tuner's decision on one knob sized from what the
// running stack reported (opcache's sizes, the realpath cache, the InnoDB
// buffer pool, nginx's workers), with the numbers it rests on.
type SizeDecision struct {
	Knob string `json:"knob"`
	// From is the value in the search's recommendation, To the value
	// recommended (the same when kept).
	From string `json:"from"`
	To   string `json:"to"`
	// Action is "raised", "kept", "set" or "not read" (no data: the knob
	// is left as it was and nothing is invented).
	Action string `json:"action"`
	// Reason says it with the numbers: "kept 128M: 9 MiB used (7%)".
	Reason string `json:"reason"`
	// Trials are the trials whose readings decided.
	Trials []int `json:"trials,omitempty"`
	// Figures are the numbers machine-readable: used_bytes, size_bytes,
	// used_share, ... (docs/results-schema.md lists them per knob).
	Figures map[string]float64 `json:"figures,omitempty"`
}
