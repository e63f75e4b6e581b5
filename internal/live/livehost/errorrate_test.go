package livehost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func logLine(t time.Time, status int) string {
	return fmt.Sprintf("127.0.0.1 - - [%s] \"GET / HTTP/1.1\" %d 5 \"-\" \"-\"\n", t.Format("02/Jan/2006:15:04:05 -0700"), status)
}

// TestErrorRateStep: 5xx lines after the reload, none before, make the
// step fail with both counts; a second run (a rollback's) passes.
func TestErrorRateStep(t *testing.T) {
	log := filepath.Join(t.TempDir(), "access.log")
	var b strings.Builder
	now := time.Now()
	for i := 0; i < 20; i++ {
		b.WriteString(logLine(now.Add(-time.Duration(1+i%3)*time.Second), 200))
	}
	b.WriteString(logLine(now.Add(-time.Hour), 500)) // outside the window
	os.WriteFile(log, []byte(b.String()), 0o644)
	e, err := NewErrorRate(context.Background(), []string{log}, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if e.Before.Requests != 20 || e.Before.Errors != 0 {
		t.Fatalf("before %+v", e.Before)
	}
	st := e.Step()
	if err := st.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	for i := 0; i < 10; i++ {
		status := 200
		if i%2 == 0 {
			status = 502
		}
		f.WriteString(logLine(time.Now(), status))
	}
	f.Close()
	err = st.Healthy(context.Background())
	if err == nil || !strings.Contains(err.Error(), "50.0% (5 of 10 requests)") || !strings.Contains(err.Error(), "0.0% (0 of 20 requests)") {
		t.Fatalf("err %v", err)
	}
	if err := st.Healthy(context.Background()); err != nil {
		t.Errorf("a second health check (the rollback's) compared again: %v", err)
	}
}

func TestReadLogTail(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	os.WriteFile(log, []byte("first line\nsecond\nthird\n"), 0o644)
	b, err := ReadLogTail(log, 12)
	if err != nil || string(b) != "third\n" {
		t.Errorf("tail %q %v", b, err)
	}
	os.Symlink(log, filepath.Join(dir, "link.log"))
	if _, err := ReadLogTail(filepath.Join(dir, "link.log"), 100); err == nil {
		t.Error("a link was followed")
	}
	if _, err := ReadLogTail(dir, 100); err == nil {
		t.Error("a directory was read")
	}
}
