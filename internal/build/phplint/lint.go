package phplint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/capwrite"
)

// Defaults of Options.
const (
	// MaxFiles bounds the files one run checks.
	MaxFiles = 50_000
	// Jobs is how many PHP processes run at once.
	Jobs = 2
	// Batch is how many files one php -l of the newer PHP is given.
	Batch = 50
	// Timeout bounds one php -l (a batch of the newer PHP, one file of
	// the older).
	Timeout = 60 * time.Second
	// maxOutput bounds what one php -l run's output keeps.
	maxOutput = 4 << 20
)

// Options say what to lint and with what.
type Options struct {
	// Dir is the tree whose *.php files are checked.
	Dir string
	// New is the command line of the PHP judged (before -l FILE...); it
	// must lint several files at once (PHP 8.3 and later). Old is the
	// PHP the files run on now, asked only about the files New fails:
	// one file a run, as PHP before 8.3 lints only the first it is given.
	New, Old []string
	// Attr starts every PHP process (the unprivileged account); it must
	// put it in a process group of its own (Setpgid), which a timeout
	// kills.
	Attr func() *syscall.SysProcAttr
	// MaxFiles, Jobs, Batch and Timeout default to the constants.
	MaxFiles, Jobs, Batch int
	Timeout               time.Duration
	// Progress, when set, is called after each batch with the files done.
	Progress func(done, total int)
}

// File is one file's result.
type File struct {
	// Path is relative to Options.Dir.
	Path string `json:"path"`
	// Messages are the newer PHP's diagnostics on it.
	Messages []Message `json:"messages,omitempty"`
	// Old are the older PHP's diagnostics on a file the newer fails;
	// OldFails says it fails there too (already broken).
	Old      []Message `json:"old_messages,omitempty"`
	OldFails bool      `json:"old_fails,omitempty"`
	// Problem says why the file has no verdict: unreadable by the
	// account, a timeout, PHP died.
	Problem string `json:"problem,omitempty"`
}

// Report is a lint run's result.
type Report struct {
	Dir string `json:"dir"`
	// Found counts the *.php files found (at most MaxFiles+1 are looked
	// for); Truncated says there were more than MaxFiles, Checked how many
	// were given to PHP.
	Found     int  `json:"found"`
	Truncated bool `json:"truncated,omitempty"`
	Checked   int  `json:"checked"`
	// FailNew are the files that fail on the newer PHP only; FailBoth
	// those that fail on both (already broken).
	FailNew  []File `json:"fail_new_only"`
	FailBoth []File `json:"fail_both"`
	// Deprecated are the files that compile on the newer PHP with
	// deprecations or warnings.
	Deprecated []File `json:"deprecated"`
	// Problems are the files with no verdict.
	Problems []File `json:"problems,omitempty"`
	// Links counts the symbolic links skipped (never followed).
	Links   int     `json:"links_skipped,omitempty"`
	Seconds float64 `json:"seconds"`
}

func (o *Options) defaults() {
	if o.MaxFiles <= 0 {
		o.MaxFiles = MaxFiles
	}
	if o.Jobs <= 0 {
		o.Jobs = Jobs
	}
	if o.Batch <= 0 {
		o.Batch = Batch
	}
	if o.Timeout <= 0 {
		o.Timeout = Timeout
	}
}

// Run lints every *.php file under o.Dir (links are not followed) with
// o.New, Jobs processes at a time, and asks o.Old about each file that
// fails.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.defaults()
	start := time.Now()
	files, links, err := Find(o.Dir, o.MaxFiles+1)
	if err != nil {
		return nil, err
	}
	rep := &Report{Dir: o.Dir, Found: len(files), Links: links, FailNew: []File{}, FailBoth: []File{}, Deprecated: []File{}}
	if len(files) > o.MaxFiles {
		rep.Truncated, files = true, files[:o.MaxFiles]
	}
	rep.Checked = len(files)
	outs := o.lintAll(ctx, files)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var failed []*File
	for i := range outs {
		f := &outs[i]
		switch {
		case f.Problem != "":
			rep.Problems = append(rep.Problems, *f)
		case hasFatal(f.Messages):
			failed = append(failed, f)
		case len(f.Messages) > 0:
			rep.Deprecated = append(rep.Deprecated, *f)
		}
	}
	o.askOld(ctx, failed)
	for _, f := range failed {
		if f.OldFails {
			rep.FailBoth = append(rep.FailBoth, *f)
		} else {
			rep.FailNew = append(rep.FailNew, *f)
		}
	}
	for i := range rep.Problems {
		rep.Problems[i].Path = rel(o.Dir, rep.Problems[i].Path)
	}
	for _, l := range [][]File{rep.FailNew, rep.FailBoth, rep.Deprecated} {
		for i := range l {
			l[i].Path = rel(o.Dir, l[i].Path)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, ctx.Err()
}

// lintAll lints files in batches, Jobs at a time; the result has one File
// per file, in files' order, with absolute paths.
func (o *Options) lintAll(ctx context.Context, files []string) []File {
	out := make([]File, len(files))
	index := make(map[string]int, len(files))
	for i, f := range files {
		out[i].Path = f
		index[f] = i
	}
	batches := make(chan []string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	done := 0
	for w := 0; w < o.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				res := o.lintBatch(ctx, b)
				mu.Lock()
				for _, r := range res {
					i := index[r.Path]
					out[i].Messages, out[i].Problem = r.Messages, r.Problem
				}
				done += len(b)
				if o.Progress != nil {
					o.Progress(done, len(files))
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < len(files) && ctx.Err() == nil; i += o.Batch {
		batches <- files[i:min(i+o.Batch, len(files))]
	}
	close(batches)
	wg.Wait()
	return out
}

// lintBatch runs the newer PHP on batch. When PHP stops before its
// verdict on every file (a timeout, a crash), the file it was on is
// given the problem and the rest are run again.
func (o *Options) lintBatch(ctx context.Context, batch []string) []File {
	var res []File
	for len(batch) > 0 && ctx.Err() == nil {
		out, runErr := o.run(ctx, o.New, batch)
		got := Parse(out, batch)
		for _, g := range got {
			f := File{Path: g.File}
			switch {
			case g.Unreadable:
				f.Problem = "could not be opened by PHP (the account cannot read it, or it went away)"
			default:
				f.Messages = g.Messages
			}
			res = append(res, f)
		}
		batch = batch[len(got):]
		if len(batch) == 0 {
			break
		}
		why := "PHP printed no verdict on it"
		if runErr != nil {
			why = runErr.Error()
		}
		res = append(res, File{Path: batch[0], Problem: why})
		batch = batch[1:]
	}
	return res
}

// askOld runs the older PHP on each failed file, Jobs at a time.
func (o *Options) askOld(ctx context.Context, failed []*File) {
	if len(o.Old) == 0 {
		return
	}
	work := make(chan *File)
	var wg sync.WaitGroup
	for w := 0; w < o.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				out, _ := o.run(ctx, o.Old, []string{f.Path})
				if got := Parse(out, []string{f.Path}); len(got) == 1 {
					f.Old = got[0].Messages
					f.OldFails = !got[0].OK && !got[0].Unreadable
				}
			}
		}()
	}
	for _, f := range failed {
		if ctx.Err() != nil {
			break
		}
		work <- f
	}
	close(work)
	wg.Wait()
}

// run runs argv -l files with the timeout, as the account, and returns
// its output (standard output and error in the order written).
func (o *Options) run(ctx context.Context, argv, files []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	args := append(append(append([]string{}, argv[1:]...), "-l"), files...)
	cmd := exec.CommandContext(ctx, argv[0], args...)
	// The files are the site's: a file can make PHP write a lot (one
	// deprecation per line), so a run's output is bounded.
	var buf bytes.Buffer
	out := &capwrite.Writer{W: &buf, N: maxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if o.Attr != nil {
		cmd.SysProcAttr = o.Attr()
	}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", o.Timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		err = nil // php -l exits 255 (or 1) when a file fails: not a problem
	} else if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("running PHP: %v", err)
	}
	return buf.String(), err
}

// hasFatal says whether ms hold a diagnostic that stops compiling.
func hasFatal(ms []Message) bool {
	for _, m := range ms {
		if m.Fatal() {
			return true
		}
	}
	return false
}

// rel is path relative to dir, or path when it is not under it.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
