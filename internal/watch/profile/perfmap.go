package profile

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// PerfMap names JIT code: the lines "START SIZE NAME" (hex, no 0x) that
// PHP's JIT writes to /tmp/perf-PID.map with opcache.jit_debug=0x10. The
// lab's workers write these files, so a map is hostile input: read with a
// size limit by the caller, and here every line that is not three
// well-formed fields, or a range that wraps, is skipped and counted.
type PerfMap struct {
	entries []mapEntry
	Skipped int
}

type mapEntry struct {
	start, end uint64
	name       string
}

// MaxMapEntries bounds the entries kept of all maps together.
const MaxMapEntries = 200000

// maxSymbol bounds a JIT symbol's name.
const maxSymbol = 256

// Add reads one perf map into m (the workers' maps are merged: they share
// the JIT buffer, mapped at one address in every worker of a master, so
// code one worker compiled runs in the others, which never write it down).
func (m *PerfMap) Add(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	for sc.Scan() {
		if len(m.entries) >= MaxMapEntries {
			m.Skipped++
			continue
		}
		f := strings.SplitN(strings.TrimSpace(sc.Text()), " ", 3)
		if len(f) != 3 {
			m.Skipped++
			continue
		}
		start, err1 := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
		size, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		name := printableName(f[2])
		if err1 != nil || err2 != nil || size == 0 || start+size < start || name == "" {
			m.Skipped++
			continue
		}
		m.entries = append(m.entries, mapEntry{start, start + size, name})
	}
	if sc.Err() != nil {
		m.Skipped++
	}
	sort.Slice(m.entries, func(i, j int) bool { return m.entries[i].start < m.entries[j].start })
}

// Lookup names the code at ip, if a map covers it.
func (m *PerfMap) Lookup(ip uint64) (string, bool) {
	if m == nil {
		return "", false
	}
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].start > ip }) - 1
	if i < 0 || ip >= m.entries[i].end {
		return "", false
	}
	return m.entries[i].name, true
}

// printableName keeps a name printable and bounded: control characters
// and the folded format's separators (";" and newlines) become "_".
func printableName(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxSymbol {
		s = s[:maxSymbol]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == ';' || r == '\uFFFD' {
			return '_'
		}
		return r
	}, s)
}
