package livehost

import (
	"testing"
	"time"
)

func TestParseAccessLine(t *testing.T) {
	for _, tc := range []struct {
		line   string
		status int
		ok     bool
	}{
		{`127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "GET /index.php HTTP/1.1" 200 7 "-" "Go-http-client/1.1"`, 200, true},
		{`::1 - bob [26/Nov/2026:10:35:04 +0100] "GET /a\x22b HTTP/1.1" 502 157 "-" "curl"`, 502, true},
		{`127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "-" 400 0 "-" "-"`, 400, true},
		{`127.0.0.1 - [01/Jan/2000:00:00:00 +0000] [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 503 0 "-" "-"`, 503, true},
		{`127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 5000 0`, 0, false},
		{`127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 099 0`, 0, false},
		{`{"time":"2026-11-26T10:35:04","status":500}`, 0, false},
		{`127.0.0.1 - - [yesterday] "GET / HTTP/1.1" 500 0`, 0, false},
		{`[26/Nov/2026:10:35:04 +0000] "GET`, 0, false},
	} {
		when, st, ok := ParseAccessLine([]byte(tc.line))
		if ok && when.Year() != 2026 {
			t.Errorf("%s: time %v, want the log's own (a '[' in the client's user name is not the time)", tc.line, when)
		}
		if st != tc.status || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.line, st, ok, tc.status, tc.ok)
		}
	}
}

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

func FuzzParseAccessLine(f *testing.F) {
	f.Add([]byte(`127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/7.88.1"`))
	f.Add([]byte(`[] "" 500`))
	f.Fuzz(func(t *testing.T, line []byte) {
		_, st, ok := ParseAccessLine(line)
		if ok && (st < 100 || st > 999) || !ok && st != 0 {
			t.Fatalf("status %d ok %v", st, ok)
		}
		c := CountAccessLog(line, time.Time{}, time.Now().Add(1000*time.Hour))
		if c.Errors > c.Requests || c.Requests > 1 && len(line) < 20 {
			t.Fatalf("%+v", c)
		}
	})
}
