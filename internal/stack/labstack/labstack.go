// Package labstack is the tuner's real stack: a lab (package lab) loaded by
// a generator (phptune's own, package load, or another Generator) with a
// workload (package workload) and watched by the observer (package
// observe). It implements tune.Stack (Measure, Apply, Reset), measures a
// lab's capacity, reads what its caches hold and what its servers logged
// as errors after a run, and checks the workload's page before one.
package labstack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/shellquote"
	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

// Stack is a lab under a generator (phptune's own unless Generator says
// otherwise) and phptune's observer.
type Stack struct {
	Lab      *lab.Lab
	Workload workload.Workload
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
func New(l *lab.Lab, w workload.Workload) *Stack {
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
// explained (Bench.ServerErrors), and how a site lab's own caches served
// the measured part (Bench.Caches).
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
	var drift string
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
			if p.Status != s.FirstPage.Status || p.Title != s.FirstPage.Title {
				drift = pagecheck.Drift(*s.FirstPage, p)
			}
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
	// A site lab's own caches' counters, from the end of the warm-up.
	caches := NewCacheCounters(ctx, s.Lab)
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
			OnMeasure:   func() { logs.Mark(); caches.Mark() },
		})
	})
	if err != nil {
		return nil, err
	}
	logs.Attach(b)
	caches.Attach(ctx, b)
	var blockedWarning string
	if b.Blocked, blockedWarning = blocked.Since(ctx); blockedWarning != "" {
		b.Warnings = append(b.Warnings, blockedWarning)
	}
	// After the load and the observer: what the caches hold now is what
	// this configuration's workload filled them with.
	b.Runtime = readRuntime(ctx, s.Lab, innoBefore)
	b.Runtime.Errors = append(runtimeErrs, b.Runtime.Errors...)
	b.Warnings = append(b.Warnings, pageWarnings...)
	b.PageDrift = drift
	return b, nil
}

// command is the bench command line that loads the lab the same way.
func (s *Stack) command(conns int, d, warmup time.Duration) string {
	what := "--app-path " + s.Workload.Requests[0].Path
	if len(s.Workload.Requests) > 1 {
		what = "--workload " + s.Workload.Name
		if f, ok := strings.CutPrefix(s.Workload.Name, workload.LogPrefix); ok {
			what = "--workload-from-log " + f
		} else if f, ok := strings.CutPrefix(s.Workload.Name, workload.LogPostPrefix); ok {
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

// CheckPage fetches the workload's page (workload.Workload.PagePath) from the
// running lab once: its status, size and <title>. Call it at the start of a
// run and of every trial, and give the results to PageWarnings.
func (s *Stack) CheckPage(ctx context.Context) (pagecheck.Page, error) {
	return CheckPage(ctx, s.Lab, s.Workload)
}

// CheckPage is Stack.CheckPage for a lab and workload.
func CheckPage(ctx context.Context, l *lab.Lab, w workload.Workload) (pagecheck.Page, error) {
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
// page p, the check of w's page (workload.Workload.PagePath): it answered a status
// that is not a 2xx and not the one its request expects, so every trial
// would time a redirect or an error page (the redirect of a site whose home
// URL names another host, the 404 of a wrong path). "" when p is fine.
func StartPageRefusal(p pagecheck.Page, w workload.Workload) string {
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
