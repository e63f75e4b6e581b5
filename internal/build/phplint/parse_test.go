package phplint

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	files := []string{"/s/ok.php", "/s/poly.php", "/s/dep.php", "/s/bad.php"}
	cases := []struct {
		name  string
		out   string
		files []string
		want  []Outcome
	}{
		{"empty", "", files, nil},
		{"one ok", "No syntax errors detected in /s/ok.php\n", files[:1],
			[]Outcome{{File: "/s/ok.php", Done: true, OK: true}}},
		{"PHP 8.4 on four files",
			"No syntax errors detected in /s/ok.php\n\n" +
				"Fatal error: Cannot redeclare function array_find() in /s/poly.php on line 2\nErrors parsing /s/poly.php\n\n" +
				"Deprecated: f(): Implicitly marking parameter $x as nullable is deprecated, the explicit nullable type must be used instead in /s/dep.php on line 2\n" +
				"No syntax errors detected in /s/dep.php\n\n" +
				"Parse error: syntax error, unexpected variable \"$x\", expecting \",\" or \";\" in /s/bad.php on line 3\nErrors parsing /s/bad.php\n",
			files, []Outcome{
				{File: "/s/ok.php", Done: true, OK: true},
				{File: "/s/poly.php", Done: true, Messages: []Message{{Level: "Fatal error", Text: "Cannot redeclare function array_find()", Line: 2}}},
				{File: "/s/dep.php", Done: true, OK: true, Messages: []Message{{Level: "Deprecated", Text: "f(): Implicitly marking parameter $x as nullable is deprecated, the explicit nullable type must be used instead", Line: 2}}},
				{File: "/s/bad.php", Done: true, Messages: []Message{{Level: "Parse error", Text: "syntax error, unexpected variable \"$x\", expecting \",\" or \";\"", Line: 3}}},
			}},
		{"stopped after the first", "No syntax errors detected in /s/ok.php\n\nFatal error: Allowed memory size", files,
			[]Outcome{{File: "/s/ok.php", Done: true, OK: true}}},
		{"unreadable", "Could not open input file: /s/ok.php\n", files[:1],
			[]Outcome{{File: "/s/ok.php", Done: true, Unreadable: true}}},
		{"PHP prefix and CRLF", "PHP Warning:  x in /s/ok.php on line 1\r\nPHP Deprecated: y in /s/ok.php on line 7\r\nNo syntax errors detected in /s/ok.php\r\n", files[:1],
			[]Outcome{{File: "/s/ok.php", Done: true, OK: true, Messages: []Message{{Level: "Warning", Text: "x", Line: 1}, {Level: "Deprecated", Text: "y", Line: 7}}}}},
		{"message naming another file keeps its place", "Fatal error: Cannot redeclare f() (previously declared in /s/a.php:2) in /s/other.php on line 9\nErrors parsing /s/ok.php\n", files[:1],
			[]Outcome{{File: "/s/ok.php", Done: true, Messages: []Message{{Level: "Fatal error", Text: "Cannot redeclare f() (previously declared in /s/a.php:2) in /s/other.php on line 9"}}}}},
		{"continuation line", "Fatal error: first\nsecond\nErrors parsing /s/ok.php\n", files[:1],
			[]Outcome{{File: "/s/ok.php", Done: true, Messages: []Message{{Level: "Fatal error", Text: "first\nsecond"}}}}},
		{"a verdict on a file out of order is not taken", "No syntax errors detected in /s/dep.php\n", files[:2], nil},
		{"a file named like a verdict", "No syntax errors detected in /s/ok.php\nNo syntax errors detected in /s/ok.php\n", []string{"/s/ok.php", "/s/ok.php"},
			[]Outcome{{File: "/s/ok.php", Done: true, OK: true}, {File: "/s/ok.php", Done: true, OK: true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Parse(c.out, c.files)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Parse:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestMessageFatal(t *testing.T) {
	for _, c := range []struct {
		level string
		want  bool
	}{{"Parse error", true}, {"Fatal error", true}, {"Compile error", true}, {"Deprecated", false}, {"Warning", false}, {"Notice", false}} {
		if got := (Message{Level: c.level}).Fatal(); got != c.want {
			t.Errorf("%s: Fatal() = %v, want %v", c.level, got, c.want)
		}
	}
}

// FuzzParse: any output gives verdicts on a prefix of the files, in
// order, and never panics.
func FuzzParse(f *testing.F) {
	f.Add("No syntax errors detected in a.php\n\nFatal error: x in b.php on line 2\nErrors parsing b.php\n", "a.php\nb.php")
	f.Add("Deprecated: y in a.php on line -1\nNo syntax errors detected in a.php\n", "a.php")
	f.Add("Parse error: z in a.php on line 99999999999999999999\nErrors parsing a.php", "a.php")
	f.Add("Could not open input file: \n", "")
	f.Fuzz(func(t *testing.T, out, names string) {
		files := strings.Split(names, "\n")
		got := Parse(out, files)
		if len(got) > len(files) {
			t.Fatalf("%d outcomes for %d files", len(got), len(files))
		}
		for i, o := range got {
			if o.File != files[i] || !o.Done {
				t.Fatalf("outcome %d is %+v, for file %q", i, o, files[i])
			}
			for _, m := range o.Messages {
				if m.Line < 0 || m.Level == "" {
					t.Fatalf("message %+v", m)
				}
			}
		}
	})
}
