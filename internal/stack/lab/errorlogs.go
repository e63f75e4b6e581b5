package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrorLogLimit bounds what ReadErrorLogs reads of one log in one run:
// at c=1000 against a full fpm backlog nginx writes ~10 MB of error lines
// a second, so a minute's run fits; the rest is left unread and said so.
const ErrorLogLimit = 512 << 20

// errorLogs are the servers' own error logs, each named by its component
// (the name errlog knows it by).
var errorLogs = []string{"nginx", "apache", "php-fpm"}

// LogMark is where each server error log of a lab ended at one instant:
// ReadErrorLogs reads only what was appended after it.
type LogMark struct {
	logs []markedLog
}

type markedLog struct {
	name     string
	f        logFile
	dev, ino uint64
	size     int64
	found    bool
	err      error // the log could not be opened at the mark (not a missing file)
}

// MarkErrorLogs records the end of each server error log of the lab
// (nginx's, Apache's, php-fpm's; a log that does not exist yet is read
// from its start later). The logs are lab-writable: they are opened with
// openLabFile and only fstat'ed.
func (l *Lab) MarkErrorLogs() LogMark {
	var m LogMark
	y := layout{l.Dir}
	for _, c := range errorLogs {
		f := y.logFiles(c)[0]
		ml := markedLog{name: c, f: f}
		file, err := openLabFile(f.dir, f.name, l.UID)
		switch {
		case err == nil:
			var st syscall.Stat_t
			if err := syscall.Fstat(int(file.Fd()), &st); err != nil {
				ml.err = err
			} else {
				ml.dev, ml.ino, ml.size, ml.found = uint64(st.Dev), st.Ino, st.Size, true
			}
			file.Close()
		case !errors.Is(err, os.ErrNotExist):
			ml.err = err
		}
		m.logs = append(m.logs, ml)
	}
	return m
}

// AppendedLog is what ReadErrorLogs read of one log.
type AppendedLog struct {
	Name  string // "nginx", "apache", "php-fpm"
	Bytes int64  // bytes handed to the reader
	// Note says when the log was not read as appended: capped, replaced
	// or truncated since the mark, or not read at all (and why).
	Note string
}

// ReadErrorLogs hands read each server error log's part appended since m
// (at most limit bytes of each, ErrorLogLimit when limit is 0), as a
// reader valid during the call, and returns what it read of each log that
// exists. A log replaced (another inode) or truncated since the mark is
// read from its start (a file deleted and made again can get the same
// inode, and then reads as appended to); one that fails openLabFile's checks (a link, a
// hard link, not the lab account's) is not read, and its Note says why.
// read's error stops nothing: it is put in the log's Note.
func (l *Lab) ReadErrorLogs(m LogMark, limit int64, read func(name string, r io.Reader) error) []AppendedLog {
	if limit <= 0 {
		limit = ErrorLogLimit
	}
	var out []AppendedLog
	for _, ml := range m.logs {
		a := AppendedLog{Name: ml.name}
		file, err := openLabFile(ml.f.dir, ml.f.name, l.UID)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && ml.err == nil {
				continue // this lab's server does not write it
			}
			a.Note = fmt.Sprintf("not read: %v", err)
			out = append(out, a)
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(file.Fd()), &st); err != nil {
			file.Close()
			a.Note = fmt.Sprintf("not read: %v", err)
			out = append(out, a)
			continue
		}
		off := ml.size
		switch {
		case !ml.found:
			off = 0
		case uint64(st.Dev) != ml.dev || st.Ino != ml.ino:
			off, a.Note = 0, "replaced since the run began: read from its start"
		case st.Size < ml.size:
			off, a.Note = 0, "truncated since the run began: read from its start"
		}
		n := st.Size - off
		if n > limit {
			a.Note = joinNote(a.Note, fmt.Sprintf("read the first %d MiB of the %d MiB appended", limit>>20, n>>20))
			n = limit
		}
		if n > 0 {
			cr := &countingReader{r: io.NewSectionReader(file, off, n)}
			if err := read(ml.name, cr); err != nil {
				a.Note = joinNote(a.Note, fmt.Sprintf("reading: %v", err))
			}
			a.Bytes = cr.n
		}
		file.Close()
		out = append(out, a)
	}
	return out
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
