package errlog

import (
	"bufio"
	"errors"
	"io"
	"sort"
)

// MaxLine is the longest line classified whole; the rest of a longer line
// is skipped (nginx cuts its own lines at 2 KiB; PHP's messages through
// Apache can run longer, and a hostile log can hold anything).
const MaxLine = 16 << 10

// Count is how often one class appeared in one log.
type Count struct {
	Class  string
	Source Source
	// Lines is how many lines of the class the log held.
	Lines int64
	// Requests is how many failed requests those lines stand for: a
	// request mod_proxy_fcgi failed gets two lines, and one nginx retried
	// on the next server of an upstream block gets a line per attempt.
	// 0 for classes that are not one failed request each (Status 0).
	Requests int64
	// Example is the first line of the class, made safe to show.
	Example string
}

// Scanner counts classified lines. The zero value is not ready: use
// NewScanner.
type Scanner struct {
	counts map[countKey]*Count
	lines  map[Source]int64
	// nginxLast is each nginx worker's last request-failing line, to tell a
	// retry on the next upstream server from a new request.
	nginxLast map[int]nginxAttempt
	// apacheLast is each Apache thread's last request-failing line, to
	// fold mod_proxy_fcgi's second line into the first.
	apacheLast map[[2]int64]countKey
	// php counts PHP's own messages in the web servers' lines of PHP's
	// classes; fpmPHP those php-fpm's log repeats from its workers'
	// output, for a web server whose log phptune does not read.
	php, fpmPHP PHPTally
}

type countKey struct {
	class  int
	source Source
}

type nginxAttempt struct {
	conn                    int64
	time, request, upstream string
	key                     countKey
}

// NewScanner returns an empty Scanner.
func NewScanner() *Scanner {
	return &Scanner{
		counts:     map[countKey]*Count{},
		lines:      map[Source]int64{},
		nginxLast:  map[int]nginxAttempt{},
		apacheLast: map[[2]int64]countKey{},
	}
}

// Line classifies one line of src's log (without its newline).
func (s *Scanner) Line(src Source, line string) {
	s.lines[src]++
	switch src {
	case Nginx:
		l, ok := ParseNginx(line)
		if !ok {
			return
		}
		c := ClassifyNginx(l)
		if c == "" {
			return
		}
		k := countKey{classIndex(c), Nginx}
		if prev, ok := s.nginxLast[l.PID]; ok && l.connectPhase() && prev.conn == l.Conn && prev.time == l.Time &&
			prev.request == l.Request && prev.upstream != l.Upstream {
			// The same request on the next server of the upstream block:
			// the attempt before did not answer the client.
			if p := s.counts[prev.key]; p != nil && p.Requests > 0 {
				p.Requests--
			}
		}
		if classes[k.class].Status != 0 {
			s.nginxLast[l.PID] = nginxAttempt{conn: l.Conn, time: l.Time, request: l.Request, upstream: l.Upstream, key: k}
		} else {
			delete(s.nginxLast, l.PID)
		}
		s.add(k, line, true)
		s.addPHP(k, line)
	case FPM:
		l, ok := ParseFPM(line)
		if !ok {
			return
		}
		if c := ClassifyFPM(l); c != "" {
			s.add(countKey{classIndex(c), FPM}, line, true)
		} else if l.workerOutput() && s.lines[Nginx] == 0 && s.lines[Apache] == 0 {
			// Counted only while no web server's log has been read
			// (PHP() uses this tally only then).
			s.fpmPHP.Add(line)
		}
	case Apache:
		l, ok := ParseApache(line)
		if !ok {
			return
		}
		c := ClassifyApache(l)
		if c == "" {
			if l.modPHP() {
				// A warning mod_php logged below Apache's error level:
				// no class, but PHP's message all the same.
				s.php.Add(line)
			}
			return
		}
		thread := [2]int64{int64(l.PID), l.TID}
		if l.companion() {
			if prev, ok := s.apacheLast[thread]; ok {
				delete(s.apacheLast, thread)
				s.add(prev, line, false)
				return
			}
		}
		k := countKey{classIndex(c), Apache}
		if classes[k.class].Status != 0 && !l.companion() {
			s.apacheLast[thread] = k
		} else {
			delete(s.apacheLast, thread)
		}
		s.add(k, line, true)
		s.addPHP(k, line)
	}
}

// SetDocRoot names the lab's document root, cut from the front of the
// files PHP's messages name.
func (s *Scanner) SetDocRoot(root string) { s.php.Root, s.fpmPHP.Root = root, root }

// PHP is the tally of PHP's own messages: those in nginx's or Apache's
// lines when either log was read (a message of a request is there with
// the request), else those php-fpm's log held (a web server whose log
// phptune does not read: lighttpd, Caddy, h2o).
func (s *Scanner) PHP() *PHPTally {
	if s.lines[Nginx] > 0 || s.lines[Apache] > 0 {
		return &s.php
	}
	return &s.fpmPHP
}

// addPHP counts PHP's messages in a line of one of PHP's classes: nginx's
// "FastCGI sent in stderr", Apache's proxy_fcgi or mod_php lines.
func (s *Scanner) addPHP(k countKey, line string) {
	if classes[k.class].Source == "" {
		s.php.Add(line)
	}
}

func (s *Scanner) add(k countKey, line string, request bool) {
	c := s.counts[k]
	if c == nil {
		c = &Count{Class: classes[k.class].Name, Source: k.source, Example: Example(line)}
		s.counts[k] = c
	}
	c.Lines++
	if request && classes[k.class].Status != 0 {
		c.Requests++
	}
}

// Read classifies every line r holds as src's log, lines longer than
// MaxLine cut there. It returns the number of lines read and r's error
// (not io.EOF).
func (s *Scanner) Read(src Source, r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, MaxLine)
	var n int64
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			line := string(b)
			// Skip to the end of this line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			s.Line(src, line)
			n++
			if err != nil {
				return n, eof(err)
			}
			continue
		}
		if len(b) > 0 {
			line := string(b)
			if line[len(line)-1] == '\n' {
				line = line[:len(line)-1]
			}
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			s.Line(src, line)
			n++
		}
		if err != nil {
			return n, eof(err)
		}
	}
}

func eof(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Lines returns how many lines of src's log were read.
func (s *Scanner) Lines(src Source) int64 { return s.lines[src] }

// Counts returns the counts in the classes' order (web server first), each
// log's apart.
func (s *Scanner) Counts() []Count {
	keys := make([]countKey, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].class != keys[j].class {
			return keys[i].class < keys[j].class
		}
		return keys[i].source < keys[j].source
	})
	out := make([]Count, len(keys))
	for i, k := range keys {
		out[i] = *s.counts[k]
	}
	return out
}
