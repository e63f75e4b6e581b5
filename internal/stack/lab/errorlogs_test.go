package lab

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readAll collects what ReadErrorLogs hands over, per log.
func readAll(t *testing.T, l *Lab, m LogMark, limit int64) (map[string]string, map[string]AppendedLog) {
	t.Helper()
	got := map[string]string{}
	info := map[string]AppendedLog{}
	for _, a := range l.ReadErrorLogs(m, limit, func(name string, r io.Reader) error {
		b, err := io.ReadAll(r)
		got[name] = string(b)
		return err
	}) {
		info[a.Name] = a
	}
	return got, info
}

func TestErrorLogsSinceMark(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"log", fpmDir} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	l := &Lab{Dir: dir, UID: os.Getuid()}
	nginx := filepath.Join(dir, "log", "nginx-error.log")
	fpm := filepath.Join(dir, fpmDir, "php-fpm.log")
	appendTo := func(p, s string) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	appendTo(nginx, "before the run\n")

	// php-fpm's log appears only after the mark: read from its start;
	// Apache's never exists: not listed.
	m := l.MarkErrorLogs()
	appendTo(nginx, "during\n")
	appendTo(fpm, "fpm during\n")
	got, info := readAll(t, l, m, 0)
	if got["nginx"] != "during\n" || got["php-fpm"] != "fpm during\n" || len(info) != 2 {
		t.Fatalf("read %q, %+v", got, info)
	}
	if info["nginx"].Bytes != int64(len("during\n")) || info["nginx"].Note != "" {
		t.Errorf("nginx: %+v", info["nginx"])
	}

	// Truncated since the mark: from the start, said.
	m = l.MarkErrorLogs()
	if err := os.Truncate(nginx, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(nginx, "new\n")
	got, info = readAll(t, l, m, 0)
	if got["nginx"] != "new\n" || !strings.Contains(info["nginx"].Note, "truncated") {
		t.Errorf("truncated: %q %+v", got["nginx"], info["nginx"])
	}

	// Replaced by another file (log rotation): from the new file's
	// start, said. (A file deleted and created again can get the same
	// inode back; nothing tells that apart from appending.)
	m = l.MarkErrorLogs()
	if err := os.Rename(nginx, nginx+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(nginx, "rotated and longer than before\n")
	got, info = readAll(t, l, m, 0)
	if got["nginx"] != "rotated and longer than before\n" || !strings.Contains(info["nginx"].Note, "replaced") {
		t.Errorf("replaced: %q %+v", got["nginx"], info["nginx"])
	}

	// More appended than the limit: the first limit bytes, said.
	m = l.MarkErrorLogs()
	appendTo(fpm, strings.Repeat("x", 3<<20))
	got, info = readAll(t, l, m, 1<<20)
	if len(got["php-fpm"]) != 1<<20 || !strings.Contains(info["php-fpm"].Note, "read the first 1 MiB of the 3 MiB appended") {
		t.Errorf("capped: %d bytes, %+v", len(got["php-fpm"]), info["php-fpm"])
	}

	// A link where the log was: never followed, named.
	m = l.MarkErrorLogs()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(nginx)
	if err := os.Symlink(secret, nginx); err != nil {
		t.Fatal(err)
	}
	got, info = readAll(t, l, m, 0)
	if _, read := got["nginx"]; read || !strings.Contains(info["nginx"].Note, "not read") || !strings.Contains(info["nginx"].Note, "symlink") {
		t.Errorf("symlink: read %v, %+v", read, info["nginx"])
	}
	// And a hard link to another file: refused too.
	os.Remove(nginx)
	if err := os.Link(secret, nginx); err != nil {
		t.Fatal(err)
	}
	got, info = readAll(t, l, m, 0)
	if _, read := got["nginx"]; read || !strings.Contains(info["nginx"].Note, "not read") {
		t.Errorf("hard link: read %v, %+v", read, info["nginx"])
	}
	// A FIFO: refused without blocking.
	os.Remove(nginx)
	if err := syscall.Mkfifo(nginx, 0o600); err != nil {
		t.Fatal(err)
	}
	_, info = readAll(t, l, m, 0)
	if !strings.Contains(info["nginx"].Note, "not read") {
		t.Errorf("fifo: %+v", info["nginx"])
	}
}
