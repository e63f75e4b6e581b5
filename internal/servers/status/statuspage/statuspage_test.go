package statuspage

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// TestNewUnix serves a page on a unix socket: the client asks with the
// given Host and path, keeps one connection for several reads, and refuses
// a listener of another account than the one named (the page is never
// read then).
func TestNewUnix(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "web.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(r.Host + " " + r.URL.Path))
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	defer srv.Close()

	c := NewUnix("test status", sock, "site.test", "/status", os.Geteuid(), "hint", 1<<10)
	defer c.Close()
	for range 3 {
		b, err := c.Get(context.Background())
		if err != nil || string(b) != "site.test /status" {
			t.Fatalf("Get: %q, %v; want the page asked as site.test /status", b, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 reads, want 1 kept alive", n)
	}
	other := NewUnix("test status", sock, "site.test", "/status", os.Geteuid()+1, "hint", 1<<10)
	defer other.Close()
	if b, err := other.Get(context.Background()); err == nil || !strings.Contains(err.Error(), "unix:"+sock+" (Host site.test) /status") {
		t.Errorf("Get from a listener of another account: %q, %v; want it refused, naming the socket", b, err)
	}
}

func TestCheckURLNoQuery(t *testing.T) {
	const want = "http://127.0.0.1:PORT/server-status"
	if err := CheckURLNoQuery("x status", "http://127.0.0.1:8080/server-status", want); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"http://127.0.0.1:8080/server-status?auto", "http://example.com/server-status", "ftp://127.0.0.1/"} {
		err := CheckURLNoQuery("x status", bad, want)
		if err == nil || !strings.HasPrefix(err.Error(), "x status URL ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
