// Package accesslog turns a web server's access log into the traffic a
// stack really serves: the requests of nginx's and Apache's common and
// combined formats counted by method and path, static files left out (the
// web server serves them without PHP), and the top paths as a weighted
// scenario for the load generator.
package accesslog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/traffic/load"
)

// Line is one request as the log recorded it.
type Line struct {
	// Time is the [time] field.
	Time   time.Time
	Method string
	// Target is the request target as sent: path and query string.
	Target string
	Status int
}

// ErrMalformed is a line that is not in the common or combined format.
var ErrMalformed = errors.New("not an access log line in the common or combined format")

// ErrNoRequest is a well-formed line whose request cannot be replayed: "-"
// (a connection closed before a request), a TLS handshake sent to a plain
// port, or a target that is not a path. ParseLine still returns its Time
// and Status with it: the server answered.
var ErrNoRequest = errors.New("no request to replay")

// timeLayout is the [time] field of the common and combined formats.
const timeLayout = "02/Jan/2006:15:04:05 -0700"

// ParseLine reads one line of the common or combined format (anything
// before the [time] field is skipped, so vhost_combined's "host:port "
// prefix works too):
//
//	127.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "GET /?p=12 HTTP/1.1" 200 2326 "-" "Mozilla/5.0"
//
// The request is the first quoted field (a quote inside a field is
// escaped: Apache writes \", nginx \x22), the time the last [...] before
// it ($remote_user comes from the client and may hold a '[' of its own),
// and the status the three digits after it.
func ParseLine(b []byte) (Line, error) {
	var l Line
	open := quoteAt(b, 0)
	if open < 0 {
		return l, ErrMalformed
	}
	head := b[:open]
	i := bytes.LastIndexByte(head, '[')
	if i < 0 || !bytes.HasSuffix(head, []byte("] ")) {
		return l, ErrMalformed
	}
	t, err := time.Parse(timeLayout, string(head[i+1:len(head)-2]))
	if err != nil {
		return l, ErrMalformed
	}
	end := quoteAt(b, open+1)
	if end < 0 {
		return l, ErrMalformed
	}
	req, after := b[open+1:end], b[end+1:]
	// " STATUS BYTES" follows.
	if len(after) < 1 || after[0] != ' ' {
		return l, ErrMalformed
	}
	after = bytes.TrimLeft(after, " ")
	if len(after) < 3 || !isDigit(after[0]) || !isDigit(after[1]) || !isDigit(after[2]) || (len(after) > 3 && after[3] != ' ') {
		return l, ErrMalformed
	}
	l.Time = t
	l.Status = int(after[0]-'0')*100 + int(after[1]-'0')*10 + int(after[2]-'0')
	if l.Status < 100 {
		return Line{}, ErrMalformed
	}
	f := strings.Fields(string(req))
	if len(f) < 2 || len(f) > 3 || !isMethod(f[0]) {
		return l, ErrNoRequest
	}
	l.Method, l.Target = f[0], f[1]
	// An absolute-form target (a request sent as to a proxy): keep its path.
	for _, scheme := range []string{"http://", "https://"} {
		if rest, ok := strings.CutPrefix(l.Target, scheme); ok {
			if k := strings.IndexByte(rest, '/'); k >= 0 {
				l.Target = rest[k:]
			} else {
				l.Target = "/"
			}
		}
	}
	if !validTarget(l.Target) {
		l.Method, l.Target = "", ""
		return l, ErrNoRequest
	}
	return l, nil
}

// quoteAt is the index of the first quote at or after from that no
// backslash escapes, or -1.
func quoteAt(b []byte, from int) int {
	for k := from; k < len(b); k++ {
		switch b[k] {
		case '\\':
			k++
		case '"':
			return k
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isMethod(m string) bool {
	if m == "" || len(m) > 20 {
		return false
	}
	for i := 0; i < len(m); i++ {
		if m[i] < 'A' || m[i] > 'Z' {
			return false
		}
	}
	return true
}

// validTarget: a path a request line can carry (no spaces or controls).
func validTarget(t string) bool {
	if t == "" || t[0] != '/' || len(t) > 8192 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] == 0x7f {
			return false
		}
	}
	return true
}

// staticExt are the extensions nginx and Apache serve from disk without
// PHP: stylesheets, scripts, images, fonts, media, documents and archives.
var staticExt = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`css js mjs map png jpg jpeg gif webp avif svg svgz ico bmp tif tiff
		woff woff2 ttf otf eot mp4 webm ogv mp3 ogg oga wav flac m4a avi mov pdf zip gz tgz bz2 xz 7z rar
		txt csv html htm`) {
		m[e] = true
	}
	return m
}()

// IsStatic says whether target names a static file by its extension (the
// query string is ignored: /style.css?ver=6.1 is static).
func IsStatic(target string) bool {
	p, _, _ := strings.Cut(target, "?")
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(p), "."))
	return staticExt[ext]
}

// Options select what Read keeps.
type Options struct {
	// AllowPost keeps POST requests (replayed with an empty form body: the
	// log does not record bodies). GET and HEAD are always kept; other
	// methods never.
	AllowPost bool
	// Top is how many paths the scenario keeps (DefaultTop when 0).
	Top int
}

// DefaultTop is how many paths a scenario keeps by default: on sites'
// logs the top 50 dynamic paths usually carry most dynamic requests, and a
// longer tail adds pages each seen too rarely in a short trial to matter.
const DefaultTop = 50

// maxDistinct bounds the paths Read counts; in a log with more distinct
// paths (cache-busting query strings) the later new ones count only in
// Summary.Dynamic, so the share covered stays honest.
const maxDistinct = 200000

// maxLine bounds a line; longer ones are malformed.
const maxLine = 64 << 10

// Path is one method and target with how often the log asked for it.
type Path struct {
	Method string `json:"method"`
	Target string `json:"target"`
	Count  int64  `json:"count"`
	// Redirect is the 3xx status the log answered the path with when most
	// of its lines were redirects (a login POST's 302, an old URL's 301):
	// the replay expects it (load.Request.ExpectStatus). 0: the path
	// answered pages, and a redirect in the replay is an error.
	Redirect int `json:"redirect,omitempty"`
}

// pathCount is what Read counts of one path: its requests, and its
// redirects with the last redirect status seen.
type pathCount struct {
	n, redirects int64
	status       int
}

// Summary is what Read found in a log.
type Summary struct {
	// Lines counts non-blank lines; Malformed those not in the format
	// (FirstMalformed is the number of the first, 0 if none).
	Lines, Malformed int64
	FirstMalformed   int64
	// NoRequest: well-formed lines without a replayable request.
	NoRequest int64
	// Left out: static files, methods not kept (OtherMethods), answers
	// 4xx (requests for what is not there or not allowed: scanners and
	// broken links, not the app's traffic).
	Static, OtherMethods, ClientErrors int64
	// Dynamic counts the requests kept: Distinct paths among them.
	Dynamic  int64
	Distinct int
	// Paths are the top paths, most requested first; Covered is the sum of
	// their counts.
	Paths   []Path
	Covered int64
}

// Read parses a log (plain or gzip-compressed) and summarises its dynamic
// requests. Malformed lines are counted, not fatal; Read fails only when
// no line parses, or no request is left to replay.
func Read(r io.Reader, opt Options) (*Summary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	top := opt.Top
	if top <= 0 {
		top = DefaultTop
	}
	s := &Summary{}
	counts := map[string]*pathCount{}
	var n int64
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == errLong {
			n++
		}
		if err == errLong {
			s.Lines++
			s.malformed(n)
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			s.Lines++
			s.add(line, n, opt, counts)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if s.Lines == 0 {
		return nil, fmt.Errorf("the log is empty")
	}
	if s.Malformed == s.Lines {
		return nil, fmt.Errorf("none of its %d lines is in the common or combined format, which look like: 127.0.0.1 - - [10/Oct/2024:13:55:36 +0000] \"GET / HTTP/1.1\" 200 512", s.Lines)
	}
	s.Distinct = len(counts)
	for k, c := range counts {
		m, t, _ := strings.Cut(k, " ")
		p := Path{Method: m, Target: t, Count: c.n}
		if 2*c.redirects > c.n {
			p.Redirect = c.status
		}
		s.Paths = append(s.Paths, p)
	}
	sort.Slice(s.Paths, func(i, j int) bool {
		a, b := s.Paths[i], s.Paths[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.Method < b.Method
	})
	if len(s.Paths) > top {
		s.Paths = s.Paths[:top]
	}
	for _, p := range s.Paths {
		s.Covered += p.Count
	}
	if s.Dynamic == 0 {
		return s, fmt.Errorf("no request to replay in %d lines: %s", s.Lines, s.leftOut(opt))
	}
	return s, nil
}

func (s *Summary) malformed(n int64) {
	s.Malformed++
	if s.FirstMalformed == 0 {
		s.FirstMalformed = n
	}
}

func (s *Summary) add(line []byte, n int64, opt Options, counts map[string]*pathCount) {
	l, err := ParseLine(line)
	switch {
	case errors.Is(err, ErrNoRequest):
		s.NoRequest++
		return
	case err != nil:
		s.malformed(n)
		return
	}
	switch {
	case l.Method == "GET" || l.Method == "HEAD" || (l.Method == "POST" && opt.AllowPost):
	default:
		s.OtherMethods++
		return
	}
	if l.Status >= 400 && l.Status < 500 {
		s.ClientErrors++
		return
	}
	if IsStatic(l.Target) {
		s.Static++
		return
	}
	s.Dynamic++
	k := l.Method + " " + l.Target
	c, ok := counts[k]
	if !ok && len(counts) < maxDistinct {
		c = &pathCount{}
		counts[k] = c
	}
	if c != nil {
		c.n++
		if l.Status >= 300 && l.Status < 400 {
			c.redirects++
			c.status = l.Status
		}
	}
}

var errLong = errors.New("line too long")

// readLine returns the next line without its newline; a line longer than
// maxLine is skipped whole and reported as errLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		return nil, errLong
	}
	return bytes.TrimRight(line, "\r\n"), err
}

// leftOut says what was not kept, for messages.
func (s *Summary) leftOut(opt Options) string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Static, "static files (left to the web server)")
	methods := "methods other than GET and HEAD"
	if opt.AllowPost {
		methods = "methods other than GET, HEAD and POST"
	} else {
		methods += " (add --allow-post for POSTs)"
	}
	add(s.OtherMethods, methods)
	add(s.ClientErrors, "answered 4xx")
	add(s.NoRequest, "without a request")
	add(s.Malformed, "malformed")
	if len(parts) == 0 {
		return "nothing left out"
	}
	return strings.Join(parts, ", ")
}

// maxTotalWeight keeps the scenario's weights in the generator's range
// whatever the log's size.
const maxTotalWeight = 1 << 20

// Requests is the scenario: the top paths weighted by their counts (scaled
// down for large logs, every path at least 1). POSTs carry an empty form
// body. A path the log answered mostly with a redirect expects that
// status (Path.Redirect); every other path expects a 2xx.
func (s *Summary) Requests() []load.Request {
	scale := 1.0
	if s.Covered > maxTotalWeight {
		scale = float64(maxTotalWeight) / float64(s.Covered)
	}
	out := make([]load.Request, 0, len(s.Paths))
	for _, p := range s.Paths {
		w := max(1, int(float64(p.Count)*scale+0.5))
		q := load.Request{Weight: w, Method: p.Method, Path: p.Target, ExpectStatus: p.Redirect}
		if p.Method == "POST" {
			q.Header = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
			q.Body = []byte{}
		}
		out = append(out, q)
	}
	return out
}

// Share is the part of the log's dynamic requests the scenario covers.
func (s *Summary) Share() float64 {
	if s.Dynamic == 0 {
		return 0
	}
	return float64(s.Covered) / float64(s.Dynamic)
}

// Print shows the scenario to people before it runs: what the log held,
// what was left out, and each path with its weight and share.
func (s *Summary) Print(w io.Writer, name string, opt Options) {
	fmt.Fprintf(w, "workload from %s: %d lines, %d requests to replay (left out: %s)\n", name, s.Lines, s.Dynamic, s.leftOut(opt))
	if s.Malformed > 0 {
		fmt.Fprintf(w, "  %d malformed lines (the first is line %d) were skipped\n", s.Malformed, s.FirstMalformed)
	}
	fmt.Fprintf(w, "  the top %d of %d distinct paths cover %.1f%% of the requests to replay:\n", len(s.Paths), s.Distinct, 100*s.Share())
	fmt.Fprintf(w, "  %8s  %6s  %-6s %s\n", "requests", "share", "method", "path")
	for _, p := range s.Paths {
		fmt.Fprintf(w, "  %8d  %5.1f%%  %-6s %s\n", p.Count, 100*float64(p.Count)/float64(max(1, s.Dynamic)), p.Method, p.Target)
	}
	for _, p := range s.Paths {
		if p.Method == "POST" {
			fmt.Fprintln(w, "  POSTs are sent with an empty form body: access logs do not record bodies")
			break
		}
	}
}
