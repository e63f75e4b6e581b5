package accesslog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Line
		err  error
	}{
		{"nginx combined", `203.0.113.7 - - [12/Mar/2024:08:15:02 +0000] "GET /2022/01/season-river/ HTTP/1.1" 200 31542 "https://www.google.com/" "Mozilla/5.0 (X11; Linux x86_64)"`,
			Line{Method: "GET", Target: "/2022/01/season-river/", Status: 200}, nil},
		{"apache common", `192.0.2.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326`,
			Line{Method: "GET", Target: "/apache_pb.gif", Status: 200}, nil},
		{"query kept", `::1 - - [12/Mar/2024:08:15:02 +0000] "GET /?s=coffee&paged=2 HTTP/2.0" 200 9000 "-" "curl/8.0"`,
			Line{Method: "GET", Target: "/?s=coffee&paged=2", Status: 200}, nil},
		{"post redirect", `10.0.0.5 - - [12/Mar/2024:08:15:03 +0000] "POST /wp-comments-post.php HTTP/1.1" 302 0 "https://blog.example/2022/01/x/" "Mozilla/5.0"`,
			Line{Method: "POST", Target: "/wp-comments-post.php", Status: 302}, nil},
		{"vhost_combined", `blog.example:443 198.51.100.2 - - [12/Mar/2024:08:15:04 +0000] "HEAD / HTTP/1.1" 200 - "-" "Pingdom"`,
			Line{Method: "HEAD", Target: "/", Status: 200}, nil},
		{"escaped quote in request", `198.51.100.3 - - [12/Mar/2024:08:15:05 +0000] "GET /?q=\"x\" HTTP/1.1" 200 10 "-" "-"`,
			Line{Method: "GET", Target: `/?q=\"x\"`, Status: 200}, nil},
		{"absolute form", `198.51.100.4 - - [12/Mar/2024:08:15:06 +0000] "GET http://blog.example/feed/ HTTP/1.1" 200 10 "-" "-"`,
			Line{Method: "GET", Target: "/feed/", Status: 200}, nil},
		{"no status bytes field", `198.51.100.4 - - [12/Mar/2024:08:15:06 +0000] "GET / HTTP/1.1" 200`,
			Line{Method: "GET", Target: "/", Status: 200}, nil},
		{"nginx 400 without request", `198.51.100.5 - - [12/Mar/2024:08:15:07 +0000] "-" 400 0 "-" "-"`, Line{}, ErrNoRequest},
		{"tls to a plain port", `198.51.100.6 - - [12/Mar/2024:08:15:08 +0000] "\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03" 400 157 "-" "-"`, Line{}, ErrNoRequest},
		{"target not a path", `198.51.100.7 - - [12/Mar/2024:08:15:09 +0000] "CONNECT example.com:443 HTTP/1.1" 405 157 "-" "-"`, Line{}, ErrNoRequest},
		{"no time", `198.51.100.8 - - "GET / HTTP/1.1" 200 1`, Line{}, ErrMalformed},
		{"unterminated request", `198.51.100.9 - - [12/Mar/2024:08:15:09 +0000] "GET / HTTP/1.1 200 1`, Line{}, ErrMalformed},
		{"bad status", `198.51.100.9 - - [12/Mar/2024:08:15:09 +0000] "GET / HTTP/1.1" 2x0 1`, Line{}, ErrMalformed},
		{"json log", `{"time":"2024-03-12T08:15:09Z","request":"GET / HTTP/1.1","status":200}`, Line{}, ErrMalformed},
		{"empty", ``, Line{}, ErrMalformed},
		// The cases of livehost's former reader of the same lines.
		{"nginx escaped quote", `::1 - bob [26/Nov/2026:10:35:04 +0100] "GET /a\x22b HTTP/1.1" 502 157 "-" "curl"`,
			Line{Method: "GET", Target: `/a\x22b`, Status: 502}, nil},
		{"bracket in the user name", `127.0.0.1 - [01/Jan/2000:00:00:00 +0000] [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 503 0 "-" "-"`,
			Line{Method: "GET", Target: "/", Status: 503}, nil},
		{"quote in the user name", `127.0.0.1 - a\"[01/Jan/2000:00:00:00 +0000] [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 200 0 "-" "-"`,
			Line{Method: "GET", Target: "/", Status: 200}, nil},
		{"four-digit status", `127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 5000 0`, Line{}, ErrMalformed},
		{"status below 100", `127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 099 0`, Line{}, ErrMalformed},
		{"time not a time", `127.0.0.1 - - [yesterday] "GET / HTTP/1.1" 500 0`, Line{}, ErrMalformed},
		{"cut after the quote", `[26/Nov/2026:10:35:04 +0000] "GET`, Line{}, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLine([]byte(tc.in))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err == nil && (got.Method != tc.want.Method || got.Target != tc.want.Target || got.Status != tc.want.Status) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			// A line with a status has the log's own time (a '[' in the
			// client's user name is not the time).
			if (err == nil || errors.Is(err, ErrNoRequest)) && (got.Status == 0 || got.Time.Year() < 2000 || got.Time.Year() == 2000 && got.Time.Month() == 1) {
				t.Fatalf("status %d time %v", got.Status, got.Time)
			}
			if errors.Is(err, ErrMalformed) && got != (Line{}) {
				t.Fatalf("a malformed line returned %+v", got)
			}
		})
	}
}

func TestIsStatic(t *testing.T) {
	for target, want := range map[string]bool{
		"/wp-content/themes/twentytwentythree/style.css?ver=1.0": true,
		"/wp-includes/js/jquery/jquery.min.js?ver=3.6.1":         true,
		"/wp-content/uploads/2022/01/Photo.JPEG":                 true,
		"/fonts/inter.woff2":                                     true,
		"/favicon.ico":                                           true,
		"/robots.txt":                                            true,
		"/":                                                      false,
		"/index.php?p=12":                                        false,
		"/2022/01/season-river/":                                 false,
		"/feed/":                                                 false,
		"/wp-sitemap.xml":                                        false,
		"/?s=style.css":                                          false,
		"/wp-json/wp/v2/posts":                                   false,
	} {
		if got := IsStatic(target); got != want {
			t.Errorf("IsStatic(%q) = %v, want %v", target, got, want)
		}
	}
}

const sampleLog = `203.0.113.7 - - [12/Mar/2024:08:15:02 +0000] "GET / HTTP/1.1" 200 31542 "-" "Mozilla/5.0"
203.0.113.7 - - [12/Mar/2024:08:15:02 +0000] "GET /wp-content/themes/twentytwentythree/style.css?ver=1.0 HTTP/1.1" 200 1542 "https://blog.example/" "Mozilla/5.0"
203.0.113.7 - - [12/Mar/2024:08:15:02 +0000] "GET /wp-includes/js/wp-emoji-release.min.js HTTP/1.1" 200 4542 "https://blog.example/" "Mozilla/5.0"
203.0.113.8 - - [12/Mar/2024:08:15:03 +0000] "GET / HTTP/1.1" 200 31542 "-" "Mozilla/5.0"
203.0.113.9 - - [12/Mar/2024:08:15:04 +0000] "GET /2022/01/season-river/ HTTP/1.1" 200 22100 "https://www.google.com/" "Mozilla/5.0"
203.0.113.9 - - [12/Mar/2024:08:15:05 +0000] "POST /wp-comments-post.php HTTP/1.1" 302 0 "https://blog.example/2022/01/season-river/" "Mozilla/5.0"
203.0.113.10 - - [12/Mar/2024:08:15:06 +0000] "GET /?s=coffee HTTP/1.1" 200 12000 "-" "Mozilla/5.0"
this line is garbage

203.0.113.11 - - [12/Mar/2024:08:15:07 +0000] "GET /.env HTTP/1.1" 404 153 "-" "zgrab/0.x"
203.0.113.12 - - [12/Mar/2024:08:15:08 +0000] "OPTIONS / HTTP/1.1" 200 0 "-" "-"
203.0.113.13 - - [12/Mar/2024:08:15:09 +0000] "-" 400 0 "-" "-"
203.0.113.14 - - [12/Mar/2024:08:15:10 +0000] "HEAD / HTTP/1.1" 200 0 "-" "Pingdom"
203.0.113.15 - - [12/Mar/2024:08:15:11 +0000] "GET / HTTP/1.1" 200 31542 "-" "Mozilla/5.0"`

func TestRead(t *testing.T) {
	tests := []struct {
		name  string
		opt   Options
		paths []Path
		share float64
	}{
		{"get and head", Options{}, []Path{{"GET", "/", 3, 0}, {"HEAD", "/", 1, 0}, {"GET", "/2022/01/season-river/", 1, 0}, {"GET", "/?s=coffee", 1, 0}}, 1},
		{"with posts", Options{AllowPost: true}, []Path{{"GET", "/", 3, 0}, {"HEAD", "/", 1, 0}, {"GET", "/2022/01/season-river/", 1, 0}, {"GET", "/?s=coffee", 1, 0}, {"POST", "/wp-comments-post.php", 1, 302}}, 1},
		{"top 2", Options{Top: 2}, []Path{{"GET", "/", 3, 0}, {"HEAD", "/", 1, 0}}, 4.0 / 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Read(strings.NewReader(sampleLog), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if s.Lines != 13 || s.Malformed != 1 || s.FirstMalformed != 8 || s.NoRequest != 1 || s.Static != 2 || s.ClientErrors != 1 {
				t.Fatalf("counts %+v", s)
			}
			if len(s.Paths) != len(tc.paths) {
				t.Fatalf("paths %+v", s.Paths)
			}
			for i := range tc.paths {
				if s.Paths[i] != tc.paths[i] {
					t.Fatalf("path %d: %+v, want %+v", i, s.Paths[i], tc.paths[i])
				}
			}
			if d := s.Share() - tc.share; d > 1e-9 || d < -1e-9 {
				t.Fatalf("share %v, want %v", s.Share(), tc.share)
			}
			reqs := s.Requests()
			if reqs[0].Weight != 3 || reqs[0].Path != "/" || reqs[0].Method != "GET" {
				t.Fatalf("requests %+v", reqs)
			}
			for _, q := range reqs {
				if want := map[string]int{"/wp-comments-post.php": 302}[q.Path]; q.ExpectStatus != want {
					t.Fatalf("%s %s expects status %d, want %d (the log's redirect)", q.Method, q.Path, q.ExpectStatus, want)
				}
				if q.Method == "POST" && q.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
					t.Fatalf("POST without a form type: %+v", q)
				}
			}
			var out bytes.Buffer
			s.Print(&out, "access.log", tc.opt)
			for _, want := range []string{"13 lines", "1 malformed lines (the first is line 8)", "2 static files", "GET    /\n"} {
				if !strings.Contains(out.String(), want) {
					t.Fatalf("Print lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestReadFailures(t *testing.T) {
	tests := []struct{ name, log, want string }{
		{"empty", "\n\n", "empty"},
		{"nothing parses", "a\nb\n", "none of its 2 lines"},
		{"only static", `1.2.3.4 - - [12/Mar/2024:08:15:02 +0000] "GET /a.css HTTP/1.1" 200 1` + "\n", "1 static files"},
		{"only posts", `1.2.3.4 - - [12/Mar/2024:08:15:02 +0000] "POST /x HTTP/1.1" 200 1` + "\n", "--allow-post"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.log), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestReadGzipAndLongLines(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`1.2.3.4 - - [12/Mar/2024:08:15:02 +0000] "GET /` + strings.Repeat("a", 100<<10) + ` HTTP/1.1" 200 1` + "\n"))
	zw.Write([]byte(sampleLog))
	zw.Close()
	s, err := Read(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lines != 14 || s.Malformed != 2 || s.FirstMalformed != 1 || s.Paths[0] != (Path{"GET", "/", 3, 0}) {
		t.Fatalf("%+v", s)
	}
}

func TestWeightsScaled(t *testing.T) {
	s := &Summary{Paths: []Path{{"GET", "/", 3 << 30, 0}, {"GET", "/rare", 1, 0}}, Covered: 3<<30 + 1, Dynamic: 3<<30 + 1}
	reqs := s.Requests()
	if reqs[0].Weight > maxTotalWeight || reqs[1].Weight != 1 {
		t.Fatalf("weights %d %d", reqs[0].Weight, reqs[1].Weight)
	}
}

// FuzzParseLine: any line parses or is refused with one of the two
// errors; what parses is a replayable request.
func FuzzParseLine(f *testing.F) {
	for _, l := range strings.Split(sampleLog, "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`x [y] "GET /a\" HTTP/1.1" 200 1`))
	f.Add([]byte(`[] "GET http://h HTTP/1.1" 999 -`))
	f.Add([]byte(`127.0.0.1 - [01/Jan/2000:00:00:00 +0000] [26/Nov/2026:10:35:04 +0000] "GET / HTTP/1.1" 503 0 "-" "-"`))
	f.Add([]byte(`::1 - bob [26/Nov/2026:10:35:04 +0100] "GET /a\x22b HTTP/1.1" 502 157 "-" "curl"`))
	f.Add([]byte(`127.0.0.1 - - [26/Nov/2026:10:35:04 +0000] "-" 400 0 "-" "-"`))
	f.Add([]byte(`[] "" 500`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLine(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoRequest) {
				t.Fatalf("unclassified error %v", err)
			}
			if errors.Is(err, ErrNoRequest) && (l.Status < 100 || l.Status > 999 || l.Time.IsZero()) {
				t.Fatalf("no request, but no status or time either: %+v", l)
			}
			return
		}
		if !validTarget(l.Target) || !isMethod(l.Method) || l.Status < 100 || l.Status > 999 {
			t.Fatalf("accepted %+v", l)
		}
		// A log of that line is read without error.
		if bytes.ContainsAny(b, "\r\n") {
			return
		}
		if _, err := Read(bytes.NewReader(append(append([]byte{}, b...), '\n')), Options{AllowPost: true}); err != nil && !strings.Contains(err.Error(), "no request to replay") {
			t.Fatalf("Read: %v", err)
		}
	})
}
