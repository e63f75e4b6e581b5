package livehost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFPMDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"", 0, false}, {"0", 0, false}, {"10", 10 * time.Second, false}, {"10s", 10 * time.Second, false},
		{"2m", 2 * time.Minute, false}, {"1h", time.Hour, false}, {"1d", 24 * time.Hour, false},
		{" 5s ", 5 * time.Second, false}, {"-1", 0, true}, {"s", 0, true}, {"10x", 0, true}, {"1.5s", 0, true},
		// php-fpm holds seconds in an int: found by FuzzParseFPMDuration.
		{"2700000h", 0, true}, {"2147483647", 2147483647 * time.Second, false}, {"24855d", 24855 * 24 * time.Hour, false}, {"24856d", 0, true},
	}
	for _, c := range cases {
		got, err := ParseFPMDuration(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseFPMDuration(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func FuzzParseFPMDuration(f *testing.F) {
	for _, s := range []string{"", "0", "10s", "2m", "1d", "-1", "9999999999h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseFPMDuration(s)
		if err == nil && d < 0 {
			t.Errorf("%q: negative %v", s, d)
		}
	})
}

// TestGraceChange: a configuration without process_control_timeout (as
// Debian's) gets phptune's, in a [global] section of a file its pool
// include reads; one that sets it, in any [global] section, gets none.
func TestGraceChange(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "php-fpm.conf")
	poolDir := filepath.Join(dir, "pool.d")
	os.MkdirAll(poolDir, 0o755)
	os.WriteFile(filepath.Join(poolDir, "www.conf"), []byte("[www]\nlisten = /run/php/fpm.sock\npm = dynamic\n"), 0o644)
	write := func(global string) *FPMHost {
		os.WriteFile(conf, []byte("[global]\npid = /run/php/fpm.pid\n"+global+"include="+poolDir+"/*.conf\n"), 0o644)
		h, err := ReadFPM(conf, "")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	c, err := GraceChange(write(";process_control_timeout = 0\n"), "www")
	if err != nil || c == nil {
		t.Fatalf("Debian's configuration: %v %v", c, err)
	}
	if c.Path != filepath.Join(poolDir, GraceDropInName) || !strings.Contains(string(c.Content), "[global]\nprocess_control_timeout = 10s\n") {
		t.Errorf("change %s:\n%s", c.Path, c.Content)
	}
	// Once written, the configuration read again has a grace.
	os.WriteFile(c.Path, c.Content, 0o644)
	h := write("")
	if d, err := ControlTimeout(h); err != nil || d != ReloadGrace {
		t.Errorf("with the drop-in: %v %v", d, err)
	}
	if c, err := GraceChange(h, "www"); c != nil || err != nil {
		t.Errorf("a second change: %v %v", c, err)
	}
	os.Remove(c.Path)
	if c, err := GraceChange(write("process_control_timeout = 30s\n"), "www"); c != nil || err != nil {
		t.Errorf("the administrator's own grace: %v %v", c, err)
	}
	if _, err := GraceChange(write("process_control_timeout = soon\n"), "www"); err == nil {
		t.Error("a bad value was accepted")
	}
}
