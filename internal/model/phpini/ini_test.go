package phpini

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []Entry
	}{
		{"bare", "memory_limit = 256M\n", []Entry{{"memory_limit", "256M", "256M", 1}}},
		{"quoted with comment", "[PHP]\ndate.timezone = \"Europe/Paris\" ; here\n", []Entry{{"date.timezone", "Europe/Paris", `"Europe/Paris"`, 2}}},
		{"expression kept bare", "error_reporting = E_ALL & ~E_DEPRECATED ; c\n", []Entry{{"error_reporting", "E_ALL & ~E_DEPRECATED", "E_ALL & ~E_DEPRECATED", 1}}},
		{"unterminated quote", "x=\"open\n", []Entry{{"x", "open", `"open"`, 1}}},
		{"carriage return ends a line", "a = 1\rb = \"2\"\r\nc=3", []Entry{{"a", "1", "1", 1}, {"b", "2", `"2"`, 2}, {"c", "3", "3", 3}}},
		{"comments and junk", "; a\n# b\nno equals\nbad key = 1\n=2\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse([]byte(tc.src)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("opcache.enable=1\n; c\n[PHP]\nmemory_limit = \"256M\" ; x\nx=\"unterminated\n")
	f.Fuzz(func(t *testing.T, src string) {
		for _, e := range Parse([]byte(src)) {
			if e.Key == "" || strings.ContainsAny(e.Key, " \t\"") {
				t.Fatalf("bad key %q", e.Key)
			}
			if strings.ContainsAny(e.Raw+e.Value, "\n\r") {
				t.Fatalf("raw value %q spans lines", e.Raw)
			}
			// What Carry writes again reads back as the same value.
			if unwritable(e) == "" {
				back := Parse([]byte(e.Key + " = " + e.Raw + "\n"))
				if len(back) != 1 || back[0].Value != e.Value {
					t.Fatalf("%s = %s read back as %#v, not %q", e.Key, e.Raw, back, e.Value)
				}
			}
		}
	})
}
