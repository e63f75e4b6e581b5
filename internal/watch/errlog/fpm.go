package errlog

import (
	"strings"
)

// FPMLine is one line of php-fpm's log:
//
//	[23-Nov-2026 22:16:29] WARNING: [pool www] server reached pm.max_children setting (2), consider raising it
//
// A worker's output captured with decorate_workers_output = no comes
// without the time ("NOTICE: PHP message: …"); Time is then empty.
type FPMLine struct {
	Time    string // "23-Nov-2026 22:16:29", as written
	Level   string // DEBUG, NOTICE, WARNING, ERROR, ALERT
	Pool    string // "" for the master's own lines
	Message string
}

var fpmLevels = []string{"DEBUG", "NOTICE", "WARNING", "ERROR", "ALERT"}

// ParseFPM reads one line of php-fpm's log; ok is false for a line that
// has no level (a worker's raw output, a blank line).
func ParseFPM(line string) (l FPMLine, ok bool) {
	rest := line
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		// "dd-Mon-yyyy hh:mm:ss" and, with log_limit's milliseconds,
		// a little more; anything much longer is not php-fpm's.
		if end < 20 || end > 40 || !digitsAt(rest, 1, 2) || rest[3] != '-' {
			return l, false
		}
		l.Time = rest[1:end]
		rest = strings.TrimPrefix(rest[end+1:], " ")
	}
	for _, lv := range fpmLevels {
		if strings.HasPrefix(rest, lv+": ") {
			l.Level = lv
			rest = rest[len(lv)+2:]
			break
		}
	}
	if l.Level == "" {
		return FPMLine{}, false
	}
	if p, ok := strings.CutPrefix(rest, "[pool "); ok {
		if end := strings.IndexByte(p, ']'); end >= 0 {
			l.Pool = p[:end]
			rest = strings.TrimPrefix(p[end+1:], " ")
		}
	}
	l.Message = rest
	return l, true
}

// ClassifyFPM returns the class of one parsed php-fpm line, or "" for a
// line not worth counting (a worker started, the master's notices, PHP's
// messages, which the web server's log has already).
func ClassifyFPM(l FPMLine) string {
	m := l.Message
	switch {
	case l.Level == "DEBUG":
		return ""
	case l.workerOutput():
		// A worker's output: the web server logged the same message
		// with the request it belonged to.
		return ""
	case strings.HasPrefix(m, "server reached pm.max_children setting") ||
		strings.HasPrefix(m, "server reached max_children setting"):
		return "fpm_max_children_reached"
	case strings.HasPrefix(m, "seems busy"):
		return "fpm_seems_busy"
	case strings.HasPrefix(m, "child ") && strings.Contains(m, "execution timed out"):
		return "fpm_execution_timed_out"
	case strings.HasPrefix(m, "child ") && strings.Contains(m, " exited on signal "):
		// php-fpm logs a worker it let go itself (SIGQUIT to an idle
		// worker) as a notice and any other signal as a warning:
		// "possible request loss".
		if l.Level == "NOTICE" {
			return "fpm_worker_recycled"
		}
		return "fpm_worker_signal"
	case strings.HasPrefix(m, "child ") && strings.Contains(m, " exited with code "):
		if l.Level == "NOTICE" {
			return "fpm_worker_recycled"
		}
		return "fpm_worker_exit_error"
	case l.Level == "NOTICE":
		return ""
	}
	return "fpm_other"
}

// workerOutput reports whether a line is a worker's output php-fpm
// passed on (catch_workers_output): PHP's messages, decorated ("child 7
// said into stderr") or not.
func (l FPMLine) workerOutput() bool {
	return strings.HasPrefix(l.Message, "PHP message:") || strings.Contains(l.Message, " said into std")
}
