// Package fcgi is a FastCGI client written for phptune: it encodes requests
// (records, name-value pairs, FCGI_BEGIN_REQUEST with FCGI_KEEP_CONN, PARAMS,
// STDIN) and decodes responses (STDOUT, STDERR, END_REQUEST) incrementally,
// including the CGI response head (Status: and headers) that PHP writes at the
// start of STDOUT.
//
// Two layers are exported:
//
//   - Get, a convenience call that sends one request on a fresh connection and
//     returns the whole response (the observer reads php-fpm's status page
//     with it, straight from the pool socket, which works even when the web
//     server in front of the pool is saturated);
//   - AppendRequest and Parser, the allocation-free pieces the load generator
//     uses on its hot path: the request bytes are built once, and Parser is fed
//     whatever the socket returned.
//
// The protocol is the FastCGI 1.0 specification (Open Market, 1996).
package fcgi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// Record types (FastCGI 1.0, section 8).
const (
	TypeBeginRequest    = 1
	TypeAbortRequest    = 2
	TypeEndRequest      = 3
	TypeParams          = 4
	TypeStdin           = 5
	TypeStdout          = 6
	TypeStderr          = 7
	TypeData            = 8
	TypeGetValues       = 9
	TypeGetValuesResult = 10
	TypeUnknownType     = 11
)

// Version1 is the only FastCGI protocol version.
const Version1 = 1

// RoleResponder is the only role php-fpm implements.
const RoleResponder = 1

// FlagKeepConn asks the application to keep the connection open after the
// request; without it php-fpm closes the connection after END_REQUEST.
const FlagKeepConn = 1

// Protocol status values of END_REQUEST.
const (
	StatusRequestComplete = 0
	StatusCantMpxConn     = 1
	StatusOverloaded      = 2
	StatusUnknownRole     = 3
)

// HeaderLen is the size of a record header.
const HeaderLen = 8

// MaxContent is the largest content of one record.
const MaxContent = 65535

// ProtocolError is returned for anything a FastCGI server sends that breaks
// the protocol: a bad version, an unexpected type or request id, a truncated
// stream, an unparsable CGI head. The load generator counts these as the
// "protocol" error class.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "fastcgi protocol error: " + e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// ErrTruncated is wrapped by the error returned when the connection ended
// before END_REQUEST.
var ErrTruncated = errors.New("connection closed before FCGI_END_REQUEST")

// AppendRecord appends one or more records of type typ carrying content to
// dst. Content longer than MaxContent is split; each record is padded to a
// multiple of 8 bytes, as the specification recommends, so the server reads
// aligned headers. An empty content produces one empty record (the end of a
// stream).
func AppendRecord(dst []byte, typ uint8, reqID uint16, content []byte) []byte {
	for {
		n := len(content)
		if n > MaxContent {
			n = MaxContent
		}
		pad := (8 - n%8) % 8
		dst = append(dst, Version1, typ, byte(reqID>>8), byte(reqID), byte(n>>8), byte(n), byte(pad), 0)
		dst = append(dst, content[:n]...)
		for i := 0; i < pad; i++ {
			dst = append(dst, 0)
		}
		content = content[n:]
		if len(content) == 0 {
			return dst
		}
	}
}

// appendLen writes a name-value pair length: one byte below 128, otherwise
// four bytes with the top bit set.
func appendLen(dst []byte, n int) []byte {
	if n < 128 {
		return append(dst, byte(n))
	}
	return append(dst, byte(n>>24)|0x80, byte(n>>16), byte(n>>8), byte(n))
}

// AppendPair appends one encoded name-value pair (section 3.4).
func AppendPair(dst []byte, name, value string) []byte {
	dst = appendLen(dst, len(name))
	dst = appendLen(dst, len(value))
	dst = append(dst, name...)
	return append(dst, value...)
}

// Pair is one FastCGI parameter. Params keep their order (a map would not),
// so the bytes of a request are reproducible.
type Pair struct{ Name, Value string }

// AppendRequest appends a whole request: BEGIN_REQUEST (responder role, with
// FCGI_KEEP_CONN when keepConn), the params, the empty PARAMS record, stdin
// and the empty STDIN record. The load generator builds each request once
// and writes the same bytes for every request.
func AppendRequest(dst []byte, reqID uint16, keepConn bool, params []Pair, stdin []byte) []byte {
	var flags byte
	if keepConn {
		flags = FlagKeepConn
	}
	dst = AppendRecord(dst, TypeBeginRequest, reqID, []byte{0, RoleResponder, flags, 0, 0, 0, 0, 0})
	var p []byte
	for _, kv := range params {
		p = AppendPair(p, kv.Name, kv.Value)
	}
	if len(p) > 0 {
		dst = AppendRecord(dst, TypeParams, reqID, p)
	}
	dst = AppendRecord(dst, TypeParams, reqID, nil)
	if len(stdin) > 0 {
		dst = AppendRecord(dst, TypeStdin, reqID, stdin)
	}
	return AppendRecord(dst, TypeStdin, reqID, nil)
}

// Response is a whole FastCGI response as Get returns it.
type Response struct {
	// Status is the CGI Status: header's code, 200 when the application sent
	// none (the CGI default).
	Status int
	// Header holds the CGI response headers except Status.
	Header http.Header
	// Body is STDOUT after the CGI head.
	Body []byte
	// Stderr is everything the application wrote to FCGI_STDERR (PHP
	// warnings and errors when no error_log is set).
	Stderr []byte
	// AppStatus is END_REQUEST's application status (the script's exit code).
	AppStatus uint32
}

// Get sends one request on a new connection to network ("unix" or "tcp")
// address and returns the response. params are sent in sorted order; stdin
// is the request body. The connection is closed afterwards. ctx bounds the
// whole exchange. Responses larger than 64 MiB are refused rather than held
// in memory.
func Get(ctx context.Context, network, address string, params map[string]string, stdin []byte) (*Response, error) {
	var d net.Dialer
	return GetWith(ctx, d.DialContext, network, address, params, stdin)
}

// GetWith is Get with its own dialer (the observer's checks who listens on
// a lab's socket before it sends anything).
func GetWith(ctx context.Context, dial func(ctx context.Context, network, address string) (net.Conn, error), network, address string, params map[string]string, stdin []byte) (*Response, error) {
	return GetLimited(ctx, dial, network, address, params, stdin, 64<<20)
}

// GetLimited is GetWith refusing a response whose body passes maxBody
// bytes (an answer from an untrusted application).
func GetLimited(ctx context.Context, dial func(ctx context.Context, network, address string) (net.Conn, error), network, address string, params map[string]string, stdin []byte, maxBody int) (*Response, error) {
	conn, err := dial(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("fastcgi: connect to %s %s: %w (is php-fpm running and listening there?)", network, address, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Unblock reads and writes when ctx is cancelled without a deadline.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	req := AppendRequest(nil, 1, false, SortedPairs(params), stdin)
	if _, err := conn.Write(req); err != nil {
		return nil, fmt.Errorf("fastcgi: send request to %s: %w", address, ctxErr(ctx, err))
	}
	p := Parser{ReqID: 1, Collect: true, MaxBody: maxBody}
	buf := make([]byte, 32<<10)
	for !p.Done() {
		n, rerr := conn.Read(buf)
		if n > 0 {
			if _, err := p.Feed(buf[:n]); err != nil {
				return nil, fmt.Errorf("fastcgi: reading response from %s: %w", address, err)
			}
		}
		if rerr != nil && !p.Done() {
			if errors.Is(rerr, io.EOF) {
				return nil, fmt.Errorf("fastcgi: reading response from %s: %w", address, ErrTruncated)
			}
			return nil, fmt.Errorf("fastcgi: reading response from %s: %w", address, ctxErr(ctx, rerr))
		}
	}
	return p.Response()
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// SortedPairs turns a map into pairs sorted by name.
func SortedPairs(m map[string]string) []Pair {
	out := make([]Pair, 0, len(m))
	for k, v := range m {
		out = append(out, Pair{k, v})
	}
	for i := 1; i < len(out); i++ { // insertion sort: maps here are small
		for j := i; j > 0 && out[j].Name < out[j-1].Name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ParseHead parses a CGI response head (the header lines without the blank
// line) into the status and headers. A missing Status: means 200.
func ParseHead(head []byte) (int, http.Header, error) {
	h := http.Header{}
	status := 200
	for len(head) > 0 {
		var line []byte
		line, head, _ = bytes.Cut(head, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, nil, protoErr("CGI header line without a name: %.60q", line)
		}
		name := textproto.CanonicalMIMEHeaderKey(string(bytes.TrimSpace(line[:colon])))
		value := strings.TrimSpace(string(line[colon+1:]))
		if name == "Status" {
			code, ok := parseStatusValue([]byte(value))
			if !ok {
				return 0, nil, protoErr("CGI Status header %.60q is not a 3-digit code", value)
			}
			status = code
			continue
		}
		h.Add(name, value)
	}
	return status, h, nil
}

// parseStatusValue reads the 3-digit code at the start of a Status: value
// ("404 Not Found").
func parseStatusValue(v []byte) (int, bool) {
	v = bytes.TrimLeft(v, " \t")
	if len(v) < 3 || (len(v) > 3 && v[3] != ' ' && v[3] != '\t') {
		return 0, false
	}
	code, err := strconv.Atoi(string(v[:3]))
	if err != nil || code < 100 || code > 999 {
		return 0, false
	}
	return code, true
}
