package profile

import (
	"bufio"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// PHP is a PHP-level profile: the excimer sampler's stacks of PHP
// functions, from every request the lab's workers served while it ran.
type PHP struct {
	Samples int `json:"samples"`
	// Skipped counts lines that were not "frame;frame;... COUNT".
	Skipped int `json:"lines_skipped,omitempty"`
	// Self counts samples by the function running (the leaf);
	// Inclusive by every function on the stack, once per sample.
	Self      map[string]int `json:"self"`
	Inclusive map[string]int `json:"inclusive"`
	// Plugins counts samples with a frame of a WordPress plugin or theme
	// (the sampler marks such frames " [plugins/NAME]"), once per sample.
	Plugins map[string]int `json:"plugins,omitempty"`
	Folded  Folded         `json:"folded"`
}

// maxCount bounds one line's count (a sampler writes small counts).
const maxCount = 1 << 30

var pluginMark = regexp.MustCompile(`\[((?:plugins|mu-plugins|themes)/[^\]/]{1,100})\]$`)

// ReadCollapsed adds collapsed lines ("main;f;g 3", root first, a count
// last) to p. The file is written by the lab's workers: lines are bounded
// (MaxLine), frames per stack (MaxFrames) and counts checked; a line that
// does not parse is counted in Skipped.
func (p *PHP) ReadCollapsed(r io.Reader) {
	if p.Self == nil {
		*p = PHP{Self: map[string]int{}, Inclusive: map[string]int{}, Plugins: map[string]int{}, Folded: Folded{}}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			p.Skipped++
			continue
		}
		n, err := strconv.Atoi(line[i+1:])
		if err != nil || n <= 0 || n > maxCount {
			p.Skipped++
			continue
		}
		raw := strings.Split(line[:i], ";")
		if len(raw) > MaxFrames {
			raw = raw[len(raw)-MaxFrames:] // keep the leaf end
		}
		stack := make([]string, 0, len(raw)+1)
		stack = append(stack, "php")
		seen := map[string]bool{}
		plugins := map[string]bool{}
		for _, f := range raw {
			name := printableName(f)
			if name == "" {
				name = "[unknown]"
			}
			stack = append(stack, name)
			if m := pluginMark.FindStringSubmatch(name); m != nil {
				plugins[m[1]] = true
			}
			fn := functionOf(name)
			if !seen[fn] {
				seen[fn] = true
				p.Inclusive[fn] += n
			}
		}
		p.Samples += n
		p.Self[functionOf(stack[len(stack)-1])] += n
		for pl := range plugins {
			p.Plugins[pl] += n
		}
		p.Folded.add(stack, n)
	}
	if sc.Err() != nil {
		p.Skipped++
	}
}

// functionOf is a frame's function without the sampler's plugin mark.
func functionOf(frame string) string {
	if i := strings.LastIndex(frame, " ["); i > 0 && strings.HasSuffix(frame, "]") {
		return frame[:i]
	}
	return frame
}

// Entry is one line of a top list.
type Entry struct {
	Name    string  `json:"name"`
	Samples int     `json:"samples"`
	Share   float64 `json:"share"` // of the list's total
}

// Top returns the n largest counts of m as shares of total, largest
// first (ties by name).
func Top(m map[string]int, total, n int) []Entry {
	out := make([]Entry, 0, len(m))
	for k, v := range m {
		share := 0.0
		if total > 0 {
			share = float64(v) / float64(total)
		}
		out = append(out, Entry{k, v, share})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		return out[i].Name < out[j].Name
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
