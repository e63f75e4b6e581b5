// Package pagecheck looks at the page a lab serves before anyone measures
// it: its status, size and <title>, and whether that title reads like an
// error, setup or maintenance page. A broken app that answers its error page
// with status 200 would otherwise be "tuned" at ten times the real page's
// speed.
package pagecheck

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/noredirect"
	"github.com/phptune/phptune/internal/base/termsafe"
)

// Page is what one GET of a page returned.
type Page struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
	// Bytes is the body's length (bodies over the read limit count as the
	// limit; Truncated says so).
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
	Title     string `json:"title,omitempty"`
	// Location is a redirect's target (3xx), cleaned like Title.
	Location string `json:"location,omitempty"`
	// Body is the start of the body, for messages (not stored).
	Body string `json:"-"`
}

// bodyLimit bounds what is read of a page.
const bodyLimit = 4 << 20

// Fetch GETs url once (redirects are not followed: a redirect is what the
// generator would measure too).
func Fetch(ctx context.Context, url string) (Page, error) {
	return FetchVia(ctx, nil, url, "")
}

// FetchHost is Fetch with the request's Host header set to host (a site's
// own name, as the generator's --host sends it) instead of url's host;
// "" keeps url's.
func FetchHost(ctx context.Context, url, host string) (Page, error) {
	return FetchVia(ctx, nil, url, host)
}

// FetchVia is Fetch through tr (nil: the default transport) with host, when
// set, as the request's Host header: a sealed lab's page, asked through
// its unix socket with the site's own name.
func FetchVia(ctx context.Context, tr http.RoundTripper, url, host string) (Page, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return Page{}, err
	}
	if host != "" {
		req.Host = host
	}
	// No kept-alive connection after the check: with Apache's prefork MPM
	// an idle kept-alive connection holds a child (a PHP worker with
	// mod_php) for KeepAliveTimeout, which the measurement that follows
	// the check would lose (a 1-child pool served nothing for 5 s).
	req.Close = true
	client := noredirect.Client(tr)
	resp, err := client.Do(req)
	if err != nil {
		return Page{}, fmt.Errorf("fetching %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, bodyLimit+1))
	if err != nil {
		return Page{}, fmt.Errorf("reading %s: %v", url, err)
	}
	p := Page{URL: url, Status: resp.StatusCode, Bytes: int64(len(body))}
	if len(body) > bodyLimit {
		p.Bytes, p.Truncated = bodyLimit, true
		body = body[:bodyLimit]
	}
	p.Title = Title(body)
	if p.Status >= 300 && p.Status < 400 {
		p.Location = clean(resp.Header.Get("Location"))
	}
	p.Body = string(body[:min(len(body), 2048)])
	return p, nil
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title\s*>`)

// Title returns the page's <title>, unescaped, spaces collapsed, control
// characters and escape sequences shown as escapes (termsafe.Line), at
// most 200 characters; "" when there is none.
func Title(body []byte) string {
	m := titleRE.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return clean(html.UnescapeString(string(m[1])))
}

// clean makes text from the lab's page fit to print: the lab's page is the
// lab's to write, so no control character (an escape sequence driving the
// terminal it is printed on) gets through; spaces are collapsed and the
// text cut at 200 characters.
func clean(s string) string {
	t := termsafe.Line(strings.Join(strings.Fields(s), " "))
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200]) + "…"
	}
	return t
}

// errorWords are what error, setup and maintenance pages put in their
// titles (WordPress, Drupal, Nextcloud, phpMyAdmin, Laravel, PHP's own).
var errorWords = regexp.MustCompile(`(?i)\b(error|errors|exception|fatal|warning|failed|failure|forbidden|not found|unavailable|maintenance|setup|set up|install|installation|installer|configuration|database connection|permission denied|access denied|unauthori[sz]ed|bad gateway|gateway time-?out|whoops|oops|something went wrong|problem)\b`)

// LooksLikeError says whether title reads like an error, setup or
// maintenance page, and which words gave it away.
func LooksLikeError(title string) (bool, string) {
	m := errorWords.FindString(title)
	return m != "", m
}

// String is one line for people: status, size and title.
func (p Page) String() string {
	size := fmt.Sprintf("%d bytes", p.Bytes)
	if p.Truncated {
		size = "over " + size
	}
	title := "no <title>"
	if p.Title != "" {
		title = fmt.Sprintf("title \"%s\"", p.Title)
	}
	if p.Location != "" {
		return fmt.Sprintf("%s answered %d to \"%s\", %s, %s", p.URL, p.Status, p.Location, size, title)
	}
	return fmt.Sprintf("%s answered %d, %s, %s", p.URL, p.Status, size, title)
}

// Drift compares a later check of the same page with the first: a
// different status, a title that changed, or a size more than 50% away is
// worth a warning (the page measured is no longer the page that was).
func Drift(first, now Page) string {
	switch {
	case first.Status != now.Status:
		return fmt.Sprintf("the page now answers %d (it answered %d at the start)", now.Status, first.Status)
	case first.Title != now.Title:
		return fmt.Sprintf("the page's title is now \"%s\" (it was \"%s\" at the start)", now.Title, first.Title)
	case first.Bytes > 0 && (now.Bytes*2 < first.Bytes || now.Bytes > first.Bytes*3/2):
		return fmt.Sprintf("the page is now %d bytes (it was %d at the start)", now.Bytes, first.Bytes)
	}
	return ""
}
