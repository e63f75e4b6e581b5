package phplint

import (
	"strconv"
	"strings"
)

// Message is one diagnostic PHP printed while it compiled a file.
type Message struct {
	// Level is PHP's own word for it: "Parse error", "Fatal error",
	// "Deprecated", "Warning", "Notice", "Compile error".
	Level string `json:"level"`
	// Text is the message without its level and place.
	Text string `json:"text"`
	// Line is the line PHP named (0: none).
	Line int `json:"line,omitempty"`
}

// Fatal says whether the message stops the file from compiling.
func (m Message) Fatal() bool {
	switch m.Level {
	case "Parse error", "Fatal error", "Compile error", "Compile Error", "Core error", "Core Error":
		return true
	}
	return false
}

// Outcome is php -l's verdict on one file.
type Outcome struct {
	File string
	// Done is set when PHP printed its verdict on the file; a file PHP
	// never reached (it was killed, or crashed, before) has none.
	Done bool
	// OK: "No syntax errors detected"; Unreadable: "Could not open input
	// file" (the account cannot read it, or it went away).
	OK, Unreadable bool
	Messages       []Message
}

// levels are the prefixes of PHP's diagnostics as the CLI displays them
// (display_errors to the output, html_errors off).
var levels = []string{"Parse error", "Fatal error", "Compile error", "Compile Error", "Core error", "Core Error", "Deprecated", "Warning", "Notice", "Strict Standards"}

// Parse reads the output (standard output and error, interleaved) of
// `php -l FILE...` run on files, in that order, and returns the files PHP
// gave a verdict on, in order. PHP 8.3 and later lint every file named,
// each block ending in "No syntax errors detected in FILE" or "Errors
// parsing FILE"; earlier releases only the first. Each diagnostic line
// ("Deprecated: TEXT in FILE on line N") belongs to the file whose verdict
// follows it; a line that is no diagnostic and no verdict continues the
// previous diagnostic's text. The output ends early when PHP stopped:
// the files after the last verdict have no Outcome.
func Parse(out string, files []string) []Outcome {
	var res []Outcome
	next := 0 // the index in files of the file being read
	var cur []Message
	for _, raw := range strings.Split(out, "\n") {
		line := strings.TrimRight(raw, "\r")
		if next >= len(files) {
			break
		}
		f := files[next]
		switch {
		case line == "No syntax errors detected in "+f:
			res = append(res, Outcome{File: f, Done: true, OK: true, Messages: cur})
		case line == "Errors parsing "+f:
			res = append(res, Outcome{File: f, Done: true, Messages: cur})
		case line == "Could not open input file: "+f:
			res = append(res, Outcome{File: f, Done: true, Unreadable: true, Messages: cur})
		default:
			if m, ok := parseMessage(line, f); ok {
				cur = append(cur, m)
			} else if strings.TrimSpace(line) != "" && len(cur) > 0 {
				cur[len(cur)-1].Text += "\n" + line
			}
			continue
		}
		next++
		cur = nil
	}
	return res
}

// parseMessage reads one diagnostic line about file: "LEVEL: TEXT in
// FILE on line N", with or without PHP's "PHP " prefix (the log's form).
func parseMessage(line, file string) (Message, bool) {
	s := strings.TrimPrefix(line, "PHP ")
	for _, lv := range levels {
		rest, ok := strings.CutPrefix(s, lv+": ")
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, " ") // the log's "PHP Warning:  TEXT"
		m := Message{Level: lv, Text: rest}
		if i := strings.LastIndex(rest, " on line "); i >= 0 {
			n, err := strconv.Atoi(rest[i+len(" on line "):])
			head := rest[:i]
			if err == nil && n >= 0 && strings.HasSuffix(head, " in "+file) {
				m.Text, m.Line = strings.TrimSuffix(head, " in "+file), n
			}
		}
		return m, true
	}
	return Message{}, false
}
