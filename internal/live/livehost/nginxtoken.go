package livehost

import (
	"fmt"
)

// nginxToken is one word of an nginx configuration file, or one of the
// characters ";", "{", "}".
type nginxToken struct {
	text   string
	quoted bool
	line   int
	start  int // byte offset of its first character (a quote included)
	end    int // just past it
}

// maxNginxTokens bounds the tokens of one file.
const maxNginxTokens = 1 << 20

// tokenizeNginx splits an nginx configuration file as nginx's own reader
// does: words separated by blanks, "#" starting a comment where a word
// could start, single- or double-quoted words, backslash escapes inside
// and outside quotes (appendEscaped), "${name}" kept
// inside its word, and ";", "{", "}" as tokens of their own.
func tokenizeNginx(file string, b []byte) ([]nginxToken, error) {
	var toks []nginxToken
	line := 1
	i := 0
	for i < len(b) {
		ch := b[i]
		switch {
		case ch == '\n':
			line++
			i++
			continue
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
			continue
		case ch == '#':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			continue
		case ch == ';' || ch == '{' || ch == '}':
			toks = append(toks, nginxToken{text: string(ch), line: line, start: i, end: i + 1})
			i++
		case ch == '"' || ch == '\'':
			start, startLine := i, line
			var word []byte
			i++
			closed := false
			for i < len(b) {
				c := b[i]
				if c == '\\' && i+1 < len(b) {
					word, line = appendEscaped(word, b[i+1], line)
					i += 2
					continue
				}
				if c == ch {
					closed = true
					i++
					break
				}
				if c == '\n' {
					line++
				}
				word = append(word, c)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("%s:%d: unterminated quoted string", file, startLine)
			}
			// nginx lets ")" follow a quote, as an if's condition ends
			// ("if ($a = "b")"): it starts a word of its own.
			if i < len(b) && !isNginxSep(b[i]) && b[i] != ')' {
				return nil, fmt.Errorf("%s:%d: unexpected %q after a quoted string", file, line, b[i])
			}
			toks = append(toks, nginxToken{text: string(word), quoted: true, line: startLine, start: start, end: i})
		default:
			start := i
			var word []byte
			brace := false // inside ${...}
			for i < len(b) {
				c := b[i]
				if c == '\\' && i+1 < len(b) {
					word, line = appendEscaped(word, b[i+1], line)
					i += 2
					continue
				}
				if c == '{' && len(word) > 0 && word[len(word)-1] == '$' {
					brace = true
				} else if brace && c == '}' {
					brace = false
				} else if isNginxSep(c) {
					break
				}
				word = append(word, c)
				i++
			}
			toks = append(toks, nginxToken{text: string(word), line: line, start: start, end: i})
		}
		if len(toks) > maxNginxTokens {
			return nil, fmt.Errorf("%s: more than %d words", file, maxNginxTokens)
		}
	}
	return toks, nil
}

// appendEscaped appends a backslash followed by n to word as nginx reads
// it, quoted or not: \" \' \\ give the character, \t \r \n the control
// character, and any other keeps its backslash (a location's "\.php$"
// stays a regular expression's escaped dot). The backslash also keeps n
// from ending the word. line is the line the escape stands on; it comes
// back one more for an escaped newline, which still ends a line.
func appendEscaped(word []byte, n byte, line int) ([]byte, int) {
	switch n {
	case '"', '\'', '\\':
		return append(word, n), line
	case '\n':
		return append(word, '\\', n), line + 1
	case 't':
		return append(word, '\t'), line
	case 'r':
		return append(word, '\r'), line
	case 'n':
		return append(word, '\n'), line
	}
	return append(word, '\\', n), line
}

func isNginxSep(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ';', '{', '}':
		return true
	}
	return false
}

// maxNginxDepth bounds the nesting of blocks in one file.
const maxNginxDepth = 64

// parseNginx reads one file's directives (includes not expanded): each a
// name with its arguments ended by ";", or a block "{ ... }".
func parseNginx(file string, b []byte) ([]NginxDirective, error) {
	toks, err := tokenizeNginx(file, b)
	if err != nil {
		return nil, err
	}
	pos := 0
	var block func(depth int, open *nginxToken) ([]NginxDirective, int, error)
	block = func(depth int, open *nginxToken) ([]NginxDirective, int, error) {
		if depth > maxNginxDepth {
			return nil, 0, fmt.Errorf("%s:%d: blocks nested deeper than %d", file, open.line, maxNginxDepth)
		}
		var out []NginxDirective
		for pos < len(toks) {
			t := toks[pos]
			if !t.quoted && t.text == "}" {
				if open == nil {
					return nil, 0, fmt.Errorf("%s:%d: unexpected \"}\"", file, t.line)
				}
				pos++
				return out, t.end, nil
			}
			if !t.quoted && (t.text == ";" || t.text == "{") {
				return nil, 0, fmt.Errorf("%s:%d: unexpected %q", file, t.line, t.text)
			}
			d := NginxDirective{Name: t.text, File: file, Line: t.line, Start: t.start}
			pos++
			for {
				if pos >= len(toks) {
					return nil, 0, fmt.Errorf("%s:%d: %s: unexpected end of file, expecting \";\" or \"}\"", file, d.Line, d.Name)
				}
				a := toks[pos]
				pos++
				if !a.quoted && a.text == ";" {
					d.End = a.end
					break
				}
				if !a.quoted && a.text == "{" {
					d.IsBlock, d.BodyStart = true, a.end
					sub, end, err := block(depth+1, &a)
					if err != nil {
						return nil, 0, err
					}
					d.Block, d.End = sub, end
					if d.Block == nil {
						d.Block = []NginxDirective{}
					}
					break
				}
				if !a.quoted && a.text == "}" {
					return nil, 0, fmt.Errorf("%s:%d: unexpected \"}\"", file, a.line)
				}
				d.Args = append(d.Args, a.text)
			}
			out = append(out, d)
		}
		if open != nil {
			return nil, 0, fmt.Errorf("%s:%d: unexpected end of file, expecting \"}\"", file, open.line)
		}
		return out, len(b), nil
	}
	ds, _, err := block(0, nil)
	return ds, err
}
