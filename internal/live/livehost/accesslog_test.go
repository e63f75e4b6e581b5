package livehost

import (
	"testing"
	"time"
)

func TestCountAccessLog(t *testing.T) {
	log := `127.0.0.1 - - [26/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 500 0 "-" "-"
127.0.0.1 - - [26/Nov/2026:10:00:10 +0000] "GET / HTTP/1.1" 200 0 "-" "-"
127.0.0.1 - - [26/Nov/2026:11:00:11 +0100] "GET / HTTP/1.1" 503 0 "-" "-"
custom format line
127.0.0.1 - - [26/Nov/2026:10:00:12 +0000] "GET / HTTP/1.1" 200 0 "-" "-"
127.0.0.1 - - [26/Nov/2026:10:00:20 +0000] "GET / HTTP/1.1" 500 0 "-" "-"`
	from := time.Date(2026, 11, 26, 10, 0, 10, 0, time.UTC)
	c := CountAccessLog([]byte(log), from, from.Add(10*time.Second))
	if c.Requests != 3 || c.Errors != 1 || c.Unparsed != 1 {
		t.Errorf("%+v", c)
	}
}

func TestWorse(t *testing.T) {
	for _, tc := range []struct {
		before, after ErrorCount
		worse         bool
	}{
		{ErrorCount{Requests: 100}, ErrorCount{Requests: 100, Errors: 5}, true},
		{ErrorCount{Requests: 100}, ErrorCount{Requests: 100, Errors: 2}, false},            // noise
		{ErrorCount{Requests: 100, Errors: 4}, ErrorCount{Requests: 100, Errors: 6}, false}, // not twice
		{ErrorCount{Requests: 100, Errors: 4}, ErrorCount{Requests: 100, Errors: 9}, true},  // 9% > 2x4% and +1pt
		{ErrorCount{Requests: 0}, ErrorCount{Requests: 1000, Errors: 5}, false},             // 0.5%: within a point
		{ErrorCount{Requests: 10, Errors: 10}, ErrorCount{Requests: 10, Errors: 10}, false}, // as bad as before
	} {
		if got := Worse(tc.before, tc.after); got != tc.worse {
			t.Errorf("%v -> %v: worse %v", tc.before, tc.after, got)
		}
	}
}

// FuzzCountAccessLog: any tail counts without panicking, never more
// errors than requests. (The line parser is fuzzed in package accesslog.)
func FuzzCountAccessLog(f *testing.F) {
	f.Add([]byte(`127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/7.88.1"`))
	f.Add([]byte(`[] "" 500`))
	f.Fuzz(func(t *testing.T, tail []byte) {
		c := CountAccessLog(tail, time.Time{}, time.Now().Add(1000*time.Hour))
		if c.Errors > c.Requests || c.Requests > 1 && len(tail) < 20 {
			t.Fatalf("%+v", c)
		}
	})
}
