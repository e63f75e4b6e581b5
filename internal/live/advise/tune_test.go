package advise

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func storedTune() *results.Tune {
	return &results.Tune{ID: "t1", App: "wordpress", Workload: "front", Recommended: map[string]string{"pm": "static", "pm.max_children": "8"},
		Curves:      []results.Curve{{Label: "recommended"}, {Label: "knee scan (static pool), knee ≈ 12"}},
		Holdout:     &results.Holdout{StartRPS: 100, RecommendedRPS: 150},
		Trials:      []results.Trial{{Phase: "knee", Connections: 40}, {Phase: "holdout", Connections: 20}},
		Environment: &results.Environment{Cores: 2, MemoryB: 4 << 30, Versions: map[string]string{"php-fpm": "8.2.36"}}}
}

func TestCompareTune(t *testing.T) {
	a := Advice{Pools: []PoolAdvice{
		{Pool: "same", MaxChildren: 8, Recommended: 8, WorkerPSSP95: 40 << 20, MemoryShareB: 400 << 20},
		{Pool: "small-host", MaxChildren: 20, Recommended: 5, WorkerPSSP95: 40 << 20, MemoryShareB: 200 << 20},
		{Pool: "quiet", MaxChildren: 5, Recommended: 5, WorkerPSSP95: 40 << 20, MemoryShareB: 2000 << 20},
		{Pool: "busy", MaxChildren: 10, Recommended: 20, MaxReached: 7, WorkerPSSP95: 40 << 20, MemoryShareB: 2000 << 20},
		{Pool: "large", MaxChildren: 30, Recommended: 30, WorkerPSSP95: 40 << 20, MemoryShareB: 2000 << 20},
		{Pool: "capped", MaxChildren: 2, Recommended: 4, MaxReached: 3, WorkerPSSP95: 40 << 20, MemoryShareB: 2000 << 20},
		{Pool: "lowered", MaxChildren: 100, Recommended: 20, WorkerPSSP95: 40 << 20, MemoryShareB: 800 << 20},
	}}
	c := CompareTune(a, storedTune(), "t1", "the newest tune of PHP 8.2")
	if c == nil || c.MaxChildren != 8 || c.PM != "static" || c.Knee != 12 || c.Connections != 20 || c.RecommendedRPS != 150 || c.PHP != "8.2.36" || len(c.Pools) != 7 {
		t.Fatalf("%+v", c)
	}
	for _, w := range []string{"Advise sends no load", "The tune measured pm.max_children 8 (its knee scan's throughput stopped rising at about 12 connections; 150 rps at 20 connections, 1.50× its start's) on wordpress front, a lab of 2 cores and 4.0 GiB"} {
		if !strings.Contains(c.Summary, w) {
			t.Errorf("summary lacks %q: %s", w, c.Summary)
		}
	}
	want := map[string]string{
		"same":       "the same size",
		"small-host": "this host's memory holds 5 workers of 40.0 MiB",
		"quiet":      "the pool never reached pm.max_children",
		"capped":     "advise raises at most twofold",
		"lowered":    "advise lowers the pool to 20 for memory, still more than the tune's 8",
		"busy":       "reached pm.max_children 7 times",
		"large":      "advise keeps the configured 30, more than the tune's 8",
	}
	for _, p := range c.Pools {
		if !strings.Contains(p.Why, want[p.Pool]) || p.Tune != 8 {
			t.Errorf("%s: %+v, want %q", p.Pool, p, want[p.Pool])
		}
	}
	bad := storedTune()
	bad.Recommended = map[string]string{"pm.max_children": "lots"}
	if CompareTune(a, bad, "t2", "") != nil || CompareTune(a, nil, "", "") != nil {
		t.Error("a tune without a pool size compared")
	}
}

func TestCompareTuneOfRedirects(t *testing.T) {
	tests := []struct {
		name      string
		redirects int64
		quoted    bool   // the gain is quoted
		warning   string // a word of the warning, "" for none
	}{
		{"all pages", 0, true, ""},
		{"a few redirects", 10, true, "10 of the tune's 3627 measured requests (0.3%)"},
		{"every request a 301", 3627, false, "no gain of it is quoted"},
	}
	for _, tc := range tests {
		tn := storedTune()
		b := &results.Bench{Requests: 3627, Errors: tc.redirects, ErrorsByClass: map[string]int64{"redirect": tc.redirects}}
		tn.Trials[1].Bench = b
		c := CompareTune(Advice{}, tn, "t1", "")
		if quoted := strings.Contains(c.Summary, "its start's"); quoted != tc.quoted || (c.RecommendedRPS > 0) != tc.quoted {
			t.Errorf("%s: quoted %v (rps %v): %s", tc.name, quoted, c.RecommendedRPS, c.Summary)
		}
		if (tc.warning == "") != (c.Warning == "") || !strings.Contains(c.Warning, tc.warning) || (tc.warning != "" && !strings.Contains(c.Summary, c.Warning)) {
			t.Errorf("%s: warning %q, want one with %q; summary %s", tc.name, c.Warning, tc.warning, c.Summary)
		}
	}
}
