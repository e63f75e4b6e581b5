package statuspage

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var errNot = errors.New("not a test page")

func TestAutoFields(t *testing.T) {
	keys := map[string]bool{"BusyWorkers": true, "Scoreboard": true, "Total Accesses": true}
	cases := []struct {
		name, page string
		want       []Field
		err        string
	}{
		{"apache", "localhost\r\nServerMPM: event\r\nTotal Accesses: 7\r\nBusyWorkers: 1\r\nScoreboard: _W_\r\n",
			[]Field{{"Total Accesses", "7"}, {"BusyWorkers", "1"}, {"Scoreboard", "_W_"}}, ""},
		{"spaces kept inside", "Scoreboard:  _ _ \n", []Field{{"Scoreboard", "_ _"}}, ""},
		{"empty", "", nil, ""},
		{"repeated", "BusyWorkers: 1\nBusyWorkers: 2\n", nil, "BusyWorkers given twice"},
		{"too large", strings.Repeat("x", 101), nil, "101 bytes, more than 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AutoFields([]byte(c.page), 100, func(k string) bool { return keys[k] }, errNot)
			if c.err != "" {
				if !errors.Is(err, errNot) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q wrapping errNot", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestMissing(t *testing.T) {
	f := []Field{{"A", "1"}, {"C", "3"}}
	if m := Missing(f, "A", "B", "C"); m != "B" {
		t.Errorf("Missing = %q, want B", m)
	}
	if m := Missing(f, "C", "A"); m != "" {
		t.Errorf("Missing = %q, want none", m)
	}
}

func FuzzAutoFields(f *testing.F) {
	f.Add([]byte("BusyWorkers: 1\nIdleWorkers: 3\nScoreboard: __W_\n"))
	f.Add([]byte("Total Accesses: 6\r\nScoreboard: hk_\r\n"))
	f.Add([]byte("BusyWorkers: 1\nBusyWorkers: 1\n"))
	f.Add([]byte(":\n: :\nScoreboard:\n"))
	keys := map[string]bool{"BusyWorkers": true, "IdleWorkers": true, "Scoreboard": true, "Total Accesses": true}
	f.Fuzz(func(t *testing.T, b []byte) {
		fields, err := AutoFields(b, 4096, func(k string) bool { return keys[k] }, errNot)
		if err != nil {
			if !errors.Is(err, errNot) {
				t.Fatalf("error %v does not wrap errNot", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, fl := range fields {
			if !keys[fl.Key] || seen[fl.Key] {
				t.Fatalf("field %q: unknown or repeated", fl.Key)
			}
			seen[fl.Key] = true
			if fl.Value != strings.TrimSpace(fl.Value) || strings.ContainsAny(fl.Value, "\n") {
				t.Fatalf("value %q not one trimmed line", fl.Value)
			}
		}
	})
}
