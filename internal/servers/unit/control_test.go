package unit

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/phptune/phptune/internal/base/peercred"
)

// TestControlDoesNotFollowRedirects: a control socket (unitd runs as the
// lab's account) that answers 302 does not send root's client anywhere.
func TestControlDoesNotFollowRedirects(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer target.Close()
	sock := filepath.Join(t.TempDir(), "control.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/config", http.StatusFound)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c := NewControl(sock, peercred.Any)
	defer c.Close()
	_, err = c.Status(context.Background())
	if err == nil || !strings.Contains(err.Error(), "answered 302 Found") || !strings.Contains(err.Error(), "phptune does not follow redirects") {
		t.Fatalf("Status: %v; want the 302 reported", err)
	}
	if err := c.Apply(context.Background(), "{}"); err == nil || !strings.Contains(err.Error(), "phptune does not follow redirects") {
		t.Fatalf("Apply: %v; want the 302 reported", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the redirect's target was hit %d time(s)", n)
	}
}
