package nginxstatus

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// Fixtures captured from nginx 1.22.1 (Debian 12): idle, and under 16
// concurrent connections to a 50 ms PHP script.
func TestFixtures(t *testing.T) {
	for file, want := range map[string]results.NginxStatus{
		"stub_status_idle.txt": {Active: 1, Accepts: 29, Handled: 29, Requests: 488, Writing: 1},
		"stub_status_busy.txt": {Active: 17, Accepts: 28, Handled: 28, Requests: 287, Writing: 17},
	} {
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		st, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if *st != want {
			t.Errorf("%s: %+v", file, st)
		}
		if st.Handled > st.Accepts || st.Reading+st.Writing+st.Waiting != st.Active || st.Writing < 1 {
			t.Errorf("%s: inconsistent %+v", file, st)
		}
	}
	for _, bad := range []string{"", "Active connections: x\nserver accepts handled requests\n 1 1 1\nReading: 0 Writing: 1 Waiting: 0\n", "<html>404</html>"} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrNotStatus) {
			t.Errorf("Parse(%q) = %v", bad, err)
		}
	}
}

func TestClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Active connections: 3 \nserver accepts handled requests\n 10 10 50 \nReading: 0 Writing: 2 Waiting: 1 \n"))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL + "/nginx-status")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The status request itself is not counted.
	if st.Active != 2 || st.Writing != 1 || st.Requests != 50 {
		t.Errorf("%+v", st)
	}
	if _, err := NewClient("http://192.0.2.1/nginx-status"); err == nil {
		t.Error("non-loopback URL accepted")
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"stub_status_idle.txt", "stub_status_busy.txt"} {
		b, err := os.ReadFile("testdata/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrNotStatus) {
				t.Errorf("error without ErrNotStatus: %v", err)
			}
			return
		}
		if st.Active < 0 || st.Requests < 0 || st.Reading < 0 {
			t.Errorf("negative counters %+v", st)
		}
	})
}
