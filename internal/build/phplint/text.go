package phplint

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/base/termsafe"
)

// WriteText prints a report: the files that fail only on the newer PHP
// (newName, "PHP 8.4") with PHP's own message and line, those already
// failing on the older (oldName), the files with deprecations and warnings
// (at most perFile messages each), the files with no verdict, and a
// summary line.
func WriteText(w io.Writer, r *Report, newName, oldName string, perFile int) {
	if len(r.FailNew) > 0 {
		fmt.Fprintf(w, "fail on %s only (they compile on %s):\n", newName, oldName)
		for _, f := range r.FailNew {
			writeFile(w, f, f.Messages, true, perFile)
		}
	}
	if len(r.FailBoth) > 0 {
		fmt.Fprintf(w, "already fail on %s:\n", oldName)
		for _, f := range r.FailBoth {
			writeFile(w, f, f.Messages, true, perFile)
		}
	}
	if len(r.Deprecated) > 0 {
		fmt.Fprintf(w, "warnings of %s at compile time (the files compile):\n", newName)
		for _, f := range r.Deprecated {
			writeFile(w, f, f.Messages, false, perFile)
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "not checked:")
		for _, f := range r.Problems {
			fmt.Fprintf(w, "  %s: %s\n", termsafe.Line(f.Path), termsafe.Line(f.Problem))
		}
	}
	fmt.Fprintln(w, Summary(r, newName, oldName))
}

// writeFile prints one file and its messages: the fatal ones when fatal,
// else every one, at most perFile.
func writeFile(w io.Writer, f File, ms []Message, fatal bool, perFile int) {
	fmt.Fprintf(w, "  %s\n", termsafe.Line(f.Path))
	var show []Message
	for _, m := range ms {
		if !fatal || m.Fatal() {
			show = append(show, m)
		}
	}
	for i, m := range show {
		if i == perFile {
			fmt.Fprintf(w, "    ... and %d more\n", len(show)-i)
			break
		}
		where := ""
		if m.Line > 0 {
			where = fmt.Sprintf("line %d: ", m.Line)
		}
		text, _, _ := strings.Cut(m.Text, "\n")
		fmt.Fprintf(w, "    %s%s: %s\n", where, termsafe.Line(m.Level), termsafe.Line(text))
	}
}

// Summary is the report's last line: "1834 files checked in 12.4 s: 2
// fail on PHP 8.4 only, 1 already fails on PHP 8.2, 14 with deprecations
// or warnings".
func Summary(r *Report, newName, oldName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s checked in %.1f s: %d %s on %s only, %d already %s on %s, %d with deprecations or warnings",
		r.Checked, plural(r.Checked, "file", "files"), r.Seconds, len(r.FailNew), plural(len(r.FailNew), "fails", "fail"), newName,
		len(r.FailBoth), plural(len(r.FailBoth), "fails", "fail"), oldName, len(r.Deprecated))
	if len(r.Problems) > 0 {
		fmt.Fprintf(&b, ", %d not checked", len(r.Problems))
	}
	if r.Links > 0 {
		fmt.Fprintf(&b, "; %d symbolic %s not followed", r.Links, plural(r.Links, "link", "links"))
	}
	if r.Truncated {
		fmt.Fprintf(&b, "; more than %d .php files: only the first %d (in path order) were checked", r.Checked, r.Checked)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
