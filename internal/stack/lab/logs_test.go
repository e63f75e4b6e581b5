package lab

import "testing"

// TestLastLinesShowsEscapes checks that a log excerpt quoted in a message
// keeps its lines and shows, rather than passes on, the escape sequences
// a lab can write into its logs (a title, the clipboard, a cleared screen).
func TestLastLinesShowsEscapes(t *testing.T) {
	in := "first\nok\tline\n\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009bend\n"
	want := "ok\tline\n" + `\x1b]52;c;ZXZpbA==\a\x1b[2J\u009bend`
	if got := lastLines(in, 2); got != want {
		t.Fatalf("lastLines(%q, 2) = %q, want %q", in, got, want)
	}
}
