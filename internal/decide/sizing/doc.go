// Package sizing decides the knobs the search does not vary but the running
// stack can size: opcache's memory, interned strings buffer, key table and
// JIT buffer, the realpath cache, the InnoDB buffer pool and nginx's
// workers. It reads what the servers reported at the end of a trial
// (results.Runtime, results.Observation) and returns, per knob, the value
// to recommend and the numbers the decision rests on.
//
// The rule, the same for every cache: a cache that overflowed (a restart,
// cache_full) or is more than NearFull used is raised to Headroom × what
// the workload used, rounded up to the knob's natural unit and clamped to
// its range; a cache with room is kept, never lowered, because shared
// memory pages that are never touched are never resident, so a smaller
// size would save nothing measurable. Keeping is a decision too: it
// records the numbers ("kept 128: 9 MiB used (7%)"). A knob without
// readings is "not read", never given invented numbers.
//
// The package does no I/O: package labstack reads the figures, package
// tune applies the decisions before the holdout measures them.
package sizing
