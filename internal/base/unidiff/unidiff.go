// Package unidiff writes unified diffs (as diff -u does) of line lists: the
// patch a tune prints between its start and recommended knobs, and the
// changes apply would make to a host's files.
package unidiff

import (
	"fmt"
	"strings"
)

// Lines splits a file's text into its lines for Diff: a final newline ends
// the last line rather than starting an empty one, and an empty file has
// no lines.
func Lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

type opKind byte

const (
	opEqual opKind = ' '
	opDel   opKind = '-'
	opAdd   opKind = '+'
)

type op struct {
	kind opKind
	a, b int // line index in a and b (of the line itself, or where it would go)
	text string
}

// editScript is the shortest edit from a to b by longest common
// subsequence (quadratic, fine for config files of a few hundred lines).
func editScript(a, b []string) []op {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{opEqual, i, j, a[i]})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, op{opAdd, i, j, b[j]})
			j++
		default:
			ops = append(ops, op{opDel, i, j, a[i]})
			i++
		}
	}
	return ops
}

// Diff returns the unified diff (as diff -u writes it, with context
// lines of context) that turns a into b, or "" when they are equal. Lines
// must not contain newlines.
func Diff(aName, bName string, a, b []string, context int) string {
	ops := editScript(a, b)
	var changes []int
	for i, o := range ops {
		if o.kind != opEqual {
			changes = append(changes, i)
		}
	}
	if len(changes) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	// Group changes whose context would overlap or touch into one hunk.
	for k := 0; k < len(changes); {
		first, last := changes[k], changes[k]
		k++
		for k < len(changes) && changes[k]-last <= 2*context+1 {
			last = changes[k]
			k++
		}
		lo, hi := max(0, first-context), min(len(ops)-1, last+context)
		var aStart, bStart, aCount, bCount int
		aStart, bStart = ops[lo].a, ops[lo].b
		for _, o := range ops[lo : hi+1] {
			if o.kind != opAdd {
				aCount++
			}
			if o.kind != opDel {
				bCount++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
		for _, o := range ops[lo : hi+1] {
			sb.WriteByte(byte(o.kind))
			sb.WriteString(o.text)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// hunkRange formats a hunk's line range the way GNU diff does: 1-based
// start, ",count" omitted for one line, and for an empty range the line
// before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
