package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// The server-error fixtures are real runs on the 2-core VM against a lab
// with tiny backlogs and one worker (listen.backlog=8,
// nginx.listen_backlog=8, pm=static, pm.max_children=1, the hello app):
// bench-errors.json is `phptune bench --lab el1 -c 100 -d 2s --warmup 1s
// --no-observe --json`; tune-errors.json the tune in its "command" (-c
// 200, 3 s trials), its observer samples kept for trials 31 and 32 only
// and latency distributions dropped, to keep the file small.

func loadJSON[T any](t *testing.T, name string) *T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	goldentest.CheckString(t, golden, got)
}

// section cuts the server errors' part out of a page.
func section(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<div id="server-errors">`)
	if i < 0 {
		t.Fatal("the page has no server-errors section")
	}
	j := strings.Index(page[i:], "<h2>")
	if j < 0 {
		t.Fatal("the server-errors section is not followed by another")
	}
	return page[i : i+j]
}

func TestServerErrorsGolden(t *testing.T) {
	b := loadJSON[results.Bench](t, "bench-errors.json")
	checkGolden(t, "bench-errors.text.golden", render(t, "text", Run{Bench: b}))
	checkGolden(t, "bench-errors.html.golden", section(t, render(t, "html", Run{Bench: b})))
	tn := loadJSON[results.Tune](t, "tune-errors.json")
	checkGolden(t, "tune-errors.text.golden", render(t, "text", Run{Tune: tn}))
	checkGolden(t, "tune-errors.html.golden", section(t, render(t, "html", Run{Tune: tn})))

	// What the sections must say, beside the golden files' exact text.
	text := render(t, "text", Run{Bench: b})
	if !strings.Contains(text, "Explained    28544 of 28544 502s were nginx's connect() to the fpm socket failing with EAGAIN: the fpm socket's backlog (listen.backlog=8) was full") {
		t.Errorf("bench summary lacks the explanation:\n%s", text)
	}
	page := section(t, render(t, "html", Run{Tune: tn}))
	for _, want := range []string{"<h3>start (holdout trials 27, 30, 31)</h3>", "182853 of 182853 502s were nginx&#39;s connect()", "<h3>recommended (holdout trials 28, 29, 32)</h3>\n<p>No errors logged.</p>", "Trial 1 (drift, 200 connections, start)"} {
		if !strings.Contains(page, want) {
			t.Errorf("tune page lacks %q:\n%s", want, page)
		}
	}
}

// A lab's log line is the lab account's to write: markup in it is shown,
// never run.
func TestServerErrorsEscaped(t *testing.T) {
	b := loadJSON[results.Bench](t, "bench-errors.json")
	b.ServerErrors.Classes[0].Example = attack
	b.ServerErrors.Explanations[0] = attack
	out := render(t, "html", Run{Bench: b})
	if strings.Contains(out, "<script>window.pwned") || strings.Contains(out, "<img src=x") {
		t.Fatal("markup from a server log reached the page unescaped")
	}
	if strings.Count(section(t, out), "&lt;script&gt;window.pwned=1&lt;/script&gt;") != 2 {
		t.Errorf("the hostile line is not shown escaped:\n%s", section(t, out))
	}
}

// A run whose logs were read and held nothing says so; one stored before
// phptune read them shows no section.
func TestServerErrorsNoneAndOld(t *testing.T) {
	b := loadJSON[results.Bench](t, "bench-errors.json")
	b.ServerErrors = &results.ServerErrors{Logs: []results.ServerLog{{Name: "nginx", Lines: 0}, {Name: "php-fpm", Lines: 3}}}
	var sb strings.Builder
	ServerErrorsText(&sb, b.ServerErrors, "  ", 13, true)
	if sb.String() != "  Server logs  nginx 0 lines (0 bytes), php-fpm 3 lines (0 bytes), appended in the measured part\n  Log errors   none\n" {
		t.Errorf("clean run:\n%q", sb.String())
	}
	if s := section(t, render(t, "html", Run{Bench: b})); !strings.Contains(s, "<p>No errors logged.</p>") {
		t.Errorf("clean run's section:\n%s", s)
	}
	old := loadBench(t)
	if strings.Contains(render(t, "html", Run{Bench: old}), `id="server-errors"`) || strings.Contains(render(t, "text", Run{Bench: old}), "server logs") {
		t.Error("a run stored before the logs were read shows a server errors section")
	}
	if strings.Contains(render(t, "html", Run{Tune: loadTune(t)}), `id="server-errors"`) {
		t.Error("a tune stored before the logs were read shows a server errors section")
	}
}

// PHP's own messages of a run are one sentence in the text and a table
// in the page, their hostile text shown, never run.
func TestServerErrorsPHP(t *testing.T) {
	b := loadJSON[results.Bench](t, "bench-errors.json")
	b.ServerErrors.PHP = &results.PHPErrors{Classes: []results.PHPErrorClass{
		{Class: "warning", Count: 4, Files: []results.PHPErrorFile{{File: "index.php", Count: 4, Example: "Undefined variable $x"}}},
		{Class: "deprecation", Count: 312, Files: []results.PHPErrorFile{
			{File: "wp-includes/class-wp.php", Count: 300, Example: "strftime() is deprecated"},
			{File: "x.php", Count: 2, Example: attack},
		}, OtherFiles: 10},
	}}
	text := render(t, "text", Run{Bench: b})
	if want := "\n               PHP logged 4 warnings (top: index.php 4) and 312 deprecations (top: wp-includes/class-wp.php 300) during the run\n"; !strings.Contains(text, want) {
		t.Errorf("bench summary lacks %q:\n%s", want, text)
	}
	page := section(t, render(t, "html", Run{Bench: b}))
	for _, want := range []string{
		"<p>PHP logged 4 warnings (top: index.php 4) and 312 deprecations (top: wp-includes/class-wp.php 300) during the run.</p>",
		`<tr><td>deprecation</td><td><code>wp-includes/class-wp.php</code></td><td class="n">300</td><td><code>strftime() is deprecated</code></td></tr>`,
		`<tr><td>deprecation</td><td>other files</td><td class="n">10</td><td></td></tr>`,
		"&lt;script&gt;window.pwned=1&lt;/script&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("bench page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>window.pwned") {
		t.Fatal("markup from PHP's message reached the page unescaped")
	}

	// A tune sums its holdout rounds' messages per configuration.
	tn := loadJSON[results.Tune](t, "tune-errors.json")
	var rounds int
	for i := range tn.Trials {
		tr := &tn.Trials[i]
		if tr.Phase == "holdout" && tr.Bench != nil && tr.Bench.ServerErrors != nil && tr.N != 27 && tr.N != 30 && tr.N != 31 {
			tr.Bench.ServerErrors.PHP = &results.PHPErrors{Classes: []results.PHPErrorClass{{Class: "notice", Count: 2, Files: []results.PHPErrorFile{{File: "a.php", Count: 2, Example: "n"}}}}}
			rounds++
		}
	}
	if rounds == 0 {
		t.Fatal("the tune fixture has no holdout round of the recommendation")
	}
	tuneText := render(t, "text", Run{Tune: tn})
	if want := fmt.Sprintf("    PHP logged %d notices (top: a.php %d) during the run\n", 2*rounds, 2*rounds); !strings.Contains(tuneText, want) {
		t.Errorf("tune summary lacks %q:\n%s", want, tuneText)
	}
	if page := section(t, render(t, "html", Run{Tune: tn})); !strings.Contains(page, fmt.Sprintf("<p>PHP logged %d notices (top: a.php %d) during the run.</p>", 2*rounds, 2*rounds)) {
		t.Errorf("tune page lacks the recommendation's PHP messages:\n%s", page)
	}
}
