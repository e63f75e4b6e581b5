// Package shellquote writes command lines a POSIX shell reads back as the
// same words: the command phptune records for a run, the commands it
// suggests. It is the one quoting rule for every such line.
package shellquote

import "strings"

// Quote returns s as one shell word: unchanged when every byte is in a
// set no shell gives a meaning to (letters, digits and / . - _ = : % ,),
// otherwise in single quotes, a single quote inside written as a quote,
// a backslash and two quotes (close, escaped quote, reopen). The empty
// string is a pair of single quotes.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces.
func Join(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Quote(w)
	}
	return strings.Join(out, " ")
}

// plain reports whether r means nothing to a shell.
func plain(r rune) bool {
	switch r {
	case '/', '.', '-', '_', '=', ':', '%', ',':
		return true
	}
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}
