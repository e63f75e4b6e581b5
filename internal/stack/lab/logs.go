package lab

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/base/termsafe"
)

// Components lists the components that have logs.
var Components = []string{"nginx", "apache", "lighttpd", "caddy", "h2o", "unit", "php-fpm", "mariadb", "redis", "memcached", "app"}

// logReadLimit bounds what is read of one log: its last 256 KiB.
const logReadLimit = 256 << 10

// Logs returns the last lines of the logs of component (or all components)
// of the lab. Logs the servers write themselves are lab-writable and read
// with openLabFile (no link followed, a regular file of the lab account);
// one that fails those checks is named with the reason, never read.
func (l *Lab) Logs(component string, lines int) (string, error) {
	comps := Components
	if component != "" {
		ok := false
		for _, c := range Components {
			ok = ok || c == component
		}
		if !ok {
			return "", fmt.Errorf("unknown component %q; choose one of %s", component, strings.Join(Components, ", "))
		}
		comps = []string{component}
	}
	var b strings.Builder
	for _, c := range comps {
		for _, f := range l.logFiles(c) {
			data, err := l.readLog(f)
			if err != nil {
				if !os.IsNotExist(err) {
					fmt.Fprintf(&b, "==> %s <==\n(not read: %v)\n", f.path(), err)
				}
				continue
			}
			if len(data) == 0 {
				continue
			}
			fmt.Fprintf(&b, "==> %s <==\n%s\n", f.path(), lastLines(string(data), lines))
		}
	}
	return b.String(), nil
}

// logFiles are component's log files in this lab: a site lab's MariaDB
// writes its log in its own directory (siteDBLogDir).
func (l *Lab) logFiles(component string) []logFile {
	y := layout{l.Dir}
	fs := y.logFiles(component)
	if component == "mariadb" && l.DBUser != "" {
		for i, f := range fs {
			if f.dir == y.p("log") {
				fs[i].dir = y.p(siteDBLogDir)
			}
		}
	}
	return fs
}

// readLog reads the end of one log file.
func (l *Lab) readLog(f logFile) ([]byte, error) {
	var file *os.File
	var err error
	y := layout{l.Dir}
	switch f.dir {
	case y.p(outDir):
		file, err = os.OpenFile(f.path(), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	case y.p(siteDBLogDir):
		file, err = openLabFile(f.dir, f.name, l.DBPeerUID())
	default:
		file, err = openLabFile(f.dir, f.name, l.UID)
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return readTail(file, logReadLimit)
}

// logTail is the end of every log, for error messages.
func (l *Lab) logTail(n int) string {
	s, _ := l.Logs("", n)
	return strings.TrimSpace(s)
}

var passwordRE = regexp.MustCompile(`(?i)(password\S*\s*[=:]\s*)\S+`)

func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	parts := strings.Split(s, "\n")
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	return termsafe.Text(passwordRE.ReplaceAllString(strings.Join(parts, "\n"), "${1}[hidden]"))
}
