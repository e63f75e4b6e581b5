// Package doccheck reads phptune's Markdown documentation for what its tests
// check: every link between README.md and the pages of docs/ resolves to a
// file of the repository (and a heading of it when the link names one).
package doccheck

import (
	"strings"
	"unicode"
)

// Link is an inline Markdown link, [text](target), found outside code.
type Link struct {
	Line   int    // 1-based line of the document
	Target string // as written, with its #fragment
}

// Links returns the inline links of a Markdown document, leaving out those
// inside fenced code blocks and code spans (command examples are not links).
func Links(markdown string) []Link {
	var links []Link
	fenced := false
	for i, line := range strings.Split(markdown, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, target := range lineLinks(line) {
			links = append(links, Link{Line: i + 1, Target: target})
		}
	}
	return links
}

// lineLinks returns the targets of the "](target)" pairs of one line that lie
// outside code spans.
func lineLinks(line string) []string {
	var targets []string
	inCode := false
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '`':
			inCode = !inCode
		case !inCode && strings.HasPrefix(line[i:], "]("):
			rest := line[i+2:]
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return targets
			}
			target := rest[:end]
			if sp := strings.IndexByte(target, ' '); sp >= 0 { // [t](url "title")
				target = target[:sp]
			}
			targets = append(targets, target)
			i += 2 + end
		}
	}
	return targets
}

// Anchors returns the fragment names GitHub gives a document's headings:
// lower case, spaces as hyphens, punctuation other than hyphens and
// underscores removed, a repeated name suffixed -1, -2...
func Anchors(markdown string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(markdown, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := Slug(title)
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// Slug is a heading's fragment name as GitHub makes it, before the suffix of
// a repeated heading.
func Slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// itoa formats a small non-negative count.
func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
