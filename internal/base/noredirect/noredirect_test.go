package noredirect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// redirecting starts a target server that counts its hits and a server
// answering every request with code and a Location on the target.
func redirecting(t *testing.T, code int) (from string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("followed"))
	}))
	t.Cleanup(target.Close)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/secret", code)
	}))
	t.Cleanup(src.Close)
	return src.URL, hits
}

func TestClientDoesNotFollow(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			from, hits := redirecting(t, code)
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, from, nil)
			resp, err := Client(nil).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != code {
				t.Fatalf("status %d, want the redirect itself (%d)", resp.StatusCode, code)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the redirect's target was hit %d time(s)", n)
			}
			err = Check(resp)
			if err == nil {
				t.Fatal("Check: nil for a redirect")
			}
			msg := err.Error()
			if !strings.Contains(msg, "phptune does not follow redirects") || !strings.Contains(msg, "/secret") {
				t.Fatalf("Check: %q; want the code, the Location and the rule", msg)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		code int
		loc  string
		want string // "" for no error
	}{
		{200, "", ""},
		{204, "", ""},
		{404, "", ""},
		{502, "", ""},
		{302, "http://10.0.0.1/", `answered 302 Found (Location "http://10.0.0.1/"): phptune does not follow redirects`},
		{301, "", `answered 301 Moved Permanently (Location ""): phptune does not follow redirects`},
		{399, "/x", `answered 399  (Location "/x"): phptune does not follow redirects`},
		{302, "/\x1b]2;PWNED\a", `(Location "/\x1b]2;PWNED\a")`},
		{307, strings.Repeat("a", 300), `(Location "` + strings.Repeat("a", 200) + `"…)`},
	}
	for _, tt := range tests {
		resp := &http.Response{StatusCode: tt.code, Header: http.Header{}}
		if tt.loc != "" {
			resp.Header.Set("Location", tt.loc)
		}
		err := Check(resp)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%d) = %v, want nil", tt.code, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%d, %q) = %v, want %q", tt.code, tt.loc, err, tt.want)
		case err != nil && strings.ContainsAny(err.Error(), "\x1b\a"):
			t.Errorf("Check(%d, %q) = %q: a control character reaches the message", tt.code, tt.loc, err)
		}
	}
}
