package phpbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/saferead"
)

// logFile opens logs/NAME.log (root's, written from the children's pipes).
func (b *builder) logFile(name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(b.logs, name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
}

// timed runs one named step, printing its start and elapsed time, and
// records it.
func (b *builder) timed(name string, f func(log io.Writer) error) error {
	lf, err := b.logFile(name)
	if err != nil {
		return err
	}
	defer lf.Close()
	start := time.Now()
	fmt.Fprintf(b.o.Progress, "build: %-10s ...\n", name)
	stop := b.ticker(name, start)
	err = f(lf)
	stop()
	d := time.Since(start)
	b.rec.Steps = append(b.rec.Steps, Step{Name: name, Seconds: round1(d.Seconds()), Log: name + ".log"})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("%s failed after %s: %v\n%s\nfull log: %s", name, d.Round(time.Second), err, tailFile(lf.Name(), 12),
			filepath.Join(Dir(), ".failed-logs", filepath.Base(lf.Name())))
	}
	fmt.Fprintf(b.o.Progress, "build: %-10s done in %s\n", name, d.Round(100*time.Millisecond))
	return nil
}

// ticker prints the step's elapsed time every 30 s while it runs and, for
// the compiling steps, how far make has got (see compileProgress).
func (b *builder) ticker(name string, start time.Time) func() {
	done := make(chan struct{})
	compiling := name == "make" || name == "prof-gen" || name == "prof-use"
	go func() {
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				progress := ""
				if compiling {
					progress = b.compileProgress()
				}
				fmt.Fprintf(b.o.Progress, "build: %-10s %s%s elapsed\n", name, progress, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// loRuleRE matches a Makefile rule that compiles one object (path/x.lo: ...).
const loRuleRE = `^[^[:space:]#][^:]*\.lo:`

// compileProgress says how many of the Makefile's objects exist so far,
// "45% (231 of 514 objects), ". It counts as the build account (root reads
// nothing of the build tree); "" when it cannot tell.
func (b *builder) compileProgress() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b.objects == 0 {
		out, err := b.output(ctx, b.src, nil, "grep", "-c", loRuleRE, "Makefile")
		if n, perr := strconv.Atoi(strings.TrimSpace(out)); err == nil && perr == nil && n > 0 {
			b.objects = n
		} else {
			return ""
		}
	}
	out, err := b.output(ctx, b.src, nil, "find", ".", "-name", "*.lo", "-printf", "x")
	if err != nil {
		return ""
	}
	done := min(len(out), b.objects)
	return fmt.Sprintf("%d%% (%d of %d objects), ", 100*done/b.objects, done, b.objects)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// tailFile returns the last n lines of root's own log file.
func tailFile(path string, n int) string {
	data, err := saferead.Read(path, 1<<30, saferead.Mine)
	if err != nil {
		return ""
	}
	if len(data) > 64<<10 {
		data = data[len(data)-64<<10:]
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  | " + strings.Join(lines, "\n  | ")
}

// as returns a step of the build account in dir writing to out.
func (b *builder) as(dir string, out io.Writer, env ...string) step {
	return step{acct: b.build, dir: dir, env: env, out: out}
}

// output runs a short command as the build account and returns its output.
func (b *builder) output(ctx context.Context, dir string, env []string, bin string, args ...string) (string, error) {
	var buf bytes.Buffer
	err := b.as(dir, &limitedBuffer{b: &buf, n: 4 << 20}, env...).run(ctx, bin, args...)
	return buf.String(), err
}

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// lastLines joins the last n lines of s with " | ", for a one-line error.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
