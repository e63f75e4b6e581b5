// Package termsafe makes text that came from outside phptune safe to print
// on a terminal.
//
// A lab's code, a live host's other accounts and every server phptune talks
// to choose some of the text phptune prints: process names (/proc/PID/comm
// and cmdline), status pages, log lines, page titles, MariaDB's answers,
// file names. A control character or an escape sequence in that text would
// be acted on by root's terminal (set its title, write the clipboard, hide
// or rewrite what follows), so every such character is replaced by a
// visible escape instead, never dropped: the reader sees that it was there.
//
// The visible form is Go's: "\a", "\b", "\t", "\n", "\v", "\f" and "\r" for
// those controls, "\x1b" for the other C0 controls, "\u007f" for DEL and
// "\u009b" for the C1 controls (U+0080 to U+009F, which some terminals read
// as ESC sequences: U+009B is CSI) and for the Unicode controls that
// reorder or break lines (the bidi embeddings, overrides, isolates and
// marks, U+2028 and U+2029), and "\xff" for each byte that is not valid
// UTF-8. An escape sequence is thus shown as its ESC escaped and the rest
// as the plain text it is ("\x1b]2;title\a"). A backslash is kept as it
// is, so the visible form is for reading, not for decoding back.
package termsafe

import (
	"strings"
	"unicode/utf8"
)

// Line returns s safe to print as one line, or as one field of a line:
// every control character, newline and tab included, is escaped.
func Line(s string) string { return escape(s, false) }

// Text returns s safe to print as lines of text: newlines and tabs are
// kept, every other control character (carriage return included, which
// would let a line overwrite what was printed before it) is escaped.
func Text(s string) string { return escape(s, true) }

// escape is Line and Text; multiline keeps newlines and tabs.
func escape(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == 0x7f:
			// As \u, not \x: inside a JSON string (phptune's --json
			// output passes through here) the escape stays valid JSON.
			writeHex(&b, `\u`, uint32(r), 4)
		case r < 0x20:
			if e := named[r]; e != "" {
				b.WriteString(e)
			} else {
				writeHex(&b, `\x`, uint32(r), 2)
			}
		case unsafeRune(r):
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnsafe is the index of s's first byte that escape changes, or -1.
func firstUnsafe(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(multiline && (c == '\n' || c == '\t')) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// named are the controls Go writes by a letter.
var named = map[rune]string{
	'\a': `\a`, '\b': `\b`, '\t': `\t`, '\n': `\n`, '\v': `\v`, '\f': `\f`, '\r': `\r`,
}

// unsafeRune says whether r, a rune above ASCII, is a C1 control or a
// Unicode control that reorders or breaks the line it is printed on.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls: U+009B is CSI, U+009D OSC
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // Arabic letter mark, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// writeHex writes prefix and v in width lower-case hex digits.
func writeHex(b *strings.Builder, prefix string, v uint32, width int) {
	const digits = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := (width - 1) * 4; shift >= 0; shift -= 4 {
		b.WriteByte(digits[v>>uint(shift)&0xf])
	}
}
