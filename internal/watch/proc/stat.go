package proc

import (
	"bytes"
	"fmt"
)

// UserHZ is the unit of the times in /proc/PID/stat and /proc/stat. The
// kernel converts its internal tick (CONFIG_HZ, 100 to 1000) to USER_HZ,
// which is 100 on every architecture Linux supports, so the ABI never
// changes; sysconf(_SC_CLK_TCK) returns this same constant.
const UserHZ = 100

// Stat is the part of /proc/PID/stat the observer uses.
type Stat struct {
	PID   int
	Comm  string
	State byte
	PPID  int
	// UTime and STime are the process's own CPU time in ticks of UserHZ.
	UTime, STime uint64
	// CUTime and CSTime are the CPU time of children the process has
	// waited for. When a php-fpm worker exits between two samples, the
	// master reaps it and the part of its CPU the sampler did not see yet
	// shows up here.
	CUTime, CSTime uint64
	// StartTime (ticks since boot) tells a recycled PID from the process
	// that had it before.
	StartTime uint64
	// RSSPages is the resident set in pages (cheap but counts shared
	// pages in full; use smaps_rollup's PSS for memory cost).
	RSSPages int64
}

// CPUTicks is user plus system time in UserHZ ticks.
func (s Stat) CPUTicks() uint64 { return s.UTime + s.STime }

// ReadStat reads /proc/PID/stat. A process that exited yields ErrGone.
func (p *FS) ReadStat(pid int) (Stat, error) {
	b, err := p.readPID(pid, "stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// ParseStat parses the contents of /proc/PID/stat. The command name is in
// parentheses and may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func ParseStat(b []byte) (Stat, error) {
	var s Stat
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return s, fmt.Errorf("%w: stat: no (comm) in %.80q", ErrParse, b)
	}
	pid, ok := atou(bytes.TrimSpace(b[:open]))
	if !ok || pid > 1<<31 {
		return s, fmt.Errorf("%w: stat: bad pid in %.80q", ErrParse, b)
	}
	s.PID = int(pid)
	s.Comm = string(b[open+1 : end])
	rest := b[end+1:]
	// Fields after comm, numbered as in proc(5): 3 state, 4 ppid, ...
	field := 2
	for len(rest) > 0 && field < 24 {
		rest = bytes.TrimLeft(rest, " ")
		if len(rest) == 0 {
			break
		}
		i := bytes.IndexAny(rest, " \n")
		if i < 0 {
			i = len(rest)
		}
		tok := rest[:i]
		rest = rest[i:]
		field++
		if field == 3 {
			if len(tok) != 1 {
				return s, fmt.Errorf("%w: stat: bad state %q", ErrParse, tok)
			}
			s.State = tok[0]
			continue
		}
		var dst *uint64
		switch field {
		case 4:
			v, ok := atou(tok)
			if !ok || v > 1<<31 {
				return s, fmt.Errorf("%w: stat: bad ppid %q", ErrParse, tok)
			}
			s.PPID = int(v)
			continue
		case 14:
			dst = &s.UTime
		case 15:
			dst = &s.STime
		case 16, 17:
			// cutime and cstime are signed in the kernel's format
			// (long) but never negative.
			v, ok := atoi(tok)
			if !ok || v < 0 {
				return s, fmt.Errorf("%w: stat: bad field %d %q", ErrParse, field, tok)
			}
			if field == 16 {
				s.CUTime = uint64(v)
			} else {
				s.CSTime = uint64(v)
			}
			continue
		case 22:
			dst = &s.StartTime
		case 24:
			v, ok := atoi(tok)
			if !ok {
				return s, fmt.Errorf("%w: stat: bad rss %q", ErrParse, tok)
			}
			s.RSSPages = v
			continue
		default:
			continue
		}
		v, ok := atou(tok)
		if !ok {
			return s, fmt.Errorf("%w: stat: bad field %d %q", ErrParse, field, tok)
		}
		*dst = v
	}
	if field < 24 {
		return s, fmt.Errorf("%w: stat: only %d fields", ErrParse, field)
	}
	return s, nil
}

// atou parses a decimal unsigned integer without allocating.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// atoi parses a decimal signed integer that fits in int64.
func atoi(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := atou(b)
	if !ok || u > 1<<63-1 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}
