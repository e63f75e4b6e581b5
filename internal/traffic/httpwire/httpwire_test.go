package httpwire

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParser(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		noBody  bool
		status  int
		body    int64
		close   bool
		done    bool // complete without EOF
		eofOK   bool // EOF after input completes it
		wantErr bool
	}{
		{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200, body: 5, done: true},
		{name: "zero length", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, done: true},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", status: 200, body: 15, done: true},
		{name: "chunked lf", in: "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n", status: 200, body: 3, done: true},
		{name: "te overrides cl", in: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 200, done: true},
		{name: "until close", in: "HTTP/1.1 200 OK\r\n\r\nabc", status: 200, body: 3, close: true, eofOK: true},
		{name: "http/1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: 1, close: true, done: true},
		{name: "connection close", in: "HTTP/1.1 502 Bad Gateway\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nno", status: 502, body: 2, close: true, done: true},
		{name: "204", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, done: true},
		{name: "head", in: "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", noBody: true, status: 200, done: true},
		{name: "100 continue", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", status: 201, body: 2, done: true},
		{name: "no reason", in: "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", status: 404, done: true},
		{name: "truncated body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", status: 200, body: 3},
		{name: "truncated head", in: "HTTP/1.1 200 OK\r\nContent-Le"},
		{name: "truncated chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", status: 200, body: 3},
		{name: "bad status line", in: "HTTX/1.1 200 OK\r\n\r\n", wantErr: true},
		{name: "bad code", in: "HTTP/1.1 2x0 OK\r\n\r\n", wantErr: true},
		{name: "bad content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantErr: true},
		{name: "conflicting lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", wantErr: true},
		{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", wantErr: true},
		{name: "huge chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", wantErr: true},
		{name: "missing chunk crlf", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab", wantErr: true},
		{name: "header without name", in: "HTTP/1.1 200 OK\r\n: x\r\n\r\n", wantErr: true},
		{name: "switching protocols", in: "HTTP/1.1 101 Switching Protocols\r\n\r\n", wantErr: true},
	}
	for _, tc := range tests {
		for _, step := range []int{len(tc.in), 1, 7} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, step), func(t *testing.T) {
				var p Parser
				p.Reset()
				p.NoBody = tc.noBody
				in := []byte(tc.in)
				var err error
				for len(in) > 0 && err == nil && !p.Done() {
					n := min(step, len(in))
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
				if err != nil {
					t.Fatal(err)
				}
				if p.Done() != tc.done {
					t.Fatalf("done = %v", p.Done())
				}
				if !tc.done {
					eof := p.EOF()
					if tc.eofOK != (eof == nil) {
						t.Fatalf("EOF() = %v", eof)
					}
					if eof != nil && !errors.Is(eof, ErrTruncated) {
						t.Fatalf("EOF() = %v, want ErrTruncated", eof)
					}
				}
				if p.Status != tc.status || p.BodyLen != tc.body || p.Close != tc.close {
					t.Fatalf("status %d body %d close %v", p.Status, p.BodyLen, p.Close)
				}
			})
		}
	}
}

func TestOversizedHead(t *testing.T) {
	p := Parser{MaxHead: 1024}
	p.Reset()
	in := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Big: aaaaaaaaaaaaaaaaaaaaaaaa\r\n", 100)
	var err error
	for b := []byte(in); len(b) > 0 && err == nil; {
		var n int
		n, err = p.Feed(b[:min(100, len(b))])
		b = b[n:]
	}
	if err == nil {
		t.Fatal("oversized head accepted")
	}
	if cap(p.head) > 4096 {
		t.Fatalf("head buffer grew to %d", cap(p.head))
	}
}

func TestPipelinedLeftover(t *testing.T) {
	var p Parser
	p.Reset()
	two := "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"
	n, err := p.Feed([]byte(two))
	if err != nil || !p.Done() || n != len(two)/2 {
		t.Fatalf("n=%d err=%v", n, err)
	}
}

func TestNoAllocations(t *testing.T) {
	in := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\nContent-Type: text/html; charset=UTF-8\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\ne\r\nHello, world!\n\r\n0\r\n\r\n")
	var p Parser
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

func BenchmarkParse(b *testing.B) {
	in := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\nContent-Type: text/html\r\nContent-Length: 14\r\nConnection: keep-alive\r\n\r\nHello, world!\n")
	var p Parser
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		p.Reset()
		p.Feed(in)
	}
}

// FuzzParser: any bytes, fed in any split, end in a classified error or a
// complete response; never a panic, a hang or a head buffer beyond MaxHead.
func FuzzParser(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), uint8(0), false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), uint8(3), false)
	f.Add([]byte("HTTP/1.0 404 Not Found\r\n\r\nbody until close"), uint8(1), false)
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), uint8(5), true)
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nx"), uint8(2), false)
	f.Fuzz(func(t *testing.T, data []byte, step uint8, noBody bool) {
		p := Parser{MaxHead: 2048, KeepBody: 5}
		p.Reset()
		p.NoBody = noBody
		s := int(step)%13 + 1
		for in := data; len(in) > 0 && !p.Done(); {
			c, err := p.Feed(in[:min(s, len(in))])
			if err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("unclassified error %T", err)
				}
				return
			}
			if c == 0 {
				t.Fatal("no progress")
			}
			in = in[c:]
		}
		if cap(p.head) > 4096 {
			t.Fatalf("head buffer %d", cap(p.head))
		}
		if int64(len(p.Body())) != min(p.BodyLen, 5) {
			t.Fatalf("kept %d body bytes of %d (limit 5)", len(p.Body()), p.BodyLen)
		}
		if err := p.EOF(); err != nil && !errors.Is(err, ErrTruncated) {
			t.Fatalf("EOF: %v", err)
		}
	})
}

func TestKeepBody(t *testing.T) {
	tests := []struct {
		name string
		in   string
		keep int
		want string
	}{
		{"off", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0, ""},
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 64, "hello"},
		{"bounded", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 3, "hel"},
		{"chunked without framing", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 64, "hello world"},
		{"chunked bounded across chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 8, "hello wo"},
		{"until close", "HTTP/1.0 200 OK\r\n\r\nabc", 64, "abc"},
		{"after 100 continue", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 64, "ok"},
	}
	for _, tc := range tests {
		for _, step := range []int{len(tc.in), 1, 4} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, step), func(t *testing.T) {
				p := Parser{KeepBody: tc.keep}
				// A previous response's body must not leak into this one.
				p.Reset()
				p.Feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nold"))
				p.Reset()
				for in := []byte(tc.in); len(in) > 0 && !p.Done(); {
					n, err := p.Feed(in[:min(step, len(in))])
					if err != nil {
						t.Fatal(err)
					}
					in = in[n:]
				}
				if got := string(p.Body()); got != tc.want {
					t.Fatalf("Body() = %q, want %q", got, tc.want)
				}
			})
		}
	}
}
