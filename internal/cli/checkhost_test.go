package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCheckHostAsksTheSite: --check-url's request carries --check-host as
// its Host, before the change and in the health check after it.
func TestCheckHostAsksTheSite(t *testing.T) {
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
	step, err := urlStep(context.Background(), srv.URL+"/", "site.test")
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

func TestCheckHostRefusals(t *testing.T) {
	knobs := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(knobs, []byte("pm.max_children=7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "--knobs", knobs, "--check-host", "site.test"}, "--check-host names the Host of --check-url's request"},
		{[]string{"apply", "--knobs", knobs, "--check-url", "http://127.0.0.1/", "--check-host", "bad host\r\n"}, "--check-host:"},
	} {
		_, errs, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d\n%s", tc.args, code, errs)
		}
	}
}
