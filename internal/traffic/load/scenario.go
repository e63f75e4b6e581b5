package load

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// ParseScenario reads a scenario file: several weighted requests, one per
// line, chosen at random in proportion to their weights.
//
//	# Lines starting with # are comments; blank lines are ignored.
//	# WEIGHT METHOD PATH [BODY]
//	8 GET  /index.php
//	1 GET  /static.html
//	1 POST /wp-comments-post.php comment=Hello&author=bench&email=b%40example.com&comment_post_ID=1
//	    X-Requested-With: bench
//	    => 302
//
// An indented "Name: value" line adds a header to the request above it; an
// indented "=> STATUS" line is the status the request answers when it works
// (Request.ExpectStatus: WordPress's comment POST redirects back to the
// post with a 302), without it any 2xx is, and any other status is an
// error (a 3xx is a redirect error: the page was not measured). A
// BODY (the rest of the line, sent as is) defaults to Content-Type
// application/x-www-form-urlencoded, the form POST a browser sends; give a
// Content-Type header line to change it. Paths replace the target URL's
// path; the host and port stay the target's.
func ParseScenario(r io.Reader) ([]Request, error) {
	var out []Request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			if len(out) == 0 {
				return nil, fmt.Errorf("line %d: header %q before any request", n, line)
			}
			if st, ok := strings.CutPrefix(line, "=>"); ok {
				code, err := strconv.Atoi(strings.TrimSpace(st))
				if err != nil || code < 100 || code > 599 {
					return nil, fmt.Errorf("line %d: %q: want => STATUS, an HTTP status from 100 to 599 (=> 302 for a POST that redirects)", n, line)
				}
				out[len(out)-1].ExpectStatus = code
				continue
			}
			name, value, ok := strings.Cut(line, ":")
			if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t") {
				return nil, fmt.Errorf("line %d: %q is not a header (want an indented Name: value)", n, line)
			}
			q := &out[len(out)-1]
			if q.Header == nil {
				q.Header = http.Header{}
			}
			q.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
			continue
		}
		var f []string
		rest := line
		for len(f) < 3 && rest != "" {
			var tok string
			tok, rest = nextField(rest)
			f = append(f, tok)
		}
		if rest = strings.TrimSpace(rest); rest != "" {
			f = append(f, rest)
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: %q: want WEIGHT METHOD PATH [BODY]", n, line)
		}
		w, err := strconv.Atoi(f[0])
		if err != nil || w <= 0 {
			return nil, fmt.Errorf("line %d: weight %q must be a positive integer", n, f[0])
		}
		method := strings.ToUpper(f[1])
		if !validMethod(method) {
			return nil, fmt.Errorf("line %d: %q is not an HTTP method", n, f[1])
		}
		if !strings.HasPrefix(f[2], "/") {
			return nil, fmt.Errorf("line %d: path %q must start with /", n, f[2])
		}
		q := Request{Weight: w, Method: method, Path: f[2]}
		if len(f) == 4 {
			q.Body = []byte(strings.TrimSpace(f[3]))
			q.Header = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no requests in the scenario (want lines like: 1 GET /index.php)")
	}
	return out, nil
}

func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// nextField splits off the first space- or tab-separated field.
func nextField(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}
