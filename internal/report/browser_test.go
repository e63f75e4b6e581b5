package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/phptune/phptune/internal/model/results"
)

const chromium = "/usr/bin/chromium"

// TestReportInBrowser opens generated reports in Debian's headless Chromium
// and checks that they draw every chart, log no console error, make no
// network request and run no injected script. Screenshots go to
// $PHPTUNE_ARTIFACTS (or the test's temporary directory).
func TestReportInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("Debian's chromium is not installed; make setup installs it (phptune setup --with-test-tools)")
	}
	artifacts := os.Getenv("PHPTUNE_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Run{
		"tune":          {Tune: loadTune(t)},
		"bench":         {Bench: loadBench(t)},
		"tune-hostile":  {Tune: hostile(t)},
		"tune-phone":    {Tune: loadTune(t)},
		"tune-wide":     {Tune: loadTune(t)},
		"bench-errors":  {Bench: benchWithErrors(t)},
		"capacity":      {Capacity: loadCapacity(t)},
		"tune-capacity": {Tune: tuneWithCapacity(t)},
		"servers":       {Servers: loadServers(t)},
		"servers-phone": {Servers: loadServers(t)},
	} {
		t.Run(name, func(t *testing.T) {
			width := 1100
			if strings.HasSuffix(name, "-phone") {
				width = 390 // a phone held upright
			}
			if strings.HasSuffix(name, "-wide") {
				width = 1400 // a laptop's browser window
			}
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			f, err := os.Create(page)
			if err != nil {
				t.Fatal(err)
			}
			if err := Render(f, "html", r); err != nil {
				t.Fatal(err)
			}
			f.Close()
			l := checkInBrowser(t, page, filepath.Join(artifacts, "report-"+name+".png"), width)
			// What a person looks at first is in the first screen: the
			// verdict and the top of the first chart (the curve).
			if name == "tune-wide" && (l.VerdictBottom <= 0 || l.VerdictBottom > 900 || l.FirstChartTop <= 0 || l.FirstChartTop > 900 || l.FirstChart != "chart-curve") {
				t.Errorf("at 1400×900 the verdict ends at %.0f px and the first chart (%s) starts at %.0f px: both must be inside the first 900 px, the curve first", l.VerdictBottom, l.FirstChart, l.FirstChartTop)
			}
		})
	}
}

// profileDir is Chromium's user data directory. It is not t.TempDir:
// Chromium's helper processes (crashpad, the zygote) can still write to it
// for a moment after the browser exits, which makes TempDir's own removal
// fail the test. Removal here retries for a few seconds, then gives up
// quietly: a leftover profile in /tmp is not a test failure.
func profileDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "phptune-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50; i++ {
			if err := os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("left Chromium's profile behind: %s", dir)
	})
	return dir
}

// layout is where the first things a person reads sit on the page, in
// CSS pixels from its top.
type layout struct {
	VerdictBottom, FirstChartTop float64
	FirstChart                   string
}

func checkInBrowser(t *testing.T, page, shot string, width int) layout {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profileDir(t)),
		chromedp.WindowSize(width, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()

	var mu sync.Mutex
	var consoleErrors, requests []string
	url := "file://" + page
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				consoleErrors = append(consoleErrors, string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, "exception: "+e.ExceptionDetails.Error())
		case *network.EventRequestWillBeSent:
			if e.Request.URL != url {
				requests = append(requests, e.Request.URL)
			}
		}
	})

	var drawn string
	var blank []string
	var pwned bool
	var overflow int
	var wide []string
	var topBefore string
	var png []byte
	var l layout
	err := chromedp.Run(bctx,
		network.Enable(),
		runtime.Enable(),
		chromedp.Navigate(url),
		chromedp.WaitVisible(`body[data-charts-drawn]`, chromedp.ByQuery),
		chromedp.AttributeValue(`body`, "data-charts-drawn", &drawn, nil, chromedp.ByQuery),
		// Each chart container holds a canvas with something painted on it.
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-chart]')).filter(function (div) {
			var c = div.querySelector('canvas');
			if (!c || c.width === 0 || c.height === 0) { return true; }
			var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			for (var i = 3; i < d.length; i += 4) { if (d[i] !== 0) { return false; } }
			return true;
		}).map(function (div) { return div.id; })`, &blank),
		// Open a tooltip on the first points of every chart: tooltips are
		// HTML, and show knob values and trial labels.
		chromedp.Evaluate(`document.querySelectorAll('[data-chart]').forEach(function (div) {
			var c = echarts.getInstanceByDom(div);
			for (var s = 0; s < 12; s++) { for (var d = 0; d < 3; d++) { c.dispatchAction({ type: 'showTip', seriesIndex: s, dataIndex: d }); } }
		})`, nil),
		chromedp.Sleep(100*time.Millisecond),
		chromedp.Evaluate(`window.pwned !== undefined`, &pwned),
		// Readable without sideways scrolling of the page (wide tables
		// scroll inside their own box).
		chromedp.Evaluate(`document.documentElement.scrollWidth - window.innerWidth`, &overflow),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('body *')).filter(function (e) { return e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll, pre'); }).slice(0, 5).map(function (e) { return e.tagName + '#' + e.id + '.' + e.className + ' ' + e.getBoundingClientRect().right + ' ' + (e.parentNode.id || '') + ' ' + e.textContent.slice(0, 80); })`, &wide),
		// The top scrolls: moving its slider shows another sample.
		chromedp.Evaluate(`(function () {
			var s = document.querySelector('.top input[type=range]');
			if (!s) { return ['', '']; }
			var before = s.parentNode.parentNode.querySelector('.t').textContent;
			s.value = '0'; s.dispatchEvent(new Event('input'));
			return [before, s.parentNode.parentNode.querySelector('.t').textContent];
		})().join('\n')`, &topBefore),
		chromedp.Evaluate(`(function () { var v = document.getElementById('verdict'); return v ? v.getBoundingClientRect().bottom + window.scrollY : -1; })()`, &l.VerdictBottom),
		chromedp.Evaluate(`(function () { var c = document.querySelector('[data-chart]'); return c ? c.getBoundingClientRect().top + window.scrollY : -1; })()`, &l.FirstChartTop),
		chromedp.Evaluate(`(function () { var c = document.querySelector('[data-chart]'); return c ? c.id : ''; })()`, &l.FirstChart),
		chromedp.FullScreenshot(&png, 100), // quality 100 gives a PNG
	)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	mu.Lock()
	defer mu.Unlock()
	var n int
	if _, err := fmt.Sscan(drawn, &n); err != nil || n < 3 {
		t.Errorf("the page drew %q charts, want at least 3", drawn)
	}
	if len(blank) > 0 {
		t.Errorf("charts with nothing drawn: %v", blank)
	}
	if len(consoleErrors) > 0 {
		t.Errorf("console errors: %v", consoleErrors)
	}
	if len(requests) > 0 {
		t.Errorf("the report made network requests: %v", requests)
	}
	if overflow > 1 {
		t.Errorf("the page is %d px wider than a %d px window: %q", overflow, width, wide)
	}
	// Tunes and benches have the scrollable top; a servers page has none.
	html, _ := os.ReadFile(page)
	if before, after, _ := strings.Cut(topBefore, "\n"); strings.Contains(string(html), `class="top`) && (before == "" || before == after) {
		t.Errorf("the scrollable top did not change with its slider: %q -> %q", before, after)
	}
	if pwned {
		t.Error("a script injected through a server string ran")
	}
	return l
}

// benchWithErrors is the bench fixture with failed requests, so the errors
// chart is drawn too.
func benchWithErrors(t *testing.T) *results.Bench {
	b := loadBench(t)
	b.Errors = 17
	b.ErrorsByClass = map[string]int64{"status_5xx": 12, "read_timeout": 4, "reset": 1}
	b.StatusCodes["502"] = 12
	for i := range b.Series {
		if i%5 == 2 {
			b.Series[i].Errors = 3
		}
	}
	return b
}

// tuneWithCapacity is the tune fixture as a capacity tune: the capacity
// fixture as the start's search and a copy at twice the rates as the
// recommendation's.
func tuneWithCapacity(t *testing.T) *results.Tune {
	r := loadTune(t)
	r.Objective = "capacity"
	start, rec := loadCapacity(t), loadCapacity(t)
	start.Label, rec.Label = "start", "recommended"
	for i := range rec.Steps {
		rec.Steps[i].RateRPS *= 2
	}
	rec.CapacityRPS, rec.FirstFailRPS = 2*rec.CapacityRPS, 2*rec.FirstFailRPS
	// Its steps are trials too (phase capacity, open model): they stay off
	// the curve against concurrency.
	for _, st := range rec.Steps {
		r.Trials = append(r.Trials, results.Trial{N: len(r.Trials) + 1, Phase: "capacity", Config: r.Recommended, Connections: 50, Status: "ok", Bench: st.Bench})
	}
	r.Capacity = &results.TuneCapacity{SLO: start.SLO, Start: start, Recommended: rec, Ratio: 2, RatioLow: rec.CapacityRPS / start.FirstFailRPS, RatioHigh: rec.FirstFailRPS / start.CapacityRPS}
	return r
}
