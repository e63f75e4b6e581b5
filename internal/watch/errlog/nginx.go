package errlog

import (
	"strconv"
	"strings"
)

// NginxLine is one line of nginx's error log, as nginx 1.22 writes it:
//
//	2026/11/23 22:16:02 [error] 24607#24607: *12 connect() to unix:/…/php-fpm.sock failed (11: Resource temporarily unavailable) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "GET / HTTP/1.1", upstream: "fastcgi://unix:/…/php-fpm.sock:", host: "127.0.0.1:45103"
type NginxLine struct {
	Time  string // "2026/11/23 22:16:02", as written (local time, whole seconds)
	Level string // emerg, alert, crit, error, warn, notice, info, debug
	PID   int
	// Conn is the connection number after '*' (0 when the line has none):
	// a kept-alive connection carries several requests under one number.
	Conn int64
	// Message is the text before ", client: ".
	Message string
	// Request and Upstream are the quoted fields of the context, when there.
	Request  string
	Upstream string
}

var nginxLevels = map[string]bool{"emerg": true, "alert": true, "crit": true, "error": true, "warn": true, "notice": true, "info": true, "debug": true}

// ParseNginx reads one error log line; ok is false for a line that is not
// in nginx's format (a continuation, garbage).
func ParseNginx(line string) (l NginxLine, ok bool) {
	// "YYYY/MM/DD HH:MM:SS [level] PID#TID: "
	if len(line) < 20 || !digitsAt(line, 0, 4) || line[4] != '/' || !digitsAt(line, 5, 2) || line[7] != '/' ||
		!digitsAt(line, 8, 2) || line[10] != ' ' || !digitsAt(line, 11, 2) || line[13] != ':' ||
		!digitsAt(line, 14, 2) || line[16] != ':' || !digitsAt(line, 17, 2) || line[19] != ' ' {
		return l, false
	}
	l.Time = line[:19]
	rest := line[20:]
	if !strings.HasPrefix(rest, "[") {
		return l, false
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 || !nginxLevels[rest[1:end]] {
		return l, false
	}
	l.Level = rest[1:end]
	rest = strings.TrimPrefix(rest[end+1:], " ")
	hash := strings.IndexByte(rest, '#')
	colon := strings.Index(rest, ": ")
	if hash <= 0 || colon < hash {
		return l, false
	}
	pid, err := strconv.Atoi(rest[:hash])
	if err != nil || pid < 0 {
		return l, false
	}
	if _, err := strconv.Atoi(rest[hash+1 : colon]); err != nil {
		return l, false
	}
	l.PID = pid
	rest = rest[colon+2:]
	if strings.HasPrefix(rest, "*") {
		sp := strings.IndexByte(rest, ' ')
		if sp < 0 {
			sp = len(rest)
		}
		if n, err := strconv.ParseInt(rest[1:sp], 10, 64); err == nil && n >= 0 {
			l.Conn = n
			rest = strings.TrimPrefix(rest[sp:], " ")
		}
	}
	l.Message = rest
	if i := strings.Index(rest, ", client: "); i >= 0 {
		l.Message = rest[:i]
		ctx := rest[i:]
		l.Request = quotedField(ctx, `, request: "`, false)
		l.Upstream = quotedField(ctx, `, upstream: "`, true)
	}
	return l, true
}

// quotedField returns the value of `name"VALUE"` in s (the last one when
// last is set: a request line the client wrote comes before it).
func quotedField(s, name string, last bool) string {
	i := strings.Index(s, name)
	if last {
		i = strings.LastIndex(s, name)
	}
	if i < 0 {
		return ""
	}
	v := s[i+len(name):]
	if j := strings.IndexByte(v, '"'); j >= 0 {
		return v[:j]
	}
	return v
}

func digitsAt(s string, at, n int) bool {
	if at+n > len(s) {
		return false
	}
	for i := at; i < at+n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// errorLevel reports whether a level is an error or worse (nginx's and
// Apache's names; php-fpm's are upper case and handled apart).
func errorLevel(level string) bool {
	switch level {
	case "error", "crit", "alert", "emerg":
		return true
	}
	return false
}

// ClassifyNginx returns the class of one parsed nginx line, or "" for a
// line that is not an error worth counting (notices, info, warnings such
// as buffering to a temporary file).
func ClassifyNginx(l NginxLine) string {
	m := l.Message
	switch {
	case strings.HasPrefix(m, "FastCGI sent in stderr:"):
		// PHP's own messages; the level nginx gives them is always error.
		return classifyPHP(m, true)
	case !errorLevel(l.Level):
		return ""
	case strings.HasPrefix(m, "connect() to ") && strings.Contains(m, " failed ("):
		switch errnoOf(m[strings.Index(m, " failed (")+len(" failed ("):]) {
		case 11:
			return "nginx_fpm_backlog_full"
		case 111:
			return "nginx_fpm_refused"
		case 2:
			return "nginx_fpm_socket_missing"
		}
		return "nginx_fpm_connect_failed"
	case strings.HasPrefix(m, "upstream timed out"):
		if strings.Contains(m, "while connecting to upstream") {
			return "nginx_upstream_connect_timeout"
		}
		return "nginx_upstream_read_timeout"
	case strings.HasPrefix(m, "upstream prematurely closed"),
		(strings.HasPrefix(m, "recv() failed (") || strings.HasPrefix(m, "readv() failed (") ||
			strings.HasPrefix(m, "writev() failed (") || strings.HasPrefix(m, "send() failed (")) &&
			strings.Contains(m, "upstream"):
		return "nginx_fpm_worker_gone"
	case strings.HasPrefix(m, "no live upstreams"):
		return "nginx_no_live_upstreams"
	case strings.Contains(m, "worker_connections are not enough"):
		return "nginx_worker_connections"
	case strings.Contains(m, "(24: Too many open files)"):
		if strings.HasPrefix(m, "accept") {
			return "nginx_open_files_accept"
		}
		return "nginx_open_files"
	}
	return "nginx_other"
}

// connectPhase reports whether a line is a failure to reach php-fpm, the
// kind nginx retries on the next server of an upstream block.
func (l NginxLine) connectPhase() bool {
	return strings.Contains(l.Message, "while connecting to upstream") && !strings.HasPrefix(l.Message, "no live upstreams")
}

// errnoOf reads the number at the start of "11: Resource …)".
func errnoOf(s string) int {
	n := 0
	for i := 0; i < len(s) && i < 6; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			if i == 0 {
				return -1
			}
			return n
		}
		n = n*10 + int(c-'0')
	}
	return -1
}

// classifyPHP sorts PHP's messages (as nginx, Apache's proxy_fcgi or
// mod_php logged them) into fatal errors by kind and the rest; nonFatal
// says whether non-fatal messages count (php_message) or are ignored.
func classifyPHP(m string, nonFatal bool) string {
	switch {
	case strings.Contains(m, "PHP Fatal error:") || strings.Contains(m, "PHP Parse error:"):
		switch {
		case strings.Contains(m, "Allowed memory size of"):
			return "php_memory_limit"
		case strings.Contains(m, "Maximum execution time of"):
			return "php_max_execution_time"
		}
		return "php_fatal"
	case nonFatal:
		return "php_message"
	}
	return ""
}
