// Package httpwire is the load generator's HTTP/1.1 response parser: it is
// fed bytes exactly as the socket returned them, in pieces of any size, keeps
// only what it needs to find where a response ends (status, Content-Length,
// chunked framing, Connection: close) and does not allocate once its head
// buffer has grown to the size of the server's heads.
//
// It is not a general HTTP client: bodies are counted, not kept, and headers
// other than the framing ones are skipped. Anything malformed becomes a
// *ProtocolError, and a connection closed before the end of a response
// becomes ErrTruncated, so the generator can classify every failure.
package httpwire

import (
	"bytes"
	"errors"
	"fmt"
)

// DefaultMaxHead bounds a response head; nginx's and PHP's heads are a few
// hundred bytes, and a server that sends more without a blank line is
// broken or hostile.
const DefaultMaxHead = 64 << 10

// maxLine bounds a chunk-size or trailer line.
const maxLine = 4096

// ProtocolError is a response that breaks HTTP/1.1 framing.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "http protocol error: " + e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// ErrTruncated means the server closed the connection before the response
// was complete (no response at all, or a body shorter than announced).
var ErrTruncated = errors.New("connection closed before the response was complete")

type state uint8

const (
	stHead state = iota
	stBody
	stChunkSize
	stChunkData
	stChunkCRLF
	stTrailer
	stUntilClose
	stDone
)

// Parser parses one response at a time; Reset it between responses.
type Parser struct {
	// MaxHead bounds the head (DefaultMaxHead when 0).
	MaxHead int
	// NoBody is set for responses to HEAD requests.
	NoBody bool

	// Status is the status code, valid once the head is read.
	Status int
	// ContentLength is the announced length, -1 when absent.
	ContentLength int64
	// Chunked is set for Transfer-Encoding: chunked.
	Chunked bool
	// Close is set when the server will close the connection after this
	// response (Connection: close, HTTP/1.0 without keep-alive, or a body
	// delimited by the end of the connection).
	Close bool
	// BodyLen counts body bytes (chunk data without framing).
	BodyLen int64
	// KeepBody, when positive, keeps the first KeepBody bytes of the body
	// (chunk data without framing) for Body. Zero, the default, keeps
	// nothing and costs nothing.
	KeepBody int

	kept []byte

	st       state
	head     []byte
	left     int64 // body or chunk bytes left
	lineLen  int   // bytes of the current chunk-size/trailer line so far
	lineVal  int64 // chunk size accumulated so far
	lineSeen bool  // at least one hex digit in the chunk-size line
	lineExt  bool  // inside a chunk extension
	crlfLeft int   // bytes of the CRLF after chunk data still expected
}

// Reset prepares p for the next response, keeping its head buffer.
func (p *Parser) Reset() {
	*p = Parser{MaxHead: p.MaxHead, NoBody: p.NoBody, KeepBody: p.KeepBody, head: p.head[:0], kept: p.kept[:0], ContentLength: -1}
}

// Body returns the start of the body kept so far (at most KeepBody bytes).
// It is valid until the next Reset.
func (p *Parser) Body() []byte { return p.kept }

// keep appends the part of b that fits under KeepBody.
func (p *Parser) keep(b []byte) {
	if room := p.KeepBody - len(p.kept); room > 0 {
		p.kept = append(p.kept, b[:min(room, len(b))]...)
	}
}

// Done reports whether the response is complete.
func (p *Parser) Done() bool { return p.st == stDone }

// Feed consumes the bytes of b that belong to the current response and
// returns how many. Bytes after the end of the response are left (a server
// must not send them unasked; the caller decides). After an error, Reset
// before feeding again.
func (p *Parser) Feed(b []byte) (int, error) {
	total := len(b)
	for len(b) > 0 {
		switch p.st {
		case stDone:
			return total - len(b), nil
		case stHead:
			n, err := p.feedHead(b)
			if err != nil {
				return total - len(b) + n, err
			}
			b = b[n:]
		case stBody, stChunkData:
			n := int64(len(b))
			if n > p.left {
				n = p.left
			}
			p.left -= n
			p.BodyLen += n
			if p.KeepBody > len(p.kept) {
				p.keep(b[:n])
			}
			b = b[n:]
			if p.left == 0 {
				if p.st == stBody {
					p.st = stDone
				} else {
					p.st, p.crlfLeft = stChunkCRLF, 2
				}
			}
		case stChunkCRLF:
			// Accept "\r\n" or a bare "\n" after chunk data.
			c := b[0]
			b = b[1:]
			switch {
			case p.crlfLeft == 2 && c == '\r':
				p.crlfLeft = 1
			case c == '\n':
				p.st = stChunkSize
				p.lineLen, p.lineVal, p.lineSeen, p.lineExt = 0, 0, false, false
			default:
				return total - len(b), protoErr("chunk data not followed by CRLF (got %q)", c)
			}
		case stChunkSize:
			n, err := p.feedChunkSize(b)
			if err != nil {
				return total - len(b) + n, err
			}
			b = b[n:]
		case stTrailer:
			n, err := p.feedTrailer(b)
			if err != nil {
				return total - len(b) + n, err
			}
			b = b[n:]
		case stUntilClose:
			p.BodyLen += int64(len(b))
			if p.KeepBody > len(p.kept) {
				p.keep(b)
			}
			b = b[len(b):]
		}
	}
	if p.st == stBody && p.left == 0 {
		p.st = stDone
	}
	return total, nil
}

// EOF tells the parser the server closed the connection. It returns nil when
// that ends the response (a body delimited by the close), ErrTruncated
// otherwise.
func (p *Parser) EOF() error {
	if p.st == stUntilClose {
		p.st = stDone
		return nil
	}
	if p.st == stDone {
		return nil
	}
	return ErrTruncated
}

func (p *Parser) feedHead(b []byte) (int, error) {
	max := p.MaxHead
	if max <= 0 {
		max = DefaultMaxHead
	}
	prev := len(p.head)
	room := max - prev
	if prev == 0 {
		// Usually the whole head arrives in one read: parse it where it
		// is, in one pass, without copying it.
		in := b
		if len(in) > room {
			in = in[:room]
		}
		if next, err := p.scanHead(in); next >= 0 {
			return next, p.headParsed(err)
		}
		p.Status, p.ContentLength, p.Chunked, p.Close = 0, -1, false, false
	}
	var from, took int
	p.head, from, took = AppendHead(p.head, b, max)
	next := headEnd(p.head, from)
	if next < 0 {
		if took < len(b) {
			return took, protoErr("response head longer than %d bytes", max)
		}
		return took, nil
	}
	_, err := p.scanHead(p.head[:next])
	return next - prev, p.headParsed(err)
}

// AppendHead appends to head, a head being read in pieces, what of b fits
// in limit bytes in all. It returns the head, where to look for the blank
// line that ends it (three bytes before what b added: a "\r\n\r\n" may
// straddle two pieces) and how many of b's bytes it took; fewer than
// len(b) means the head is full.
func AppendHead(head, b []byte, limit int) (out []byte, from, took int) {
	prev := len(head)
	if room := limit - prev; len(b) > room {
		b = b[:room]
	}
	return append(head, b...), max(prev-3, 0), len(b)
}

// headParsed moves on once a head is parsed (err is scanHead's).
func (p *Parser) headParsed(err error) error {
	if err != nil {
		return err
	}
	if p.Status >= 100 && p.Status < 200 {
		if p.Status == 101 {
			return protoErr("101 Switching Protocols is not supported")
		}
		// An interim response (100 Continue, 103 Early Hints): the real
		// one follows.
		p.head = p.head[:0]
		p.ContentLength, p.Chunked, p.Close = -1, false, false
		return nil
	}
	switch {
	case p.NoBody || p.Status == 204 || p.Status == 304:
		p.st = stDone
	case p.Chunked:
		p.st = stChunkSize
	case p.ContentLength >= 0:
		p.st, p.left = stBody, p.ContentLength
		if p.left == 0 {
			p.st = stDone
		}
	default:
		p.st, p.Close = stUntilClose, true
	}
	return nil
}

// headEnd finds the blank line that ends a head in b, searching from from,
// and returns the offset of the body, or -1.
func headEnd(b []byte, from int) int {
	for {
		i := bytes.IndexByte(b[from:], '\n')
		if i < 0 {
			return -1
		}
		i += from
		if i+1 < len(b) && b[i+1] == '\n' {
			return i + 2
		}
		if i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n' {
			return i + 3
		}
		from = i + 1
	}
}

// scanHead parses the head at the start of b line by line, up to the blank
// line that ends it, and returns the offset of the body, or -1 when b does
// not hold a whole head (the fields set so far are then meaningless). A
// malformed head is reported only once it is whole.
func (p *Parser) scanHead(b []byte) (int, error) {
	// Status line: HTTP/1.x SP 3DIGIT [SP reason].
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return -1, nil
	}
	var err error
	line := trimCR(b[:i])
	pos := i + 1
	http10 := false
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
		!isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) || (len(line) > 12 && line[12] != ' ') {
		err = protoErr("bad status line %.80q", line)
	} else {
		http10 = line[7] == '0'
		p.Status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		if p.Status < 100 {
			err = protoErr("bad status code in %.80q", line)
		}
	}
	keepAlive10 := false
	for {
		i := bytes.IndexByte(b[pos:], '\n')
		if i < 0 {
			return -1, nil
		}
		line := trimCR(b[pos : pos+i])
		pos += i + 1
		if len(line) == 0 {
			break
		}
		if err != nil {
			continue // look for the end of the head only
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			err = protoErr("header line without a name: %.80q", line)
			continue
		}
		// Only Content-Length, Transfer-Encoding and Connection matter:
		// every other header is skipped by its first letter.
		if c := line[0] | 0x20; c != 'c' && c != 't' {
			continue
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case EqualFold(name, "content-length"):
			n, ok := ParseLength(value)
			switch {
			case !ok:
				err = protoErr("bad Content-Length %.40q", value)
			case p.ContentLength >= 0 && p.ContentLength != n:
				err = protoErr("conflicting Content-Length headers (%d and %d)", p.ContentLength, n)
			default:
				p.ContentLength = n
			}
		case EqualFold(name, "transfer-encoding"):
			// The last coding decides; anything but chunked last means
			// the body runs to the close (RFC 9112, 6.3).
			last := value
			if j := bytes.LastIndexByte(value, ','); j >= 0 {
				last = bytes.TrimSpace(value[j+1:])
			}
			p.Chunked = EqualFold(last, "chunked")
			if !p.Chunked {
				p.Close = true
			}
		case EqualFold(name, "connection"):
			if containsTokenFold(value, "close") {
				p.Close = true
			}
			if containsTokenFold(value, "keep-alive") {
				keepAlive10 = true
			}
		}
	}
	if err != nil {
		return pos, err
	}
	if p.Chunked {
		p.ContentLength = -1 // Transfer-Encoding overrides Content-Length
	}
	if http10 && !keepAlive10 {
		p.Close = true
	}
	return pos, nil
}

func (p *Parser) feedChunkSize(b []byte) (int, error) {
	for i, c := range b {
		p.lineLen++
		if p.lineLen > maxLine {
			return i + 1, protoErr("chunk-size line longer than %d bytes", maxLine)
		}
		switch {
		case c == '\n':
			if !p.lineSeen {
				return i + 1, protoErr("chunk-size line without a size")
			}
			if p.lineVal == 0 {
				p.st, p.lineLen = stTrailer, 0
			} else {
				p.st, p.left = stChunkData, p.lineVal
			}
			return i + 1, nil
		case p.lineExt || c == '\r':
		case c == ';' || c == ' ' || c == '\t':
			p.lineExt = true
		default:
			v := hexVal(c)
			if v < 0 {
				return i + 1, protoErr("bad character %q in chunk size", c)
			}
			if p.lineVal >= 1<<58 {
				return i + 1, protoErr("chunk size too large")
			}
			p.lineVal = p.lineVal<<4 | int64(v)
			p.lineSeen = true
		}
	}
	return len(b), nil
}

// feedTrailer skips trailer fields up to the blank line that ends the
// response.
func (p *Parser) feedTrailer(b []byte) (int, error) {
	for i, c := range b {
		switch c {
		case '\n':
			if p.lineLen == 0 {
				p.st = stDone
				return i + 1, nil
			}
			p.lineLen = 0
		case '\r':
		default:
			p.lineLen++
			if p.lineLen > maxLine {
				return i + 1, protoErr("trailer line longer than %d bytes", maxLine)
			}
		}
	}
	return len(b), nil
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// ParseLength reads a Content-Length value: 1 to 18 decimal digits, nothing
// else (no sign, no space).
func ParseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// EqualFold compares b with a lower-case ASCII string, ignoring case: a
// header name, a coding, a token.
func EqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// containsTokenFold reports whether a comma-separated header value contains
// token.
func containsTokenFold(v []byte, token string) bool {
	for len(v) > 0 {
		var t []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, nil
		}
		if EqualFold(bytes.TrimSpace(t), token) {
			return true
		}
	}
	return false
}
