package workload

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestMixOnWordPress brings up a real WordPress lab: every URL of the mix
// answers 200 (comment POSTs 302, WordPress's redirect after posting).
func TestMixOnWordPress(t *testing.T) {
	labtest.Home(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, lab.Options{Name: "mix", App: "wordpress"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Parse(ctx, l, Mix)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Writes || len(w.Requests) != 1+len(mixPostWeights)+3 {
		t.Fatalf("mix: %+v", w)
	}
	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	kinds := map[string]bool{}
	for _, r := range w.Requests {
		req, err := http.NewRequestWithContext(ctx, r.Method, strings.TrimSuffix(l.URL, "/")+r.Path, bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range r.Header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusOK
		if r.Method == "POST" {
			want = http.StatusFound
		}
		if resp.StatusCode != want {
			t.Errorf("%s %s answered %d, want %d", r.Method, r.Path, resp.StatusCode, want)
		}
		switch {
		case r.Method == "POST":
			kinds["comment"] = true
		case r.Path == "/":
			kinds["front"] = true
		case strings.HasPrefix(r.Path, "/?s="):
			kinds["search"] = true
		case strings.HasPrefix(r.Path, "/category/"):
			kinds["archive"] = true
		case strings.Count(r.Path, "/") == 4:
			kinds["post"] = true
		}
	}
	if len(kinds) != 5 {
		t.Fatalf("the mix lacks a kind of page: %v", kinds)
	}
}
