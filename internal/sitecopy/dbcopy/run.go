package dbcopy

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
)

// run starts cmd (with start, or cmd.Start), hands it the option pipe,
// and waits for it; when ctx ends first, its whole process group is
// killed.
func run(ctx context.Context, start func(*exec.Cmd) error, cmd *exec.Cmd) error {
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		closeExtra(cmd)
		return err
	}
	closeExtra(cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return ctx.Err()
	}
}

// tail keeps the last bytes a program wrote to its standard error, for
// the error message.
type tail struct{ buf bytes.Buffer }

const tailMax = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if t.buf.Len() > 2*tailMax {
		b := t.buf.Bytes()[t.buf.Len()-tailMax:]
		t.buf = *bytes.NewBuffer(append([]byte(nil), b...))
	}
	return len(p), nil
}

// String is the last lines, with secret (and its SQL-escaped form) cut
// out should a server message quote it.
func (t *tail) String(secrets ...string) string {
	s := t.buf.String()
	if len(s) > tailMax {
		s = s[len(s)-tailMax:]
	}
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "<redacted>")
			s = strings.ReplaceAll(s, sqlEscape(x), "<redacted>")
		}
	}
	s = strings.TrimSpace(s)
	if lines := strings.Split(s, "\n"); len(lines) > 5 {
		s = strings.Join(lines[len(lines)-5:], "\n")
	}
	return s
}
