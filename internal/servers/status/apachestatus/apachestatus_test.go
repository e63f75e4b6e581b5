package apachestatus

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestParseFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want results.ApacheStatus
	}{
		{"prefork.txt", results.ApacheStatus{MPM: "prefork", BusyWorkers: 1, IdleWorkers: 3, TotalAccesses: 1, Slots: 4, Waiting: 3, Writing: 1}},
		{"event.txt", results.ApacheStatus{MPM: "event", BusyWorkers: 11, IdleWorkers: 39, TotalAccesses: 18234, ReqPerSec: 1519.5,
			Processes: 2, ConnsTotal: 10, ConnsAsyncKeepAlive: 2, Slots: 150, Waiting: 36, Reading: 1, Writing: 11, KeepAlive: 2, Open: 100}},
	} {
		b, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if *got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, *got, tc.want)
		}
	}
}

func TestParseTable(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       *results.ApacheStatus // nil: an error
	}{
		{"minimal", "BusyWorkers: 2\nIdleWorkers: 0\nScoreboard: WK\n", &results.ApacheStatus{BusyWorkers: 2, Slots: 2, Writing: 1, KeepAlive: 1}},
		{"crlf and spaces", "BusyWorkers:  2 \r\nIdleWorkers: 1\r\nScoreboard: W_S\r\n", &results.ApacheStatus{BusyWorkers: 2, IdleWorkers: 1, Slots: 3, Writing: 1, Waiting: 1, Starting: 1}},
		{"every state", "BusyWorkers: 1\nIdleWorkers: 1\nScoreboard: _SRWKDCLGI.\n", &results.ApacheStatus{BusyWorkers: 1, IdleWorkers: 1, Slots: 11,
			Waiting: 1, Starting: 1, Reading: 1, Writing: 1, KeepAlive: 1, DNS: 1, Closing: 1, Logging: 1, Finishing: 1, Cleanup: 1, Open: 1}},
		{"rate as C prints it", "ReqPerSec: .5\nBusyWorkers: 0\nIdleWorkers: 1\nScoreboard: _\n", &results.ApacheStatus{ReqPerSec: 0.5, IdleWorkers: 1, Slots: 1, Waiting: 1}},
		{"empty scoreboard", "BusyWorkers: 0\nIdleWorkers: 0\nScoreboard:\n", &results.ApacheStatus{}},
		{"html page", "<html><body><h1>Apache Server Status</h1>", nil},
		{"no scoreboard", "BusyWorkers: 1\nIdleWorkers: 1\n", nil},
		{"no idle", "BusyWorkers: 1\nScoreboard: W\n", nil},
		{"negative", "BusyWorkers: -1\nIdleWorkers: 1\nScoreboard: _\n", nil},
		{"not a number", "BusyWorkers: many\nIdleWorkers: 1\nScoreboard: _\n", nil},
		{"bad rate", "ReqPerSec: NaN\nBusyWorkers: 1\nIdleWorkers: 1\nScoreboard: _\n", nil},
		{"bad scoreboard", "BusyWorkers: 1\nIdleWorkers: 1\nScoreboard: _X_\n", nil},
		{"twice", "BusyWorkers: 1\nBusyWorkers: 2\nIdleWorkers: 1\nScoreboard: _\n", nil},
		{"too large", "BusyWorkers: 1\nIdleWorkers: 1\nScoreboard: " + strings.Repeat("_", MaxBody) + "\n", nil},
	} {
		got, err := Parse([]byte(tc.body))
		if tc.want == nil {
			if err == nil || !errors.Is(err, ErrNotStatus) {
				t.Errorf("%s: got %+v, %v; want an ErrNotStatus", tc.name, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if *got != *tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, *got, *tc.want)
		}
	}
}

// FuzzParse: any input parses or fails with ErrNotStatus, and what parses
// is consistent: the scoreboard's counts add up to its slots, no count is
// negative.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"prefork.txt", "event.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("BusyWorkers: 1\nIdleWorkers: 1\nScoreboard: _W\n"))
	f.Add([]byte("ReqPerSec: 1e309\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrNotStatus) {
				t.Fatalf("error %v is not ErrNotStatus", err)
			}
			return
		}
		sum := st.Waiting + st.Starting + st.Reading + st.Writing + st.KeepAlive + st.Closing + st.Logging + st.Finishing + st.Cleanup + st.DNS + st.Open
		if sum != st.Slots {
			t.Fatalf("scoreboard counts %d, slots %d", sum, st.Slots)
		}
		if st.BusyWorkers < 0 || st.IdleWorkers < 0 || st.TotalAccesses < 0 || st.ReqPerSec < 0 {
			t.Fatalf("negative figure: %+v", st)
		}
	})
}

func TestClient(t *testing.T) {
	if _, err := NewClient("http://10.0.0.1/server-status"); err == nil {
		t.Error("a status URL off loopback was accepted")
	}
	if _, err := NewClient("http://127.0.0.1:1/server-status?auto"); err == nil {
		t.Error("a URL with a query was accepted (Fetch adds ?auto)")
	}
	body, _ := os.ReadFile("testdata/event.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "auto" {
			http.Error(w, "want ?auto", http.StatusBadRequest)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL + "/server-status")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The status request's own slot is left out.
	if st.BusyWorkers != 10 || st.Writing != 10 {
		t.Errorf("busy %d writing %d, want 10 and 10", st.BusyWorkers, st.Writing)
	}
	bad, _ := NewClient(srv.URL + "/nope")
	srv.Config.Handler = http.NotFoundHandler()
	if _, err := bad.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "mod_status") {
		t.Errorf("a 404 gave %v", err)
	}
}
