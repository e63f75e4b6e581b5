// Package labstack is the tuner's real stack: a lab (package lab) loaded by
// phptune's generator (package load) and watched by the observer (package
// observe). It implements tune.Stack, and turns a workload name (front,
// comment, a path, a scenario file) into requests for a lab.
package labstack

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/mariadb"
	"github.com/phptune/phptune/internal/pagecheck"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/shellquote"
	"github.com/phptune/phptune/internal/tune"
)

// Workload is what a tune loads the stack with.
type Workload struct {
	// Name as the user gave it: "front", "comment", "/path" or a file.
	Name     string
	Requests []load.Request
	// Writes is set for workloads that change the app's data; the tuner
	// resets the database before every measurement.
	Writes bool
	// Expect, when set, is a regular expression every 2xx response body
	// must match (load.Options.Expect: the first 64 KiB of the body; a
	// body that does not match is an unexpected_body error). ParseWorkload
	// leaves it empty; callers set it from --expect after checking it
	// with load.CompileExpect.
	Expect string
	// Host, when set, is the Host header every request and page check
	// carries (--host: the site's own name, so that it answers its real
	// pages, not a redirect to them); "" sends the lab's address.
	Host string
}

// Workload names with a built-in meaning.
const (
	WorkloadFront   = "front"
	WorkloadComment = "comment"
	WorkloadMix     = "mix"
)

// Builtin says whether name is a built-in workload and which app it needs
// ("" for any app).
func Builtin(name string) (app string, ok bool) {
	switch name {
	case "", WorkloadFront:
		return "", true
	case WorkloadComment, WorkloadMix:
		return "wordpress", true
	}
	return "", false
}

// ParseWorkload turns a workload spec into requests for lab l: "front" (GET
// /), "comment" (WordPress comment form POSTs, which write), "mix"
// (WordPress pages and comments as readers use them, see MixShares), a
// path starting with "/" (GET it), or a scenario file (see
// load.ParseScenario).
func ParseWorkload(ctx context.Context, l *lab.Lab, spec string) (Workload, error) {
	switch {
	case spec == "" || spec == WorkloadFront:
		return Workload{Name: WorkloadFront, Requests: []load.Request{{Method: "GET", Path: "/"}}}, nil
	case spec == WorkloadComment || spec == WorkloadMix:
		if l.App != "wordpress" {
			what := "posts WordPress comments"
			if spec == WorkloadMix {
				what = "loads WordPress pages and comments"
			}
			return Workload{}, fmt.Errorf("workload %s %s, but lab %s runs %s; use --app wordpress or another workload", spec, what, l.Name, l.App)
		}
		if spec == WorkloadMix {
			return mixWorkload(ctx, l)
		}
		id, err := commentablePost(ctx, l)
		if err != nil {
			return Workload{}, err
		}
		return Workload{Name: WorkloadComment, Writes: true, Requests: []load.Request{commentRequest(id, 1)}}, nil
	case strings.HasPrefix(spec, "/"):
		return Workload{Name: spec, Requests: []load.Request{{Method: "GET", Path: spec}}}, nil
	case strings.HasPrefix(spec, LogPrefix) || strings.HasPrefix(spec, LogPostPrefix):
		w, _, err := WorkloadFromSpec(spec)
		return w, err
	}
	f, err := os.Open(spec)
	if err != nil {
		return Workload{}, fmt.Errorf("workload %q is not front, comment, a path starting with / or a readable scenario file: %w", spec, err)
	}
	defer f.Close()
	reqs, err := load.ParseScenario(f)
	if err != nil {
		return Workload{}, fmt.Errorf("scenario %s: %w (each line: WEIGHT METHOD PATH [BODY])", spec, err)
	}
	w := Workload{Name: spec, Requests: reqs}
	for _, r := range reqs {
		if r.Method != "GET" && r.Method != "HEAD" {
			w.Writes = true // a POST may write; reset to be safe
		}
	}
	return w, nil
}

// commentRequest posts a comment to post id, as WordPress's comment form
// does. WordPress answers a comment it took with a 302 back to the post,
// so 302 is the expected status and anything else (a 200 error page for a
// duplicate or a flood, a 4xx) is an error.
func commentRequest(id int64, weight int) load.Request {
	form := url.Values{
		"comment_post_ID": {fmt.Sprint(id)},
		"author":          {"phptune"},
		"email":           {"load@phptune.invalid"},
		"comment":         {"A comment posted by phptune's comment workload, as a reader would."},
	}
	h := map[string][]string{"Content-Type": {"application/x-www-form-urlencoded"}}
	return load.Request{Weight: weight, Method: "POST", Path: "/wp-comments-post.php", Header: h, Body: []byte(form.Encode()), ExpectStatus: 302}
}

// Workload specs of an access log (tune and compare record the workload as
// one string): "log:PATH" replays its GET and HEAD requests,
// "log+post:PATH" its POSTs too (--allow-post).
const (
	LogPrefix     = "log:"
	LogPostPrefix = "log+post:"
)

// LogSpec is the workload spec of an access log.
func LogSpec(path string, allowPost bool) string {
	if allowPost {
		return LogPostPrefix + path
	}
	return LogPrefix + path
}

// WorkloadFromSpec builds the workload of a "log:" or "log+post:" spec
// (see LogSpec), with the log's summary to show before it runs.
func WorkloadFromSpec(spec string) (Workload, *accesslog.Summary, error) {
	if path, ok := strings.CutPrefix(spec, LogPostPrefix); ok {
		w, sum, err := WorkloadFromLog(path, accesslog.Options{AllowPost: true})
		w.Name = spec
		return w, sum, err
	}
	path, _ := strings.CutPrefix(spec, LogPrefix)
	return WorkloadFromLog(path, accesslog.Options{})
}

// WorkloadFromLog builds a workload from a web server's access log (see
// package accesslog): its top dynamic paths weighted by their counts. The
// summary is for showing the scenario (Summary.Print) before it runs.
func WorkloadFromLog(path string, opt accesslog.Options) (Workload, *accesslog.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Workload{}, nil, fmt.Errorf("access log: %w", err)
	}
	defer f.Close()
	sum, err := accesslog.Read(f, opt)
	if err != nil {
		return Workload{}, sum, fmt.Errorf("access log %s: %w", path, err)
	}
	w := Workload{Name: "log:" + path, Requests: sum.Requests()}
	for _, r := range w.Requests {
		if r.Method == "POST" {
			w.Writes = true
		}
	}
	return w, sum, nil
}

// commentablePost finds the first published post open to comments.
func commentablePost(ctx context.Context, l *lab.Lab) (int64, error) {
	sec, err := l.ReadSecrets()
	if err != nil {
		return 0, err
	}
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.PeerUID(), sec.DBUser, sec.DBPassword, sec.DBName)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var id int64
	err = db.QueryRowContext(ctx, "SELECT MIN(ID) FROM wp_posts WHERE post_type='post' AND post_status='publish' AND comment_status='open'").Scan(&id)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("lab %s has no post open to comments (%v); try: phptune lab reset %s", l.Name, err, l.Name)
	}
	return id, nil
}

// Stack is a lab under a generator (phptune's own unless Generator says
// otherwise) and phptune's observer.
type Stack struct {
	Lab      *lab.Lab
	Workload Workload
	// ObserveInterval between observer samples (default 1 s).
	ObserveInterval time.Duration
	// KeepAlive reuses connections (browsers do); default true via New.
	KeepAlive bool
	// CheckPages makes every Measure fetch the workload's page first and
	// add PageWarnings (against the first check, FirstPage) to the
	// result: a trial whose page turned into an error page says so.
	CheckPages bool
	FirstPage  *pagecheck.Page
	// Generator loads the lab (nil: phptune's own, OwnGenerator).
	Generator Generator
}

// New returns the stack for l and w.
func New(l *lab.Lab, w Workload) *Stack {
	return &Stack{Lab: l, Workload: w, ObserveInterval: time.Second, KeepAlive: true, CheckPages: true}
}

// Apply restarts the lab with cfg. When the stack fails to start, the error
// carries the end of the components' logs.
func (s *Stack) Apply(ctx context.Context, cfg knob.Config) error {
	err := s.Lab.Apply(ctx, cfg)
	if err == nil || ctx.Err() != nil {
		return err
	}
	logs, _ := s.Lab.Logs("", 15)
	return &StartError{Err: err, Logs: logs}
}

// StartError is a configuration the stack refused or failed to start with.
type StartError struct {
	Err  error
	Logs string
}

func (e *StartError) Error() string {
	if e.Logs == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "\n" + e.Logs
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// Reset restores the lab's database to its seeded state.
func (s *Stack) Reset(ctx context.Context) error { return s.Lab.Reset(ctx) }

// Measure loads the running lab with conns connections for warmup and then
// d, observing every process of the stack and the generator, and returns
// the generator's result with the observation attached (derived figures
// over the measured part only) and, read after the load, what the lab's
// caches hold (Bench.Runtime: opcache, the realpath cache, InnoDB) and
// what its servers logged as errors in the measured part, classified and
// explained (Bench.ServerErrors).
func (s *Stack) Measure(ctx context.Context, conns int, d, warmup time.Duration) (*results.Bench, error) {
	target, err := s.target()
	if err != nil {
		return nil, err
	}
	interval := s.ObserveInterval
	if interval <= 0 {
		interval = time.Second
	}
	var pageWarnings []string
	if s.CheckPages {
		p, perr := s.CheckPage(ctx)
		switch {
		case perr != nil:
			pageWarnings = append(pageWarnings, "checking the page before the run: "+perr.Error())
		case s.FirstPage == nil:
			s.FirstPage = &p
			pageWarnings = PageWarnings(pagecheck.Page{}, p)
		default:
			pageWarnings = PageWarnings(*s.FirstPage, p)
		}
	}
	// InnoDB's page requests are counted from here: MariaDB restarts only
	// when its knobs change, so its counters span earlier trials.
	var innoBefore *innodbCounters
	var runtimeErrs []string
	if s.Lab.MariaDBSocket != "" {
		var ierr error
		if innoBefore, ierr = readInnoDBCounters(ctx, s.Lab); ierr != nil {
			runtimeErrs = append(runtimeErrs, "mariadb before the load: "+ierr.Error())
		}
	}
	// The servers' error logs, from the end of the warm-up.
	logs := NewErrorLogs(s.Lab)
	// What a sealed lab tries to reach outside, from here to the end.
	blocked := NewBlockedCounter(ctx, s.Lab)
	b, err := Observe(ctx, s.Lab, interval, func(ctx context.Context) (*results.Bench, error) {
		return s.generator().Run(ctx, load.Options{
			Target:      target,
			Requests:    s.Workload.Requests,
			Connections: conns,
			Duration:    d,
			Warmup:      warmup,
			KeepAlive:   s.KeepAlive,
			Expect:      s.Workload.Expect,
			Command:     s.command(conns, d, warmup),
			OnMeasure:   logs.Mark,
		})
	})
	if err != nil {
		return nil, err
	}
	logs.Attach(b)
	var blockedWarning string
	if b.Blocked, blockedWarning = blocked.Since(ctx); blockedWarning != "" {
		b.Warnings = append(b.Warnings, blockedWarning)
	}
	// After the load and the observer: what the caches hold now is what
	// this configuration's workload filled them with.
	b.Runtime = readRuntime(ctx, s.Lab, innoBefore)
	b.Runtime.Errors = append(runtimeErrs, b.Runtime.Errors...)
	b.Warnings = append(b.Warnings, pageWarnings...)
	return b, nil
}

// command is the bench command line that loads the lab the same way.
func (s *Stack) command(conns int, d, warmup time.Duration) string {
	what := "--app-path " + s.Workload.Requests[0].Path
	if len(s.Workload.Requests) > 1 {
		what = "--workload " + s.Workload.Name
		if f, ok := strings.CutPrefix(s.Workload.Name, LogPrefix); ok {
			what = "--workload-from-log " + f
		} else if f, ok := strings.CutPrefix(s.Workload.Name, LogPostPrefix); ok {
			what = "--workload-from-log " + f + " --allow-post"
		}
	}
	cmd := fmt.Sprintf("phptune bench --lab %s %s -c %d -d %s --warmup %s", s.Lab.Name, what, conns, d, warmup)
	if s.Workload.Expect != "" {
		cmd += " --expect " + shellquote.Quote(s.Workload.Expect)
	}
	if f := s.generator().BenchFlags(); f != "" {
		cmd += " " + f
	}
	return cmd
}

// PagePath is the workload's page to check: its most weighted GET (the
// first on a tie), "/" when it has none.
func (w Workload) PagePath() string {
	best, bestW := "/", 0
	for _, r := range w.Requests {
		if r.Method != "" && r.Method != "GET" {
			continue
		}
		if wt := max(r.Weight, 1); wt > bestW {
			best, bestW = r.Path, wt
		}
	}
	return best
}

// CheckPage fetches the workload's page (Workload.PagePath) from the
// running lab once: its status, size and <title>. Call it at the start of a
// run and of every trial, and give the results to PageWarnings.
func (s *Stack) CheckPage(ctx context.Context) (pagecheck.Page, error) {
	return CheckPage(ctx, s.Lab, s.Workload)
}

// CheckPage is Stack.CheckPage for a lab and workload.
func CheckPage(ctx context.Context, l *lab.Lab, w Workload) (pagecheck.Page, error) {
	if l.Sealed() {
		// Through the sealed lab's socket with the site's Host: its
		// name on this host is production's.
		return l.FetchPage(ctx, w.PagePath())
	}
	return pagecheck.FetchHost(ctx, strings.TrimSuffix(l.URL, "/")+w.PagePath(), w.Host)
}

// PageWarnings says what is wrong with a page check: an error status, a
// redirect, a title that reads like an error, setup or maintenance page,
// and, given the run's first check (the zero Page for the first check
// itself), a change since then (pagecheck.Drift). Without --expect these
// are what tells a tuned error page from the real one.
func PageWarnings(first, now pagecheck.Page) []string {
	var out []string
	switch {
	case now.Status >= 400:
		out = append(out, fmt.Sprintf("%s: the page is an error; the measurement would time its error page", now))
	case now.Status >= 300:
		out = append(out, fmt.Sprintf("%s: a redirect; the generator measures the redirect, not the page it points to", now))
	}
	if bad, word := pagecheck.LooksLikeError(now.Title); bad {
		out = append(out, fmt.Sprintf("%s: the title reads like an error, setup or maintenance page (%q); check the page in a browser, and give --expect REGEX to count such answers as errors", now, word))
	}
	if first.URL != "" {
		if d := pagecheck.Drift(first, now); d != "" {
			out = append(out, fmt.Sprintf("%s: %s", now.URL, d))
		}
	}
	return out
}

// StartPageRefusal says why a run that tunes or compares must not start on
// page p, the check of w's page (Workload.PagePath): it answered a status
// that is not a 2xx and not the one its request expects, so every trial
// would time a redirect or an error page (the redirect of a site whose home
// URL names another host, the 404 of a wrong path). "" when p is fine.
func StartPageRefusal(p pagecheck.Page, w Workload) string {
	expect := 0
	for _, r := range w.Requests {
		if (r.Method == "" || r.Method == "GET") && r.Path == w.PagePath() {
			expect = r.ExpectStatus
			break
		}
	}
	if p.Status == expect || (expect == 0 && p.Status >= 200 && p.Status < 300) {
		return ""
	}
	what := "an error page"
	if p.Status >= 300 && p.Status < 400 {
		what = "a redirect"
	}
	return fmt.Sprintf("the start page %s: %s, not the page; every trial would time it and tune nothing real", p, what)
}

// StartPageFixes are the ways out of a StartPageRefusal, for the message.
const StartPageFixes = "load a path that answers 200 (--workload /PATH, or --workload-from-log with your site's log); " +
	"send the site's own name as the Host header with --host NAME (a site whose home URL names another host redirects there), " +
	"or make the site answer its page at the lab's address; give a scenario file whose line for a page that redirects on purpose declares it (\"=> 301\"); " +
	"and --expect REGEX to count error pages answered with 200 as errors"

var _ tune.Stack = (*Stack)(nil)
