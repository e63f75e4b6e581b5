// Command layout prints the Layout section of docs/development.md: every
// package of the module with the first sentence of its doc comment, so that
// the list of packages cannot go stale.
//
//	go run ./internal/tools/layout            # print the section
//	go run ./internal/tools/layout -w docs/development.md   # rewrite it in place
//
// The test of this package fails when docs/development.md differs from what
// the command prints; `go test ./internal/tools/layout -update` rewrites it too.
package main

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Package is one package of the module: its directory relative to the module
// root ("internal/stack/lab") and the first sentence of its doc comment.
type Package struct {
	Dir      string
	Synopsis string
	Imports  []string // the module's packages its non-test files import, as directories
}

// Begin and End mark the generated part of docs/development.md.
const (
	Begin = "<!-- layout:begin (generated: go run ./internal/tools/layout -w docs/development.md) -->"
	End   = "<!-- layout:end -->"
)

// lineWidth is the column the list is wrapped at.
const lineWidth = 100

// RenderGroups writes the packages group by group in Groups' order: a
// heading with the group's name, its directories and what it holds, then
// its packages as Render lists them.
func RenderGroups(pkgs []Package) string {
	var b strings.Builder
	for i, members := range byGroup(pkgs) {
		if len(members) == 0 {
			continue
		}
		if i < len(Groups) {
			g := Groups[i]
			fmt.Fprintf(&b, "\n### %d. %s (`%s`)\n\n", i+1, g.Name, strings.Join(g.Dirs, "`, `"))
			b.WriteString(wrap(g.About, lineWidth, ""))
			b.WriteString("\n")
		} else {
			b.WriteString("\n### In no group\n\n")
		}
		b.WriteString(Render(members))
	}
	return b.String()
}

// Render writes the packages as a Markdown list, one item per package in the
// order given, each wrapped at lineWidth with a two-space continuation indent.
func Render(pkgs []Package) string {
	var b strings.Builder
	for _, p := range pkgs {
		synopsis := p.Synopsis
		if synopsis == "" {
			synopsis = "(no doc comment)"
		}
		b.WriteString(wrap("- `"+p.Dir+"` — "+synopsis, lineWidth, "  "))
	}
	return b.String()
}

// wrap breaks text at spaces so that no line is longer than width (a single
// word longer than width keeps a line of its own), indenting every line after
// the first; it ends with a newline.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			b.WriteString(line + "\n")
			line = indent + word
		}
	}
	b.WriteString(line + "\n")
	return b.String()
}

// Splice returns doc with the text between its Begin and End lines replaced by
// section. It fails when the markers are missing, repeated or out of order,
// saying which.
func Splice(doc, section string) (string, error) {
	if n := strings.Count(doc, Begin); n != 1 {
		return "", fmt.Errorf("the document holds %d lines %q (want exactly one): put it above the Layout list", n, Begin)
	}
	if n := strings.Count(doc, End); n != 1 {
		return "", fmt.Errorf("the document holds %d lines %q (want exactly one): put it below the Layout list", n, End)
	}
	start := strings.Index(doc, Begin) + len(Begin)
	end := strings.Index(doc, End)
	if end < start {
		return "", errors.New("the layout:end marker comes before layout:begin: swap them")
	}
	return doc[:start] + "\n" + section + doc[end:], nil
}
