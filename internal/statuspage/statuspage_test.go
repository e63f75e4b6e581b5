package statuspage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestGetDoesNotFollowRedirects has a status page answer 302 with a
// Location on another loopback server that counts its hits: the observer
// never reaches it and reports the redirect.
func TestGetDoesNotFollowRedirects(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("Active connections: 1\n"))
	}))
	defer target.Close()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	}))
	defer page.Close()
	for name, newClient := range map[string]func(what, rawURL, hint string, limit int64) *Client{"New": New, "NewClosing": NewClosing} {
		t.Run(name, func(t *testing.T) {
			if _, err := CheckURL("test status", page.URL+"/status", "http://127.0.0.1/status"); err != nil {
				t.Fatal(err)
			}
			c := newClient("test status", page.URL+"/status", "is the status page at that location?", 1<<10)
			defer c.Close()
			b, err := c.Get(context.Background())
			if err == nil {
				t.Fatalf("Get returned %q; want the redirect reported", b)
			}
			for _, want := range []string{"answered 302 Found", target.URL + "/elsewhere", "phptune does not follow redirects", "is the status page at that location?"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Get: %v; want %q in it", err, want)
				}
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the redirect's target was fetched %d time(s)", n)
			}
		})
	}
}
