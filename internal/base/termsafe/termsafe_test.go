package termsafe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "php-fpm8.2 (pid 812)", "php-fpm8.2 (pid 812)"},
		{"empty", "", ""},
		{"utf-8 kept", "café – 日本", "café – 日本"},
		{"backslash kept", `C:\x1b`, `C:\x1b`},
		{"OSC title with BEL", "h2o\x1b]2;PWNED\a", `h2o\x1b]2;PWNED\a`},
		{"OSC with ST", "\x1b]52;c;aGk=\x1b\\", `\x1b]52;c;aGk=\x1b\`},
		{"CSI hide", "ok\x1b[8mhidden", `ok\x1b[8mhidden`},
		{"8-bit CSI", "a\u009b31mb", `a\u009b31mb`},
		{"C1 OSC", "\u009d0;t\u009c", `\u009d0;t\u009c`},
		{"DEL", "a\x7fb", `a\u007fb`},
		{"NUL", "a\x00b", `a\x00b`},
		{"newline and tab", "a\nb\tc", `a\nb\tc`},
		{"carriage return", "fine\rEVIL", `fine\rEVIL`},
		{"named controls", "\b\v\f", `\b\v\f`},
		{"bidi override", "user\u202etxt.exe", `user\u202etxt.exe`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"surrogate encoded", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"replacement char kept", "\uFFFD", "\uFFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.want {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"lines kept", "one\ntwo\tthree\n", "one\ntwo\tthree\n"},
		{"escape in a line", "line 1\n\x1b[2Jline 2", "line 1\n\\x1b[2Jline 2"},
		{"carriage return escaped", "a\r\nb", "a\\r\nb"},
		{"bell", "ding\a", `ding\a`},
		{"C1", "\u0085next", `\u0085next`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestUnchangedIsSame checks that safe text is returned as it is, without
// a copy.
func TestUnchangedIsSame(t *testing.T) {
	s := strings.Repeat("safe text ", 10)
	if got := Line(s); got != s {
		t.Fatalf("Line changed safe text: %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { Line(s) }); n != 0 {
		t.Errorf("Line allocated %v times on safe text", n)
	}
}

// checkSafe fails t when out could drive a terminal: a control byte other
// than those allowed, a C1 or reordering rune, or invalid UTF-8.
func checkSafe(t *testing.T, in, out string, multiline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("escape(%q) = %q: not valid UTF-8", in, out)
	}
	for _, r := range out {
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			t.Fatalf("escape(%q, multiline %v) = %q keeps %U", in, multiline, out, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "h2o\x1b]2;PWNED\a", "\x1b[8m", "\u009b1m", "\u202e", "\xff\xfe", "a\r\nb\t", "\xed\xa0\x80", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text := Line(s), Text(s)
		checkSafe(t, s, line, false)
		checkSafe(t, s, text, true)
		if strings.Count(text, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Text(%q) = %q: newlines not kept", s, text)
		}
		if firstUnsafe(s, false) < 0 && line != s {
			t.Fatalf("Line(%q) = %q changed safe text", s, line)
		}
		if Line(line) != line || Text(text) != text {
			t.Fatalf("escaping %q twice changed it", s)
		}
	})
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	in := "plan: /etc/php\x1b]2;PWNED\a/pool.d\n\tnext\r\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if want := "plan: /etc/php\\x1b]2;PWNED\\a/pool.d\n\tnext\\r\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}

// TestTextKeepsJSONValid: phptune's --json output passes through Text
// (the command line's writers); the escaped document is still valid JSON
// and decodes to the same strings, hostile ones included.
func TestTextKeepsJSONValid(t *testing.T) {
	for _, s := range []string{"plain", "esc \x1b]2;PWNED\a", "del \x7f", "csi \u009b31m", "bidi \u202egnp.exe", "line\u2028sep", "tab\tnl\n"} {
		doc, err := json.MarshalIndent(map[string]string{"title": s}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out := Text(string(doc))
		var back map[string]string
		if err := json.Unmarshal([]byte(out), &back); err != nil {
			t.Fatalf("%q: %v\n%s", s, err, out)
		}
		if back["title"] != s {
			t.Errorf("%q came back as %q", s, back["title"])
		}
		for _, r := range out {
			if r == 0x1b || r == 0x7f || r == 0x9b || r == 0x202e || r == 0x2028 {
				t.Errorf("%q: %U reached the output raw", s, r)
			}
		}
	}
}
