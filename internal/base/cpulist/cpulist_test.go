package cpulist

import (
	"fmt"
	"testing"
)

func TestParse(t *testing.T) {
	got, err := Parse("0,2-3,3")
	if err != nil || fmt.Sprint(got) != "[0 2 3]" {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := Parse(" 0 , 1-1 "); err != nil || fmt.Sprint(got) != "[0 1]" {
		t.Fatalf("spaces: %v %v", got, err)
	}
	for _, bad := range []string{"", " ", "a", "x", "3-1", "1-0", "-1", "5000", "4096", "0,,1", "0-", "1023-1024"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOnline(t *testing.T) {
	cpus, text, err := Online()
	if err != nil {
		t.Skip(err)
	}
	if len(cpus) == 0 || text == "" {
		t.Errorf("Online() = %v, %q", cpus, text)
	}
}

// FuzzParse: a list that parses is non-empty, in [0, 1023], each CPU once.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0-1,3", "0,,1", "0,2-3,3", " 0 ", "1-0", "4096", "0-1023"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := Parse(s)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, c := range cpus {
			if c < 0 || c > 1023 || seen[c] {
				t.Fatalf("Parse(%q) = %v", s, cpus)
			}
			seen[c] = true
		}
		if len(cpus) == 0 {
			t.Fatalf("Parse(%q) accepted an empty list", s)
		}
	})
}
