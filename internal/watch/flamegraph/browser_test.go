package flamegraph

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

const chromium = "/usr/bin/chromium"

// TestPageInBrowser opens a page in Debian's headless Chromium: both
// graphs draw frames, a search highlights and measures its matches, a
// click zooms, and the page logs no error, makes no request and runs no
// script a frame's name carried.
func TestPageInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("Debian's chromium is not installed; make setup installs it (phptune setup --with-test-tools)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "profile.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Render(f, samplePage()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	user, err := os.MkdirTemp("", "phptune-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(user)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(user), chromedp.WindowSize(1100, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	var mu sync.Mutex
	var problems []string
	url := "file://" + page
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				problems = append(problems, "console "+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		case *network.EventRequestWillBeSent:
			if e.Request.URL != url {
				problems = append(problems, "request: "+e.Request.URL)
			}
		}
	})
	var drawn string
	var frames []int
	var match, zoomed string
	var pwned bool
	var png []byte
	err = chromedp.Run(bctx,
		network.Enable(), runtime.Enable(),
		chromedp.Navigate(url),
		chromedp.WaitVisible(`body[data-flames-drawn]`, chromedp.ByQuery),
		chromedp.AttributeValue(`body`, "data-flames-drawn", &drawn, nil, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.fg')).map(function (b) {
			return Array.from(b.children).filter(function (d) { return d.getBoundingClientRect().width > 0; }).length; })`, &frames),
		chromedp.Evaluate(`(function () { var i = document.querySelector('input[data-for=native]'); i.value = 'emalloc';
			i.dispatchEvent(new Event('input')); return document.getElementById('native-match').textContent; })()`, &match),
		chromedp.Evaluate(`(function () { var d = Array.from(document.querySelectorAll('#native div')).filter(function (d) { return d.textContent === 'execute_ex'; })[0];
			d.click(); return document.querySelector('#native div:last-child').style.width; })()`, &zoomed),
		chromedp.Evaluate(`window.pwned !== undefined`, &pwned),
		chromedp.FullScreenshot(&png, 100),
	)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	_ = os.WriteFile(filepath.Join(dir, "profile.png"), png, 0o644)
	mu.Lock()
	defer mu.Unlock()
	if drawn != "2" || len(frames) != 2 || frames[0] < 8 || frames[1] < 4 {
		t.Errorf("drew %q graphs with %v frames, want 2 graphs with >= 8 and >= 4", drawn, frames)
	}
	if !strings.Contains(match, "matched: 9.80%") { // 5 of 51 samples
		t.Errorf("search for emalloc says %q", match)
	}
	if zoomed == "" {
		t.Error("clicking execute_ex drew nothing")
	}
	if pwned {
		t.Error("a frame's name ran as a script")
	}
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
}
