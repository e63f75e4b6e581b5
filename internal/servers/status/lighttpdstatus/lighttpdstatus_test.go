package lighttpdstatus

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

// TestParseFixtures reads pages a real lighttpd 1.4.69 served in a lab:
// six requests at php-fpm and three kept-alive connections, the status
// request itself among the handled.
func TestParseFixtures(t *testing.T) {
	b, err := os.ReadFile("testdata/busy.txt")
	if err != nil {
		t.Fatal(err)
	}
	st, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	want := results.LighttpdStatus{BusyServers: 10, IdleServers: 1355, TotalAccesses: 6, TotalKBytes: 2, UptimeS: 27, KeepAlive: 3, Handling: 7}
	if *st != want {
		t.Errorf("Parse = %+v, want %+v", *st, want)
	}
	b, err = os.ReadFile("testdata/statistics-busy.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := ParseStatistics(b, st); err != nil {
		t.Fatal(err)
	}
	if st.FastCGIRequests != 13 || st.FastCGIActive != 6 || st.FastCGIOverloaded != 0 || st.FastCGIDied != 0 {
		t.Errorf("statistics: %+v", *st)
	}
}

func TestParseTable(t *testing.T) {
	const base = "BusyServers: 2\nIdleServers: 8\n"
	cases := []struct {
		name, page string
		want       results.LighttpdStatus
		err        string
	}{
		{"states", base + "Scoreboard: .qrRhswWSkCE_x_\n", results.LighttpdStatus{BusyServers: 2, IdleServers: 8, Reading: 4, Handling: 2, Writing: 3, KeepAlive: 1, Closing: 2}, ""},
		{"CRLF and unknown lines", "Host: x\r\n" + strings.ReplaceAll(base, "\n", "\r\n") + "Scoreboard: k_\r\n", results.LighttpdStatus{BusyServers: 2, IdleServers: 8, KeepAlive: 1}, ""},
		{"no scoreboard", base, results.LighttpdStatus{}, "no Scoreboard line"},
		{"no busy", "IdleServers: 1\nScoreboard: _\n", results.LighttpdStatus{}, "no BusyServers line"},
		{"HTML page", "<html><body>lighttpd</body></html>", results.LighttpdStatus{}, "no BusyServers"},
		{"negative", "BusyServers: -1\nIdleServers: 1\nScoreboard: _\n", results.LighttpdStatus{}, "is not a count"},
		{"repeated", base + "BusyServers: 3\nScoreboard: _\n", results.LighttpdStatus{}, "given twice"},
		{"odd state", base + "Scoreboard: hZ\n", results.LighttpdStatus{}, "scoreboard character 'Z'"},
		{"too large", base + "Scoreboard: " + strings.Repeat("_", MaxBody) + "\n", results.LighttpdStatus{}, "more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := Parse([]byte(c.page))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrNotStatus) {
					t.Fatalf("err = %v, want ErrNotStatus saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *st != c.want {
				t.Errorf("Parse = %+v, want %+v", *st, c.want)
			}
		})
	}
}

func TestParseStatisticsTable(t *testing.T) {
	cases := []struct {
		name, page               string
		active, reqs, over, died int64
		err                      string
	}{
		{"two backends overloaded", "fastcgi.requests: 90\ngw.active-requests: 4\ngw.backend..0.overloaded: 3\ngw.backend..1.overloaded: 2\ngw.backend..0.died: 1\ngw.backend..load: 4\n", 4, 90, 5, 1, ""},
		{"named host, older names", "fastcgi.requests: 9\nfastcgi.active-requests: 1\nfastcgi.backend.php.0.overloaded: 7\n", 1, 9, 7, 0, ""},
		{"other modules skipped", "proxy.requests: 5\nfastcgi.requests: 1\ngw.active-requests: 0\ngw.backend.x.overloaded: 9\n", 0, 1, 0, 0, ""},
		{"no fastcgi", "proxy.requests: 5\n", 0, 0, 0, 0, "no fastcgi.requests"},
		{"not a count", "fastcgi.requests: many\n", 0, 0, 0, 0, "is not a count"},
		{"not key: value", "fastcgi.requests 5\n", 0, 0, 0, 0, "is not KEY: COUNT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st results.LighttpdStatus
			err := ParseStatistics([]byte(c.page), &st)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrNotStatus) {
					t.Fatalf("err = %v, want ErrNotStatus saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.FastCGIActive != c.active || st.FastCGIRequests != c.reqs || st.FastCGIOverloaded != c.over || st.FastCGIDied != c.died {
				t.Errorf("got %+v", st)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"busy.txt", "statistics-busy.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("BusyServers: 1\nIdleServers: 1\nScoreboard: h_\n"))
	f.Add([]byte("fastcgi.requests: 1\ngw.active-requests: 1\ngw.backend..0.overloaded: 9223372036854775807\ngw.backend..1.overloaded: 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if st, err := Parse(b); err != nil {
			if !errors.Is(err, ErrNotStatus) {
				t.Fatalf("error %v is not ErrNotStatus", err)
			}
		} else {
			if st.BusyServers < 0 || st.IdleServers < 0 || st.KeepAlive < 0 || st.Handling < 0 {
				t.Fatalf("negative figure: %+v", st)
			}
			if sum := st.KeepAlive + st.Reading + st.Handling + st.Writing + st.Closing; sum > int64(len(b)) {
				t.Fatalf("%d connections counted in %d bytes", sum, len(b))
			}
		}
		var st results.LighttpdStatus
		if err := ParseStatistics(b, &st); err != nil && !errors.Is(err, ErrNotStatus) {
			t.Fatalf("error %v is not ErrNotStatus", err)
		}
		if st.FastCGIOverloaded < 0 || st.FastCGIDied < 0 || st.FastCGIActive < 0 || st.FastCGIRequests < 0 {
			t.Fatalf("negative counter: %+v", st)
		}
	})
}

func TestClient(t *testing.T) {
	if _, err := NewClient("http://10.0.0.1/server-status", ""); err == nil {
		t.Error("a status URL off loopback was accepted")
	}
	if _, err := NewClient("http://127.0.0.1:1/server-status?auto", ""); err == nil {
		t.Error("a URL with a query was accepted (Fetch adds ?auto)")
	}
	if _, err := NewClient("http://127.0.0.1:1/server-status", "http://example.com/server-statistics"); err == nil {
		t.Error("a statistics URL off loopback was accepted")
	}
	page, _ := os.ReadFile("testdata/busy.txt")
	stats, _ := os.ReadFile("testdata/statistics-busy.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/server-status" && r.URL.RawQuery == "auto":
			w.Write(page)
		case r.URL.Path == "/server-statistics":
			w.Write(stats)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+"/server-status", srv.URL+"/server-statistics")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The status request's own connection is left out.
	if st.BusyServers != 9 || st.Handling != 6 || st.FastCGIActive != 6 {
		t.Errorf("busy %d handling %d fastcgi active %d, want 9, 6 and 6", st.BusyServers, st.Handling, st.FastCGIActive)
	}
	bad, _ := NewClient(srv.URL+"/nope", "")
	if _, err := bad.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "status-url") {
		t.Errorf("a 404 gave %v", err)
	}
}
