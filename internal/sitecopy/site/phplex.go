package site

import (
	"strconv"
	"strings"
)

// phpTok is one token of a PHP configuration file: a string literal (its
// value, escapes applied), a bare word (define, true, array), a variable
// ($table_prefix), a number or one punctuation character.
type phpTok struct {
	kind byte // 's' string, 'w' word, 'v' variable, 'n' number, 'p' punctuation
	text string
	// literal is false for a double-quoted string that interpolates a
	// variable ("$x", "{$x}"): its value is set by code.
	literal bool
	// line is the line the token starts on (1 is the first).
	line int
}

// maxTokens bounds the tokens read from one file (a hostile file of a
// megabyte of commas stays cheap).
const maxTokens = 200000

// lexPHP splits PHP source into tokens, skipping comments, whitespace and
// anything outside <?php ... ?> (inline HTML). It never fails: text it
// cannot read becomes punctuation, which no pattern of the readers
// matches.
func lexPHP(src string) []phpTok {
	var out []phpTok
	inPHP := !strings.Contains(src, "<?")
	i := 0
	// ln is the line of src[lnAt]: tokens start at increasing offsets,
	// so each newline is counted once.
	ln, lnAt := 1, 0
	lineOf := func(pos int) int {
		ln += strings.Count(src[lnAt:pos], "\n")
		lnAt = pos
		return ln
	}
	for i < len(src) && len(out) < maxTokens {
		if !inPHP {
			j := strings.Index(src[i:], "<?")
			if j < 0 {
				break
			}
			i += j + 2
			if strings.HasPrefix(src[i:], "php") {
				i += 3
			} else if strings.HasPrefix(src[i:], "=") {
				i++
			}
			inPHP = true
			continue
		}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(src[i:], "?>"):
			inPHP = false
			i += 2
		case c == '#' && !strings.HasPrefix(src[i:], "#["), strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' && !strings.HasPrefix(src[i:], "?>") {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				i = len(src)
			} else {
				i += 2 + j + 2
			}
		case c == '\'':
			v, n := singleQuoted(src[i:])
			out = append(out, phpTok{kind: 's', text: v, literal: true, line: lineOf(i)})
			i += n
		case c == '"':
			v, lit, n := doubleQuoted(src[i:])
			out = append(out, phpTok{kind: 's', text: v, literal: lit, line: lineOf(i)})
			i += n
		case c == '$' && i+1 < len(src) && isWordByte(src[i+1]):
			j := i + 1
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			out = append(out, phpTok{kind: 'v', text: src[i+1 : j], line: lineOf(i)})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isWordByte(src[j]) || src[j] == '.') {
				j++
			}
			out = append(out, phpTok{kind: 'n', text: src[i:j], line: lineOf(i)})
			i = j
		case isWordByte(c) || c == '\\':
			j := i
			for j < len(src) && (isWordByte(src[j]) || src[j] == '\\') {
				j++
			}
			out = append(out, phpTok{kind: 'w', text: strings.TrimPrefix(src[i:j], "\\"), line: lineOf(i)})
			i = j
		case strings.HasPrefix(src[i:], "=>"):
			out = append(out, phpTok{kind: 'p', text: "=>", line: lineOf(i)})
			i += 2
		default:
			out = append(out, phpTok{kind: 'p', text: src[i : i+1], line: lineOf(i)})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// singleQuoted reads a '...' literal at the start of s: only \' and \\
// are escapes. It returns the value and the bytes read (to the end of s
// when the quote is not closed).
func singleQuoted(s string) (string, int) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		switch {
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '\\'):
			b.WriteByte(s[i+1])
			i += 2
		case s[i] == '\'':
			return b.String(), i + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), i
}

// doubleQuoted reads a "..." literal at the start of s with PHP's escapes
// (\n \t \r \v \e \f \\ \$ \" \0-\777 \xHH \u{H...}); a "$name" or "{$"
// in it makes it not literal.
func doubleQuoted(s string) (string, bool, int) {
	var b strings.Builder
	literal := true
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), literal, i + 1
		case c == '$' && i+1 < len(s) && (isWordByte(s[i+1]) && !(s[i+1] >= '0' && s[i+1] <= '9') || s[i+1] == '{'):
			literal = false
			b.WriteByte(c)
			i++
		case c == '{' && i+1 < len(s) && s[i+1] == '$':
			literal = false
			b.WriteByte(c)
			i++
		case c == '\\' && i+1 < len(s):
			i++
			e := s[i]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'v':
				b.WriteByte('\v')
			case 'e':
				b.WriteByte(0x1b)
			case 'f':
				b.WriteByte('\f')
			case '\\', '$', '"':
				b.WriteByte(e)
			case 'x':
				j := i + 1
				for j < len(s) && j < i+3 && isHex(s[j]) {
					j++
				}
				if j == i+1 {
					b.WriteString(`\x`)
					break
				}
				n, _ := strconv.ParseUint(s[i+1:j], 16, 8)
				b.WriteByte(byte(n))
				i = j - 1
			case 'u':
				end := strings.IndexByte(s[i:], '}')
				if i+1 < len(s) && s[i+1] == '{' && end > 2 {
					if n, err := strconv.ParseUint(s[i+2:i+end], 16, 32); err == nil && n <= 0x10ffff {
						b.WriteRune(rune(n))
						i += end
						break
					}
				}
				b.WriteString(`\u`)
			default:
				if e >= '0' && e <= '7' {
					j := i
					for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
						j++
					}
					n, _ := strconv.ParseUint(s[i:j], 8, 16)
					b.WriteByte(byte(n))
					i = j - 1
				} else {
					b.WriteByte('\\')
					b.WriteByte(e)
				}
			}
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), literal, i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
