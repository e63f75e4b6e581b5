package errlog

import (
	"strconv"
	"strings"
)

// ApacheLine is one line of Apache 2.4's error log (ErrorLogFormat unset):
//
//	[Mon Nov 23 22:19:11.902224 2026] [proxy:error] [pid 29479:tid 29490] (111)Connection refused: AH02454: FCGI: attempt to connect to Unix domain socket /…/php-fpm.sock (localhost:8000) failed
type ApacheLine struct {
	Time   string // "Mon Nov 23 22:19:11.902224 2026", as written
	Module string // "proxy_fcgi", "mpm_event", "php"
	Level  string // emerg … error, warn, notice, info, debug, trace1-8
	PID    int
	TID    int64
	// Errno is the "(111)Connection refused: " prefix's number; 0 when
	// the line has none.
	Errno  int
	Client string // "127.0.0.1:56336"
	Code   string // "AH02454"; "" for lines without one (mod_php's)
	// Message is the text after the code (or after the client).
	Message string
}

// ParseApache reads one line of Apache's error log; ok is false for a line
// not in its format.
func ParseApache(line string) (l ApacheLine, ok bool) {
	rest, ok := bracket(line)
	if !ok || len(rest.inside) < 20 {
		return l, false
	}
	l.Time = rest.inside
	r2, ok := bracket(rest.after)
	if !ok {
		return l, false
	}
	mod, level, found := strings.Cut(r2.inside, ":")
	if !found || level == "" {
		return l, false
	}
	l.Module, l.Level = mod, level
	tail := r2.after
	if r3, ok := bracket(tail); ok && strings.HasPrefix(r3.inside, "pid ") {
		p, t, _ := strings.Cut(strings.TrimPrefix(r3.inside, "pid "), ":tid ")
		if n, err := strconv.Atoi(p); err == nil && n >= 0 {
			l.PID = n
		}
		if n, err := strconv.ParseInt(t, 10, 64); err == nil && n >= 0 {
			l.TID = n
		}
		tail = r3.after
	}
	// "(111)Connection refused: "
	if strings.HasPrefix(tail, "(") {
		if end := strings.IndexByte(tail, ')'); end > 1 {
			if n, err := strconv.Atoi(tail[1:end]); err == nil {
				if c := strings.Index(tail[end:], ": "); c >= 0 {
					l.Errno = n
					tail = tail[end+c+2:]
				}
			}
		}
	}
	if r4, ok := bracket(tail); ok && strings.HasPrefix(r4.inside, "client ") {
		l.Client = strings.TrimPrefix(r4.inside, "client ")
		tail = r4.after
	}
	if len(tail) >= 9 && strings.HasPrefix(tail, "AH") && digitsAt(tail, 2, 5) && tail[7] == ':' {
		l.Code = tail[:7]
		tail = strings.TrimPrefix(tail[8:], " ")
	}
	l.Message = tail
	return l, true
}

type bracketed struct{ inside, after string }

// bracket splits "[inside] after".
func bracket(s string) (bracketed, bool) {
	if !strings.HasPrefix(s, "[") {
		return bracketed{}, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return bracketed{}, false
	}
	return bracketed{inside: s[1:end], after: strings.TrimPrefix(s[end+1:], " ")}, true
}

// companion reports whether a line repeats the failure the line before it
// on the same thread reported: mod_proxy_fcgi logs two lines for one
// failed request (AH02454 with the errno, then AH01079; AH01067, then
// AH01075).
func (l ApacheLine) companion() bool {
	return l.Code == "AH01079" || l.Code == "AH01075"
}

// modPHP reports whether a line is mod_php's: PHP's own message, logged
// at PHP's level (warn for a warning, notice and info for notices and
// deprecations, which Apache's default LogLevel warn leaves out).
func (l ApacheLine) modPHP() bool {
	return l.Module == "php" || l.Module == "php7" || l.Module == "php8"
}

// ClassifyApache returns the class of one parsed Apache line, or "" for a
// line that is not an error worth counting.
func ClassifyApache(l ApacheLine) string {
	switch {
	case l.Code == "AH00484" || l.Code == "AH00161":
		// The event MPM's and prefork's "server reached MaxRequestWorkers".
		return "apache_max_request_workers"
	case l.modPHP():
		// mod_php logs PHP's messages itself, at PHP's level.
		return classifyPHP(l.Message, errorLevel(l.Level))
	case l.Code == "AH01071":
		// proxy_fcgi: "Got error 'PHP message: …'", php-fpm's stderr.
		return classifyPHP(l.Message, true)
	case !errorLevel(l.Level):
		return ""
	case l.Code == "AH02454":
		switch l.Errno {
		case 11:
			return "apache_fpm_backlog_full"
		case 111:
			return "apache_fpm_refused"
		}
		return "apache_fpm_connect_failed"
	case l.Code == "AH01079":
		return "apache_fpm_connect_failed"
	case l.Code == "AH01067" || (l.Code == "AH01075" && (l.Errno == 104 || l.Errno == 32)):
		return "apache_fpm_worker_gone"
	}
	return "apache_other"
}
