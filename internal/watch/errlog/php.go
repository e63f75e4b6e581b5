package errlog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// PHP's own messages, however they reach a log — its error_log file
// ("[27-Nov-2026 13:00:00 UTC] PHP Deprecated:  … in /srv/x.php on line
// 12"), php-fpm's stderr as nginx logs it ("FastCGI sent in stderr: "PHP
// message: PHP Warning:  …""), Apache's proxy_fcgi or mod_php — sorted by
// class and by the file that raised them, for the compatibility of a page
// with a PHP release: "wp-includes/class-wp.php logs 312 deprecations".

// The classes of PHP's messages, most severe first.
const (
	PHPFatal       = "fatal"
	PHPWarning     = "warning"
	PHPNotice      = "notice"
	PHPDeprecation = "deprecation"
)

// PHPClasses lists them in the order a summary shows them.
var PHPClasses = []string{PHPFatal, PHPWarning, PHPDeprecation, PHPNotice}

// phpLevels maps PHP's level words (as error_log and the SAPIs print
// them after "PHP ") to a class.
var phpLevels = []struct{ word, class string }{
	{"Fatal error", PHPFatal},
	{"Parse error", PHPFatal},
	{"Recoverable fatal error", PHPFatal},
	{"Compile error", PHPFatal},
	{"Core error", PHPFatal},
	{"Warning", PHPWarning},
	{"Core Warning", PHPWarning},
	{"Compile Warning", PHPWarning},
	{"Notice", PHPNotice},
	{"Strict Standards", PHPNotice},
	{"Deprecated", PHPDeprecation},
}

// PHPError is one message of PHP's.
type PHPError struct {
	Class string // PHPFatal, PHPWarning, PHPNotice, PHPDeprecation
	// Level is PHP's word for it ("Deprecated", "Fatal error").
	Level string
	// File and Line are where PHP said it was raised ("" and 0 when the
	// message names no place).
	File string
	Line int
	// Message is the text after the level, without the place, cut to
	// maxPHPMessage bytes.
	Message string
}

const (
	maxPHPMessage = 240
	maxPHPFile    = 512
)

// ParsePHPErrors finds every PHP message in one log line (nginx puts
// several of one request on a line); none for a line that has no
// "PHP <level>:".
func ParsePHPErrors(line string) []PHPError {
	if len(line) > MaxLine {
		line = line[:MaxLine]
	}
	var out []PHPError
	rest := line
	for {
		i, level, class := nextPHPLevel(rest)
		if i < 0 {
			return out
		}
		msg := rest[i+len("PHP ")+len(level)+1:]
		next, _, _ := nextPHPLevel(msg)
		if next >= 0 {
			rest = msg[next:]
			msg = msg[:next]
		} else {
			rest = ""
		}
		e := PHPError{Class: class, Level: level}
		e.Message, e.File, e.Line = splitPHPPlace(strings.TrimSpace(msg))
		out = append(out, e)
		if rest == "" {
			return out
		}
	}
}

// nextPHPLevel finds the first "PHP <level>:" in s: its index, the level
// word and its class; i is -1 when there is none.
func nextPHPLevel(s string) (i int, level, class string) {
	off := 0
	for {
		j := strings.Index(s[off:], "PHP ")
		if j < 0 {
			return -1, "", ""
		}
		j += off
		after := s[j+len("PHP "):]
		for _, l := range phpLevels {
			if strings.HasPrefix(after, l.word+":") {
				return j, l.word, l.class
			}
		}
		off = j + len("PHP ")
	}
}

// splitPHPPlace takes the place out of a message: "… in FILE on line N"
// (PHP's own form) or, for an uncaught exception, "… in FILE:N" followed
// by its stack trace. The message loses what nginx or Apache appended to
// it (a "while reading response header" tail, a closing quote) and is cut
// to maxPHPMessage bytes.
func splitPHPPlace(msg string) (text, file string, line int) {
	if k := strings.Index(msg, "\" while "); k >= 0 {
		msg = msg[:k]
	}
	msg = strings.TrimRight(strings.TrimSpace(msg), "\";,")
	msg = strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(msg, "PHP message:")), ";")
	if !strings.HasPrefix(msg, "Uncaught ") {
		if text, file, line, ok := onLinePlace(msg); ok {
			return text, file, line
		}
	}
	// Uncaught exceptions: "Uncaught Error: Call to undefined function
	// ereg() in /srv/x.php:3" then "Stack trace:".
	head := msg
	if k := strings.Index(head, "Stack trace:"); k >= 0 {
		head = strings.TrimSpace(head[:k])
	}
	if j := strings.LastIndex(head, " in /"); j >= 0 {
		place := head[j+4:]
		if c := strings.LastIndexByte(place, ':'); c > 0 {
			if n, ok := leadingInt(place[c+1:]); ok && validPHPPath(place[:c]) {
				return cutMessage(head[:j]), place[:c], n
			}
		}
	}
	if text, file, line, ok := onLinePlace(msg); ok {
		return text, file, line
	}
	return cutMessage(msg), "", 0
}

// onLinePlace splits PHP's own form, "… in FILE on line N".
func onLinePlace(msg string) (text, file string, line int, ok bool) {
	k := strings.LastIndex(msg, " on line ")
	if k < 0 {
		return "", "", 0, false
	}
	n, ok := leadingInt(msg[k+len(" on line "):])
	if !ok {
		return "", "", 0, false
	}
	j := strings.LastIndex(msg[:k], " in ")
	if j < 0 || !validPHPPath(msg[j+4:k]) {
		return "", "", 0, false
	}
	return cutMessage(msg[:j]), msg[j+4 : k], n, true
}

// leadingInt reads the decimal number s starts with (at most 9 digits).
func leadingInt(s string) (int, bool) {
	k := 0
	for k < len(s) && k < 9 && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:k])
	return n, err == nil
}

func validPHPPath(p string) bool {
	if p == "" || len(p) > maxPHPFile || strings.ContainsAny(p, " \t\"") {
		return false
	}
	return strings.HasPrefix(p, "/") || strings.Contains(p, ".php") || strings.Contains(p, ".inc")
}

func cutMessage(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxPHPMessage {
		s = s[:maxPHPMessage] + "…"
	}
	return s
}

// PHPFileCount is how many messages of one class one file raised.
type PHPFileCount struct {
	Class string `json:"class"`
	File  string `json:"file"` // "" when PHP named no file
	Count int64  `json:"count"`
	// Example is the first such message, as PHP wrote it (before the
	// place); shown through termsafe by whoever prints it.
	Example string `json:"example"`
}

// PHPTally counts PHP's messages by class and file. The zero value is
// ready. It keeps at most maxPHPFiles files: the rest are counted under
// "(other files)", so that a hostile log cannot grow it without bound.
type PHPTally struct {
	counts map[[2]string]*PHPFileCount
	total  map[string]int64
	// Root is cut from the front of each file (a lab's docroot), so that
	// "wp-includes/x.php" is shown rather than the lab's absolute path.
	Root string
}

const maxPHPFiles = 200

// Add counts the PHP messages of one log line.
func (t *PHPTally) Add(line string) {
	for _, e := range ParsePHPErrors(line) {
		t.AddError(e)
	}
}

// AddError counts one message.
func (t *PHPTally) AddError(e PHPError) {
	if t.counts == nil {
		t.counts, t.total = map[[2]string]*PHPFileCount{}, map[string]int64{}
	}
	file := e.File
	if root := strings.TrimSuffix(t.Root, "/"); root != "" {
		// Only a path under the root loses it: "/srv/lab2/x.php" is not
		// under "/srv/lab".
		if rel, ok := strings.CutPrefix(file, root+"/"); ok {
			file = rel
		}
	}
	k := [2]string{e.Class, file}
	c := t.counts[k]
	if c == nil {
		if len(t.counts) >= maxPHPFiles {
			k[1] = "(other files)"
			c = t.counts[k]
		}
		if c == nil {
			c = &PHPFileCount{Class: e.Class, File: k[1], Example: e.Message}
			t.counts[k] = c
		}
	}
	c.Count++
	t.total[e.Class]++
}

// Total is how many messages of class were counted.
func (t *PHPTally) Total(class string) int64 { return t.total[class] }

// Counts are the counts by class (PHPClasses order), then the files with
// most messages first, then by name.
func (t *PHPTally) Counts() []PHPFileCount {
	out := make([]PHPFileCount, 0, len(t.counts))
	for _, c := range t.counts {
		out = append(out, *c)
	}
	rank := map[string]int{}
	for i, c := range PHPClasses {
		rank[c] = i
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Class != b.Class {
			return rank[a.Class] < rank[b.Class]
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.File < b.File
	})
	return out
}

// Summary says in one line what PHP logged for requests requests (0: the
// counts are given as they are): "2 fatal (wp-content/x.php 2); 312.0
// deprecations per request (wp-includes/class-wp.php 300, …)", or
// "no PHP errors, warnings or deprecations" when none.
func (t *PHPTally) Summary(requests int64) string {
	var parts []string
	counts := t.Counts()
	for _, class := range PHPClasses {
		n := t.total[class]
		if n == 0 {
			continue
		}
		name := class
		if class == PHPDeprecation || class == PHPWarning || class == PHPNotice {
			name += "s"
		}
		s := fmt.Sprintf("%d %s", n, name)
		if requests > 0 {
			s = fmt.Sprintf("%.1f %s per request", float64(n)/float64(requests), name)
		}
		var files []string
		for _, c := range counts {
			if c.Class != class {
				continue
			}
			if len(files) == 3 {
				files = append(files, "…")
				break
			}
			f := c.File
			if f == "" {
				f = "(no file)"
			}
			files = append(files, fmt.Sprintf("%s %d", f, c.Count))
		}
		parts = append(parts, s+" ("+strings.Join(files, ", ")+")")
	}
	if len(parts) == 0 {
		return "no PHP errors, warnings or deprecations"
	}
	return strings.Join(parts, "; ")
}

// Breaks reports whether the messages include a fatal error: a page that
// logs one does not run on the PHP that served it (tune adopts no such
// build).
func (t *PHPTally) Breaks() bool { return t.total[PHPFatal] > 0 }
