package labstack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

// TestMeasureMixOnWordPress brings up a real WordPress lab loaded with the
// mix: the page check reads the seeded blog's title, and a short
// measurement with --expect counts no unexpected body.
func TestMeasureMixOnWordPress(t *testing.T) {
	labtest.Home(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, lab.Options{Name: "mix", App: "wordpress"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(ctx, l, workload.Mix)
	if err != nil {
		t.Fatal(err)
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
