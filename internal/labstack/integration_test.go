package labstack

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/lab/labtest"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/pagecheck"
)

// TestMixOnWordPress brings up a real WordPress lab: every URL of the mix
// answers 200 (comment POSTs 302, WordPress's redirect after posting), the
// page check reads the seeded blog's title, and a short measurement with
// --expect counts no unexpected body.
func TestMixOnWordPress(t *testing.T) {
	labtest.Home(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, lab.Options{Name: "mix", App: "wordpress"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := ParseWorkload(ctx, l, WorkloadMix)
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

	st := New(l, w)
	page, err := st.CheckPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if page.Status != 200 || page.Title == "" || page.Bytes < 1000 {
		t.Fatalf("page check: %s", page)
	}
	if warn := PageWarnings(pagecheck.Page{}, page); len(warn) > 0 {
		t.Fatalf("a healthy front page warned: %q", warn)
	}

	w.Expect = "phptune lab" // the seeded blog's name, on every page
	st = New(l, w)
	st.ObserveInterval = 500 * time.Millisecond
	b, err := st.Measure(ctx, 2, 2*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Requests == 0 || b.Errors != 0 {
		t.Fatalf("requests %d errors %v warnings %q", b.Requests, b.ErrorsByClass, b.Warnings)
	}
	if !strings.Contains(b.Command, "--workload mix") || !strings.Contains(b.Command, "--expect 'phptune lab'") {
		t.Fatalf("command %q", b.Command)
	}

	// An expression the pages do not carry: every 200 is an error, the
	// comment POSTs' 302s are not matched.
	w.Expect = "no such words on any page"
	b, err = New(l, w).Measure(ctx, 2, time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := b.ErrorsByClass[load.ClassUnexpectedBody]; n == 0 || n != b.StatusCodes["200"] {
		t.Fatalf("unexpected_body %d of %v", n, b.StatusCodes)
	}
}
