// Package profile turns samples into where-the-time-goes: perf's native
// stacks (`perf script` text) and excimer's PHP stacks (collapsed lines)
// are parsed into folded stacks, classified into components (the Zend VM,
// the allocator, kernel networking...), summed into top lists, and read for
// findings that name the knobs they point to. It does no I/O: package
// perf runs perf, the lab runs the PHP sampler, and the CLI prints.
//
// Everything parsed here comes from processes of a lab, which are treated
// as hostile: command names and JIT symbol names are the lab's to choose,
// so every parser bounds lines, frames and distinct stacks, and never
// fails on what it cannot read (it counts it).
package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Frame is one frame of a native stack.
type Frame struct {
	IP     uint64
	Symbol string // "" when perf could not name it ([unknown])
	DSO    string // the mapped file, "[kernel.kallsyms]", "/tmp/perf-PID.map" for anonymous executable memory
}

// Kernel says the frame is the kernel's.
func (f Frame) Kernel() bool {
	return f.DSO == "[kernel.kallsyms]" || strings.HasPrefix(f.DSO, "[kernel.") || (f.DSO == "" && f.IP >= 0xffff800000000000)
}

// Anonymous says the frame is in anonymous executable memory (a JIT's
// code: PHP's, or PCRE's), which perf names after the process's perf map.
func (f Frame) Anonymous() bool {
	return strings.HasPrefix(f.DSO, "/tmp/perf-") || f.DSO == "//anon" || f.DSO == "[anon]"
}

// Sample is one sample of `perf script`: the process (command name and
// pid), and its stack, leaf first.
type Sample struct {
	Comm   string
	PID    int
	TID    int
	Frames []Frame
}

// Limits bound what a parser keeps of hostile input.
const (
	MaxLine   = 64 << 10 // bytes of one line
	MaxFrames = 256      // frames of one stack; deeper ones are cut at the root
)

// ErrMalformed wraps what a parser could not read.
var ErrMalformed = errors.New("malformed profile input")

// ReadPerfScript reads `perf script -F comm,pid,tid,ip,sym,dso` output
// (with call graphs: a header line, then one indented line per frame, then
// a blank line) and calls each for every sample, in order. Frames beyond
// MaxFrames are dropped at the root end; perf's sentinel frame
// (ffffffffffffffff [unknown]) is dropped. A header it cannot read ends
// the read with an error naming the line.
func ReadPerfScript(r io.Reader, each func(Sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	var cur *Sample
	flush := func() {
		if cur != nil {
			each(*cur)
			cur = nil
		}
	}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if cur == nil {
				return fmt.Errorf("%w: line %d: a frame before any sample header: %.80q", ErrMalformed, n, line)
			}
			f, ok := parseFrame(line)
			if !ok {
				return fmt.Errorf("%w: line %d: not a frame (ADDRESS SYMBOL (DSO)): %.80q", ErrMalformed, n, line)
			}
			if f.IP == ^uint64(0) {
				continue
			}
			if len(cur.Frames) < MaxFrames {
				cur.Frames = append(cur.Frames, f)
			}
			continue
		}
		flush()
		s, ok := parseHeader(line)
		if !ok {
			return fmt.Errorf("%w: line %d: not a sample header (COMM PID/TID ...): %.80q", ErrMalformed, n, line)
		}
		cur = &s
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: after line %d: %v", ErrMalformed, n, err)
	}
	flush()
	return nil
}

// parseHeader reads "COMM PID/TID [TIME: EVENT:]": the command name may
// hold spaces (a process names itself), so the pid is the first field,
// from the right, shaped N/N.
func parseHeader(line string) (Sample, bool) {
	fields := strings.Fields(line)
	for i := len(fields) - 1; i >= 1; i-- {
		p, t, ok := strings.Cut(fields[i], "/")
		if !ok {
			continue
		}
		pid, err1 := strconv.Atoi(p)
		tid, err2 := strconv.Atoi(t)
		if err1 != nil || err2 != nil || pid < 0 || tid < 0 {
			continue
		}
		return Sample{Comm: strings.Join(fields[:i], " "), PID: pid, TID: tid}, true
	}
	return Sample{}, false
}

// parseFrame reads "\tADDRESS SYMBOL (DSO)"; SYMBOL may hold spaces and
// parentheses (C++), so DSO is the last parenthesised group.
func parseFrame(line string) (Frame, bool) {
	s := strings.TrimSpace(line)
	addr, rest, ok := strings.Cut(s, " ")
	if !ok {
		return Frame{}, false
	}
	ip, err := strconv.ParseUint(addr, 16, 64)
	if err != nil {
		return Frame{}, false
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			sym, dso = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
		} else if strings.HasPrefix(rest, "(") {
			sym, dso = "", rest[1:len(rest)-1]
		}
	}
	if sym == "[unknown]" {
		sym = ""
	}
	if dso == "[unknown]" {
		dso = ""
	}
	return Frame{IP: ip, Symbol: sym, DSO: dso}, true
}
