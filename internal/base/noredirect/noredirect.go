// Package noredirect makes the HTTP clients phptune talks to a lab or a
// live host with (status pages, health checks, a lab's status script,
// Unit's control socket). Such a client never follows a redirect: a lab's
// code, or whatever answers on a port it rebinds, would otherwise steer
// root's request to any URL it names. A 3xx is an answer, and Check turns
// it into an error that says so.
package noredirect

import (
	"fmt"
	"net/http"
)

// Client returns an HTTP client over tr (nil: http.DefaultTransport) that
// returns a redirect to its caller instead of following it.
func Client(tr http.RoundTripper) *http.Client {
	return &http.Client{Transport: tr, CheckRedirect: stop}
}

// stop is the client's CheckRedirect: the 3xx response itself is returned.
func stop(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Error is a 3xx answer to a request phptune made.
type Error struct {
	Code     int    // 302
	Location string // the Location header, as sent ("" when none)
}

// locationLimit bounds how much of a Location header a message quotes.
const locationLimit = 200

// Error says what answered and that it was not followed. The status text
// is Go's for the code, not the server's, and the Location is quoted (%q):
// both come from the lab, and no control character in them reaches a
// terminal.
func (e *Error) Error() string {
	loc := e.Location
	cut := ""
	if len(loc) > locationLimit {
		loc, cut = loc[:locationLimit], "…"
	}
	return fmt.Sprintf("answered %d %s (Location %q%s): phptune does not follow redirects", e.Code, http.StatusText(e.Code), loc, cut)
}

// Check returns an *Error when resp is a redirect (3xx), nil otherwise.
func Check(resp *http.Response) error {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return nil
	}
	return &Error{Code: resp.StatusCode, Location: resp.Header.Get("Location")}
}
