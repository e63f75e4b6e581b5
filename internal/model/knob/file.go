package knob

import (
	"fmt"
	"strings"
)

// ParseFile reads a knob file: one KNOB=VALUE per line; blank lines and lines
// starting with # are ignored. It returns the assignments for Config.Apply,
// or an error naming the first bad line.
func ParseFile(text string) ([]string, error) {
	lines, err := ParseFileLines(text)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, l.Assignment)
	}
	return out, nil
}

// Line is one assignment of a knob file and where it is.
type Line struct {
	N          int    // line number, from 1
	Assignment string // KNOB=VALUE, trimmed
}

// LineError is a bad line of a knob file: not KNOB=VALUE, an unknown knob
// or a value the knob does not take. Err is the reason (a *ValueError, or
// one wrapping ErrUnknownKnob).
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// ParseFileLines is ParseFile keeping each assignment's line number; a line
// that is not KNOB=VALUE is a *LineError.
func ParseFileLines(text string) ([]Line, error) {
	var out []Line
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, &LineError{Line: i + 1, Err: fmt.Errorf("%q is not KNOB=VALUE", line)}
		}
		out = append(out, Line{N: i + 1, Assignment: line})
	}
	return out, nil
}

// ApplyFile applies a knob file's assignments onto a copy of c, checking
// each value as Apply does; the first bad line is a *LineError naming it.
// Like Apply, it does not check the cross-knob rules: call Validate.
func (c Config) ApplyFile(text string) (Config, error) {
	lines, err := ParseFileLines(text)
	if err != nil {
		return nil, err
	}
	out := c.Clone()
	for _, l := range lines {
		name, value, _ := strings.Cut(l.Assignment, "=")
		if err := out.Set(strings.TrimSpace(name), value); err != nil {
			return nil, &LineError{Line: l.N, Err: err}
		}
	}
	return out, nil
}

// FormatFile writes c's differences from the distro defaults as a knob file.
func FormatFile(c Config, comment string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(comment), "\n") {
		if l != "" {
			b.WriteString("# " + l + "\n")
		}
	}
	for _, a := range c.Overrides() {
		b.WriteString(a + "\n")
	}
	return b.String()
}
