package profile

// Functions only this package's tests use.

// Len is the number of entries kept.
func (m *PerfMap) Len() int { return len(m.entries) }
