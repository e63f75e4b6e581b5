package h2ostatus

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

// TestParseFixtures reads pages a real h2o 2.2.5 served in a lab: four
// requests at php-fpm, three kept-alive connections and the status
// request; then the same server idle but for the kept-alive connections.
func TestParseFixtures(t *testing.T) {
	for _, c := range []struct {
		file string
		want results.H2OStatus
	}{
		{"busy.json", results.H2OStatus{Connections: 8, MaxConnections: 1024, WorkerThreads: 2, InFlight: 5, Idle: 3}},
		{"idle.json", results.H2OStatus{Connections: 4, MaxConnections: 1024, WorkerThreads: 2, InFlight: 1, Idle: 3}},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		st, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if *st != c.want {
			t.Errorf("%s: Parse = %+v, want %+v", c.file, *st, c.want)
		}
	}
}

func TestParseTable(t *testing.T) {
	cases := []struct {
		name, page string
		want       results.H2OStatus
		err        string
	}{
		{"minimal", `{"connections": 2, "max-connections": 10, "requests": [{"method": "GET"}, {"method": ""}], "status-errors.502": 3}`,
			results.H2OStatus{Connections: 2, MaxConnections: 10, InFlight: 1, Idle: 1, Errors502: 3}, ""},
		{"no requests", `{"connections": 2, "max-connections": 10}`, results.H2OStatus{}, "no connections, max-connections or requests"},
		{"HTML", `<html>h2o</html>`, results.H2OStatus{}, "invalid character"},
		{"negative", `{"connections": -1, "max-connections": 10, "requests": []}`, results.H2OStatus{}, "a negative count"},
		{"not a number", `{"connections": "2", "max-connections": 10, "requests": []}`, results.H2OStatus{}, "cannot unmarshal"},
		{"too large", `{"x": "` + strings.Repeat("a", MaxBody) + `"}`, results.H2OStatus{}, "more than"},
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

func FuzzParse(f *testing.F) {
	for _, name := range []string{"busy.json", "idle.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"connections": 1, "max-connections": 1, "requests": [{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrNotStatus) {
				t.Fatalf("error %v is not ErrNotStatus", err)
			}
			return
		}
		if st.Connections < 0 || st.MaxConnections < 0 || st.InFlight < 0 || st.Idle < 0 || st.Errors502 < 0 {
			t.Fatalf("negative figure: %+v", st)
		}
	})
}

func TestClient(t *testing.T) {
	if _, err := NewClient("http://10.0.0.1/server-status"); err == nil {
		t.Error("a status URL off loopback was accepted")
	}
	if _, err := NewClient("http://127.0.0.1:1/server-status?x"); err == nil {
		t.Error("a URL with a query was accepted")
	}
	body, _ := os.ReadFile("testdata/busy.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/server-status/json" {
			http.NotFound(w, r)
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
	// The status request's own connection is left out.
	if st.Connections != 7 || st.InFlight != 4 || st.Idle != 3 {
		t.Errorf("connections %d in flight %d idle %d, want 7, 4 and 3", st.Connections, st.InFlight, st.Idle)
	}
	bad, _ := NewClient(srv.URL + "/nope")
	if _, err := bad.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "status handler") {
		t.Errorf("a 404 gave %v", err)
	}
}
