package livehost

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestURLCheckAsksTheSite: --check-url's request carries --check-host as
// its Host, before the change and in the health check after it.
func TestURLCheckAsksTheSite(t *testing.T) {
	var mu sync.Mutex
	var hosts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		if r.Host != "site.test" {
			w.WriteHeader(http.StatusNotFound) // the default server's answer
		}
	}))
	defer srv.Close()
	step, err := URLCheck(context.Background(), srv.URL+"/", "site.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := step.Healthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 2 || hosts[0] != "site.test" || hosts[1] != "site.test" {
		t.Errorf("the check asked hosts %v, want site.test twice", hosts)
	}
}
