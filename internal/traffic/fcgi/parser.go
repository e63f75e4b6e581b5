package fcgi

import (
	"bytes"

	"github.com/phptune/phptune/internal/traffic/httpwire"
)

// DefaultMaxHead bounds the CGI response head a Parser accepts; a server that
// sends more without a blank line is broken, and holding it would be an
// unbounded allocation.
const DefaultMaxHead = 64 << 10

// Parser decodes the records of one response incrementally: Feed it bytes as
// they arrive, in pieces of any size, until Done. Without Collect it keeps
// nothing but counters and the parsed status, so after the first responses
// it does not allocate (the load generator's hot path). Reset makes it ready
// for the next response on a kept-alive connection.
//
// Records for another request id, other record types than STDOUT, STDERR and
// END_REQUEST, a version other than 1 and an END_REQUEST whose length is not
// 8 are protocol errors: phptune sends one request at a time per connection,
// so nothing else is legitimate.
type Parser struct {
	// ReqID is the request id the response must carry.
	ReqID uint16
	// Collect keeps the headers, body and stderr for Response.
	Collect bool
	// MaxHead bounds the CGI head (DefaultMaxHead when 0).
	MaxHead int
	// MaxBody bounds what Collect keeps of STDOUT plus STDERR (unbounded
	// when 0; only meaningful with Collect).
	MaxBody int
	// KeepBody, when positive, keeps the first KeepBody bytes of the body
	// (STDOUT after the CGI head) for Body, without Collect's cost or its
	// limit error. Zero, the default, keeps nothing.
	KeepBody int

	// Status is the CGI status (200 when the head had no Status:), valid
	// once the head is complete.
	Status int
	// ContentLength is the head's Content-Length, or -1.
	ContentLength int64
	// BodyLen counts STDOUT bytes after the head.
	BodyLen int64
	// StderrLen counts FCGI_STDERR bytes.
	StderrLen int64
	// AppStatus and ProtoStatus are END_REQUEST's fields. ProtoStatus other
	// than StatusRequestComplete means php-fpm refused the request
	// (StatusOverloaded, StatusCantMpxConn).
	AppStatus   uint32
	ProtoStatus uint8

	started  bool
	hdr      [HeaderLen]byte
	hdrN     int
	inRec    bool
	typ      uint8
	left     int // content bytes left in the current record
	pad      int // padding bytes left
	end      [8]byte
	endN     int
	head     []byte
	headDone bool
	done     bool
	body     []byte
	stderr   []byte
	kept     []byte
}

// Reset prepares p for the next response, keeping its buffers.
func (p *Parser) Reset() {
	*p = Parser{ReqID: p.ReqID, Collect: p.Collect, MaxHead: p.MaxHead, MaxBody: p.MaxBody, KeepBody: p.KeepBody,
		head: p.head[:0], body: p.body[:0], stderr: p.stderr[:0], kept: p.kept[:0]}
	p.ContentLength = -1
	p.started = true
}

// Done reports whether END_REQUEST has been read.
func (p *Parser) Done() bool { return p.done }

// Feed consumes b and returns how many bytes belonged to this response: once
// END_REQUEST is read it stops, and the rest of b is not consumed. An error is
// a *ProtocolError; the parser must not be fed again before Reset.
func (p *Parser) Feed(b []byte) (int, error) {
	if !p.started { // a zero Parser, never Reset
		p.started = true
		p.ContentLength = -1
	}
	consumed := 0
	for len(b) > 0 && !p.done {
		if !p.inRec {
			n := copy(p.hdr[p.hdrN:], b)
			p.hdrN += n
			b = b[n:]
			consumed += n
			if p.hdrN < HeaderLen {
				return consumed, nil
			}
			if err := p.startRecord(); err != nil {
				return consumed, err
			}
		}
		if p.left > 0 && len(b) > 0 {
			n := p.left
			if n > len(b) {
				n = len(b)
			}
			if err := p.content(b[:n]); err != nil {
				return consumed, err
			}
			p.left -= n
			b = b[n:]
			consumed += n
		}
		if p.left == 0 && p.pad > 0 && len(b) > 0 {
			n := p.pad
			if n > len(b) {
				n = len(b)
			}
			p.pad -= n
			b = b[n:]
			consumed += n
		}
		if p.left == 0 && p.pad == 0 {
			if err := p.endRecord(); err != nil {
				return consumed, err
			}
		}
	}
	return consumed, nil
}

func (p *Parser) startRecord() error {
	h := p.hdr
	p.hdrN = 0
	if h[0] != Version1 {
		return protoErr("record version %d, want 1", h[0])
	}
	p.typ = h[1]
	id := uint16(h[2])<<8 | uint16(h[3])
	p.left = int(h[4])<<8 | int(h[5])
	p.pad = int(h[6])
	switch p.typ {
	case TypeStdout, TypeStderr, TypeEndRequest:
	case TypeGetValuesResult, TypeUnknownType:
		return protoErr("unexpected management record type %d (we sent no management record)", p.typ)
	default:
		return protoErr("unexpected record type %d from the application", p.typ)
	}
	if id != p.ReqID {
		return protoErr("record for request id %d, expected %d", id, p.ReqID)
	}
	if p.typ == TypeEndRequest && p.left != 8 {
		return protoErr("END_REQUEST with %d bytes of content, want 8", p.left)
	}
	p.inRec = true
	return nil
}

func (p *Parser) content(c []byte) error {
	switch p.typ {
	case TypeStdout:
		if !p.headDone {
			return p.headBytes(c)
		}
		return p.bodyBytes(c)
	case TypeStderr:
		p.StderrLen += int64(len(c))
		if p.Collect {
			if p.MaxBody > 0 && len(p.body)+len(p.stderr)+len(c) > p.MaxBody {
				return protoErr("response larger than %d bytes", p.MaxBody)
			}
			p.stderr = append(p.stderr, c...)
		}
	case TypeEndRequest:
		p.endN += copy(p.end[p.endN:], c)
	}
	return nil
}

// Body returns the start of the body kept so far (at most KeepBody bytes).
// It is valid until the next Reset.
func (p *Parser) Body() []byte { return p.kept }

func (p *Parser) bodyBytes(c []byte) error {
	p.BodyLen += int64(len(c))
	if room := p.KeepBody - len(p.kept); room > 0 {
		p.kept = append(p.kept, c[:min(room, len(c))]...)
	}
	if p.Collect {
		if p.MaxBody > 0 && len(p.body)+len(p.stderr)+len(c) > p.MaxBody {
			return protoErr("response larger than %d bytes", p.MaxBody)
		}
		p.body = append(p.body, c...)
	}
	return nil
}

// headBytes accumulates STDOUT until the blank line that ends the CGI head,
// which may be split across reads and records.
func (p *Parser) headBytes(c []byte) error {
	max := p.MaxHead
	if max <= 0 {
		max = DefaultMaxHead
	}
	prev := len(p.head)
	var from, took int
	p.head, from, took = httpwire.AppendHead(p.head, c, max)
	end, next := headEnd(p.head, from)
	if end < 0 {
		if took < len(c) {
			return protoErr("CGI response head longer than %d bytes without a blank line", max)
		}
		return nil
	}
	rest := c[next-prev:]
	p.head = p.head[:end]
	p.headDone = true
	if err := p.parseHead(); err != nil {
		return err
	}
	return p.bodyBytes(rest)
}

// headEnd finds the blank line ending a head in b, searching from from; it
// returns the head's length and the offset where the body starts, or -1.
// CGI allows bare LF line ends, and PHP's own output may mix them.
func headEnd(b []byte, from int) (int, int) {
	for i := from; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		if i+1 < len(b) && b[i+1] == '\n' {
			return i + 1, i + 2
		}
		if i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n' {
			return i + 1, i + 3
		}
		if i == 0 { // the stream starts with a blank line: empty head
			return 0, 1
		}
		if i == 1 && b[0] == '\r' {
			return 0, 2
		}
	}
	return -1, -1
}

// parseHead extracts Status and Content-Length without allocating.
func (p *Parser) parseHead() error {
	p.Status = 200
	h := p.head
	for len(h) > 0 {
		var line []byte
		line, h, _ = bytes.Cut(h, []byte("\n"))
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(name) == 0 || len(name) == len(line) {
			return protoErr("CGI header line without a name: %.60q", line)
		}
		switch {
		case httpwire.EqualFold(name, "status"):
			code, ok := parseStatusValue(value)
			if !ok {
				return protoErr("CGI Status header %.60q is not a 3-digit code", line)
			}
			p.Status = code
		case httpwire.EqualFold(name, "content-length"):
			n, ok := httpwire.ParseLength(bytes.TrimSpace(value))
			if !ok {
				return protoErr("bad Content-Length %.60q", line)
			}
			p.ContentLength = n
		}
	}
	return nil
}

func (p *Parser) endRecord() error {
	p.inRec = false
	if p.typ != TypeEndRequest {
		return nil
	}
	e := p.end
	p.AppStatus = uint32(e[0])<<24 | uint32(e[1])<<16 | uint32(e[2])<<8 | uint32(e[3])
	p.ProtoStatus = e[4]
	p.done = true
	if p.ProtoStatus == StatusRequestComplete && !p.headDone {
		if len(p.head) == 0 {
			return protoErr("END_REQUEST without any STDOUT (no CGI response head)")
		}
		return protoErr("STDOUT ended inside the CGI response head (%d bytes, no blank line)", len(p.head))
	}
	return nil
}

// Response returns what a Collect parser gathered. It fails when the
// response is not complete or php-fpm refused the request.
func (p *Parser) Response() (*Response, error) {
	if !p.done {
		return nil, protoErr("response incomplete")
	}
	switch p.ProtoStatus {
	case StatusRequestComplete:
	case StatusOverloaded:
		return nil, protoErr("the application is overloaded (FCGI_OVERLOADED); raise pm.max_children or the listen backlog")
	case StatusCantMpxConn:
		return nil, protoErr("the application cannot multiplex connections (FCGI_CANT_MPX_CONN)")
	default:
		return nil, protoErr("END_REQUEST protocol status %d", p.ProtoStatus)
	}
	status, hdr, err := ParseHead(p.head)
	if err != nil {
		return nil, err
	}
	return &Response{
		Status:    status,
		Header:    hdr,
		Body:      append([]byte(nil), p.body...),
		Stderr:    append([]byte(nil), p.stderr...),
		AppStatus: p.AppStatus,
	}, nil
}
