package fcgi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAppendRecordPadsAndSplits(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, MaxContent, MaxContent + 1, 2*MaxContent + 3} {
		content := bytes.Repeat([]byte{'x'}, n)
		b := AppendRecord(nil, TypeStdin, 7, content)
		var got []byte
		for len(b) > 0 {
			if len(b) < HeaderLen {
				t.Fatalf("n=%d: trailing %d bytes", n, len(b))
			}
			if b[0] != 1 || b[1] != TypeStdin || b[2] != 0 || b[3] != 7 {
				t.Fatalf("n=%d: bad header % x", n, b[:8])
			}
			cl, pad := int(b[4])<<8|int(b[5]), int(b[6])
			if (cl+pad)%8 != 0 {
				t.Fatalf("n=%d: record of %d+%d not aligned", n, cl, pad)
			}
			got = append(got, b[8:8+cl]...)
			b = b[8+cl+pad:]
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("n=%d: content differs", n)
		}
	}
}

func TestPairsRoundTrip(t *testing.T) {
	long := string(bytes.Repeat([]byte{'v'}, 300))
	in := []Pair{{"A", "b"}, {"EMPTY", ""}, {"LONG", long}, {string(bytes.Repeat([]byte{'N'}, 200)), "x"}}
	var b []byte
	for _, p := range in {
		b = AppendPair(b, p.Name, p.Value)
	}
	out, err := DecodePairs(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d pairs", len(out))
	}
	for i := range in {
		if in[i] != out[i] {
			t.Fatalf("pair %d: %q != %q", i, out[i].Name, in[i].Name)
		}
	}
	if _, err := DecodePairs([]byte{0x80, 0, 0}); err == nil {
		t.Fatal("truncated 4-byte length accepted")
	}
	if _, err := DecodePairs([]byte{5, 1, 'a'}); err == nil {
		t.Fatal("pair longer than record accepted")
	}
}

// response builds server records for tests.
func response(reqID uint16, stdout, stderr string, protoStatus byte) []byte {
	var b []byte
	if stderr != "" {
		b = AppendRecord(b, TypeStderr, reqID, []byte(stderr))
	}
	if stdout != "" {
		b = AppendRecord(b, TypeStdout, reqID, []byte(stdout))
	}
	b = AppendRecord(b, TypeStdout, reqID, nil)
	return AppendRecord(b, TypeEndRequest, reqID, []byte{0, 0, 0, 3, protoStatus, 0, 0, 0})
}

func TestParser(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		status  int
		body    string
		stderr  string
		cl      int64
		wantErr bool
	}{
		{"plain", response(1, "Content-type: text/html\r\n\r\nHello", "", 0), 200, "Hello", "", -1, false},
		{"status", response(1, "Status: 404 Not Found\r\nContent-Length: 3\r\n\r\nno\n", "", 0), 404, "no\n", "", 3, false},
		{"lf only", response(1, "X-A: b\n\nbody", "", 0), 200, "body", "", -1, false},
		{"empty head", response(1, "\r\nbody", "", 0), 200, "body", "", -1, false},
		{"stderr", response(1, "Status: 500\r\n\r\n", "PHP Warning: x", 0), 500, "", "PHP Warning: x", -1, false},
		{"bad version", append([]byte{2}, response(1, "A: b\r\n\r\n", "", 0)[1:]...), 0, "", "", 0, true},
		{"other id", response(2, "A: b\r\n\r\n", "", 0), 0, "", "", 0, true},
		{"no stdout", AppendRecord(nil, TypeEndRequest, 1, []byte{0, 0, 0, 0, 0, 0, 0, 0}), 0, "", "", 0, true},
		{"unterminated head", response(1, "A: b\r\n", "", 0), 0, "", "", 0, true},
		{"bad status", response(1, "Status: abc\r\n\r\n", "", 0), 0, "", "", 0, true},
		{"unexpected type", AppendRecord(nil, TypeParams, 1, nil), 0, "", "", 0, true},
		{"management", AppendRecord(nil, TypeGetValuesResult, 0, nil), 0, "", "", 0, true},
		{"short end", AppendRecord(nil, TypeEndRequest, 1, []byte{0}), 0, "", "", 0, true},
	}
	for _, tc := range tests {
		// Feed whole, and one byte at a time: both must agree.
		for _, step := range []int{len(tc.in), 1, 3} {
			t.Run(fmt.Sprintf("%s/step%d", tc.name, step), func(t *testing.T) {
				p := Parser{ReqID: 1, Collect: true}
				var err error
				in := tc.in
				for len(in) > 0 && err == nil && !p.Done() {
					n := step
					if n > len(in) {
						n = len(in)
					}
					var c int
					c, err = p.Feed(in[:n])
					in = in[c:]
				}
				if tc.wantErr {
					var pe *ProtocolError
					if !errors.As(err, &pe) {
						t.Fatalf("want ProtocolError, got %v", err)
					}
					return
				}
				if err != nil || !p.Done() {
					t.Fatalf("err=%v done=%v", err, p.Done())
				}
				r, err := p.Response()
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != tc.status || string(r.Body) != tc.body || string(r.Stderr) != tc.stderr || p.ContentLength != tc.cl {
					t.Fatalf("got %d %q %q cl=%d", r.Status, r.Body, r.Stderr, p.ContentLength)
				}
				if r.AppStatus != 3 {
					t.Fatalf("app status %d", r.AppStatus)
				}
			})
		}
	}
}

func TestParserOverloaded(t *testing.T) {
	p := Parser{ReqID: 1, Collect: true}
	if _, err := p.Feed(AppendRecord(nil, TypeEndRequest, 1, []byte{0, 0, 0, 0, StatusOverloaded, 0, 0, 0})); err != nil {
		t.Fatal(err)
	}
	if !p.Done() || p.ProtoStatus != StatusOverloaded {
		t.Fatal("overload not reported")
	}
	if _, err := p.Response(); err == nil {
		t.Fatal("Response accepted an overloaded END_REQUEST")
	}
}

func TestParserHeadBound(t *testing.T) {
	p := Parser{ReqID: 1, MaxHead: 100}
	rec := AppendRecord(nil, TypeStdout, 1, bytes.Repeat([]byte("X-A: b\r\n"), 100))
	if _, err := p.Feed(rec); err == nil {
		t.Fatal("oversized head accepted")
	}
}

func TestParserReuseDoesNotAllocate(t *testing.T) {
	in := response(1, "Content-type: text/html; charset=UTF-8\r\n\r\nHello, world!\n", "", 0)
	p := Parser{ReqID: 1}
	p.Reset()
	allocs := testing.AllocsPerRun(100, func() {
		p.Reset()
		if _, err := p.Feed(in); err != nil || !p.Done() {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per response", allocs)
	}
}

func TestParams(t *testing.T) {
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Forwarded-For": {"1.2.3.4"}}
	p := Params("POST", "http://127.0.0.1:8080/wp-comments-post.php?a=1", "/srv/www/wp-comments-post.php", h, []byte("c=1"))
	want := map[string]string{
		"SCRIPT_FILENAME": "/srv/www/wp-comments-post.php", "SCRIPT_NAME": "/wp-comments-post.php",
		"DOCUMENT_ROOT": "/srv/www", "REQUEST_URI": "/wp-comments-post.php?a=1", "DOCUMENT_URI": "/wp-comments-post.php",
		"QUERY_STRING": "a=1", "REQUEST_METHOD": "POST", "CONTENT_TYPE": "application/x-www-form-urlencoded",
		"CONTENT_LENGTH": "3", "HTTP_HOST": "127.0.0.1:8080", "SERVER_PORT": "8080", "SERVER_NAME": "127.0.0.1",
		"HTTP_X_FORWARDED_FOR": "1.2.3.4", "REDIRECT_STATUS": "200", "GATEWAY_INTERFACE": "CGI/1.1",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	// A front controller serving a pretty URL.
	p = Params("GET", "/2024/hello/", "/srv/wp/index.php", nil, nil)
	if p["SCRIPT_NAME"] != "/index.php" || p["DOCUMENT_ROOT"] != "/srv/wp" || p["HTTP_HOST"] != "localhost" {
		t.Errorf("front controller: %v", p)
	}
}

// TestGetAgainstGoServer talks to net/http/fcgi, an independent
// implementation of the server side, over a unix socket.
func TestGetAgainstGoServer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go fcgi.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		env := fcgi.ProcessEnv(r)
		w.Header().Set("X-Script", env["SCRIPT_FILENAME"])
		w.Header().Set("X-Host", r.Host)
		w.WriteHeader(201)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), body)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body := []byte("a=1&b=2")
	params := Params("POST", "http://127.0.0.1:81/x.php?q=1", "/srv/x.php", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, body)
	r, err := Get(ctx, "unix", sock, params, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 201 || string(r.Body) != "POST /x.php?q=1 a=1&b=2" || r.Header.Get("X-Host") != "127.0.0.1:81" {
		t.Fatalf("got %d %q %v", r.Status, r.Body, r.Header)
	}
	// A large body crosses many records.
	big := bytes.Repeat([]byte("z"), 200000)
	r, err = Get(ctx, "unix", sock, Params("PUT", "/x.php", "/srv/x.php", nil, big), big)
	if err != nil || len(r.Body) != len("PUT /x.php ")+len(big) {
		t.Fatalf("big: %v %d", err, len(r.Body))
	}
}

func TestGetStalledServerHonoursContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c) }() // read, never answer
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Get(ctx, "tcp", ln.Addr().String(), map[string]string{"A": "b"}, nil)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("err=%v after %v", err, time.Since(start))
	}
}

func TestGetConnectionClosedEarly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		// Read the whole request first: closing with unread data would
		// send a reset instead of a clean end of stream.
		p := AppendRequest(nil, 1, false, nil, nil)
		io.ReadFull(c, make([]byte, len(p)))
		c.Write(AppendRecord(nil, TypeStdout, 1, []byte("Status: 200\r\n\r\npartial")))
		c.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = Get(ctx, "tcp", ln.Addr().String(), nil, nil)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("want ErrTruncated, got %v", err)
	}
}

// FuzzParser feeds arbitrary server bytes, whole and split: the parser must
// return a ProtocolError or finish, never panic, and never hold more than
// its bounds.
func FuzzParser(f *testing.F) {
	f.Add(response(1, "Content-type: text/html\r\n\r\nHello", "", 0), uint8(0))
	f.Add(response(1, "Status: 404 Not Found\r\n\r\n", "warning", 0), uint8(3))
	f.Add(AppendRecord(nil, TypeEndRequest, 1, []byte{0, 0, 0, 0, 2, 0, 0, 0}), uint8(1))
	f.Add([]byte{1, 6, 0, 1, 0xff, 0xff, 0xff, 0}, uint8(5))
	f.Add([]byte{1, 6, 0, 1, 0, 5, 0, 0, 'A', ':', 'b', '\n', '\n', 1, 3, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		p := Parser{ReqID: 1, Collect: true, MaxHead: 1024, MaxBody: 1 << 16, KeepBody: 5}
		s := int(step)%17 + 1
		for in := data; len(in) > 0 && !p.Done(); {
			n := s
			if n > len(in) {
				n = len(in)
			}
			c, err := p.Feed(in[:n])
			if err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("unclassified error %T %v", err, err)
				}
				return
			}
			if c == 0 && !p.Done() {
				t.Fatal("no progress")
			}
			in = in[c:]
		}
		if len(p.head) > 1024 || len(p.body)+len(p.stderr) > 1<<16 {
			t.Fatal("bounds exceeded")
		}
		if int64(len(p.Body())) != min(p.BodyLen, 5) || !bytes.HasPrefix(p.body, p.Body()) {
			t.Fatalf("kept %q of a %d-byte body (limit 5)", p.Body(), p.BodyLen)
		}
		if p.Done() {
			_, _ = p.Response()
		}
	})
}

func TestParserKeepBody(t *testing.T) {
	// The body split over two STDOUT records, the head in the first.
	in := AppendRecord(nil, TypeStdout, 1, []byte("Content-type: text/html\r\n\r\nHello, "))
	in = AppendRecord(in, TypeStdout, 1, []byte("world"))
	in = AppendRecord(in, TypeStderr, 1, []byte("PHP Notice: x"))
	in = AppendRecord(in, TypeEndRequest, 1, []byte{0, 0, 0, 0, 0, 0, 0, 0})
	tests := []struct {
		keep int
		want string
	}{{0, ""}, {3, "Hel"}, {9, "Hello, wo"}, {1 << 16, "Hello, world"}}
	for _, tc := range tests {
		for _, step := range []int{len(in), 1, 5} {
			t.Run(fmt.Sprintf("keep%d/step%d", tc.keep, step), func(t *testing.T) {
				p := Parser{ReqID: 1, KeepBody: tc.keep}
				p.Reset()
				for b := in; len(b) > 0 && !p.Done(); {
					n, err := p.Feed(b[:min(step, len(b))])
					if err != nil {
						t.Fatal(err)
					}
					b = b[n:]
				}
				if got := string(p.Body()); got != tc.want {
					t.Fatalf("Body() = %q, want %q", got, tc.want)
				}
				p.Reset()
				if len(p.Body()) != 0 {
					t.Fatal("Reset kept the previous body")
				}
			})
		}
	}
}

// TestGetLimitedRefusesLargeAnswers: an answer past the limit is refused,
// one within it is returned whole.
func TestGetLimitedRefusesLargeAnswers(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go fcgi.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), len(r.URL.Path)*1000))
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var d net.Dialer
	r, err := GetLimited(ctx, d.DialContext, "unix", sock, Params("GET", "/a.php", "/srv/a.php", nil, nil), nil, 10000)
	if err != nil || len(r.Body) != 6000 {
		t.Fatalf("within the limit: %v", err)
	}
	_, err = GetLimited(ctx, d.DialContext, "unix", sock, Params("GET", "/abcdefghijklmnop.php", "/srv/a.php", nil, nil), nil, 10000)
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "larger than 10000 bytes") {
		t.Fatalf("past the limit: %v", err)
	}
}
