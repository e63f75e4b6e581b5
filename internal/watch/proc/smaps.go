package proc

import (
	"bytes"
	"fmt"
)

// Memory is a process's memory from /proc/PID/smaps_rollup, in bytes.
//
// RSS counts every resident page the process maps, so pages shared with
// other processes (php-fpm's opcache shared memory, the PHP binary and
// libraries, pages inherited copy-on-write from the master) are counted once
// per process and a sum of RSS over workers overstates the memory they use.
// PSS divides each shared page by the number of processes mapping it, so PSS
// adds up across processes to what they really take; USS is the memory only
// this process has (Private_Clean + Private_Dirty): what exiting it frees.
type Memory struct {
	RSS  int64
	PSS  int64
	USS  int64
	Swap int64
	// SwapPSS is the process's proportional share of swapped-out pages.
	SwapPSS int64
}

// ReadMemory reads /proc/PID/smaps_rollup (Linux 4.14 and later). Kernel
// threads have an empty file and yield zeros.
func (p *FS) ReadMemory(pid int) (Memory, error) {
	b, err := p.readPID(pid, "smaps_rollup")
	if err != nil {
		return Memory{}, err
	}
	return ParseSmapsRollup(b)
}

// ParseSmapsRollup parses the contents of smaps_rollup: a header line naming
// the [rollup] range, then "Key:   N kB" lines.
func ParseSmapsRollup(b []byte) (Memory, error) {
	var m Memory
	var privClean, privDirty int64
	seen := 0
	orig := b
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			continue
		}
		key := line[:colon]
		var dst *int64
		switch string(key) { // no allocation: the compiler recognizes this form
		case "Rss":
			dst = &m.RSS
		case "Pss":
			dst = &m.PSS
		case "Private_Clean":
			dst = &privClean
		case "Private_Dirty":
			dst = &privDirty
		case "Swap":
			dst = &m.Swap
		case "SwapPss":
			dst = &m.SwapPSS
		default:
			continue
		}
		val := bytes.TrimSpace(line[colon+1:])
		unit := int64(1)
		if bytes.HasSuffix(val, []byte(" kB")) {
			val = bytes.TrimSpace(val[:len(val)-3])
			unit = 1024
		}
		v, ok := atoi(val)
		if !ok || v < 0 || v > (1<<62)/unit {
			return Memory{}, fmt.Errorf("%w: smaps_rollup: bad value in %.80q", ErrParse, line)
		}
		*dst = v * unit
		seen++
	}
	if seen == 0 && len(bytes.TrimSpace(orig)) > 0 {
		return Memory{}, fmt.Errorf("%w: smaps_rollup: no Rss/Pss lines", ErrParse)
	}
	m.USS = privClean + privDirty
	return m, nil
}
