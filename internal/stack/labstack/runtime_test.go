package labstack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestReadStatusOverHTTPDoesNotFollowRedirects: a lab's status script that
// answers 302 does not send root's reader to the URL it names.
func TestReadStatusOverHTTPDoesNotFollowRedirects(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer target.Close()
	lab := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/admin", http.StatusTemporaryRedirect)
	}))
	defer lab.Close()
	_, _, _, err := readStatusOverHTTP(context.Background(), lab.URL+"/phptune-status.php")
	if err == nil || !strings.Contains(err.Error(), "answered 307 Temporary Redirect") || !strings.Contains(err.Error(), "phptune does not follow redirects") {
		t.Fatalf("readStatusOverHTTP: %v; want the 307 reported", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the redirect's target was fetched %d time(s)", n)
	}
}
