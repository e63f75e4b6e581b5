package labstack

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/workload"
)

// TestServerErrorsExplainBacklog reproduces seed 003's 502s on a real lab
// (tiny backlogs, one worker, 200 connections): the trial's result names
// nginx's connect() failing with EAGAIN as their cause, with a count that
// matches the generator's 502s up to the requests at the run's edges (one
// per connection at most: failing as the warm-up ended, or unanswered
// when the run stopped). Then, on a pool that keeps up, a clean run: the
// logs were read and hold no error.
func TestServerErrorsExplainBacklog(t *testing.T) {
	labtest.Home(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Up(ctx, lab.Options{Name: "errlog", App: "hello",
		Set: []string{"listen.backlog=8", "nginx.listen_backlog=8", "pm=static", "pm.max_children=1"}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(ctx, l, "front")
	if err != nil {
		t.Fatal(err)
	}
	s := New(l, w)
	const conns = 200
	b, err := s.Measure(ctx, conns, 2*time.Second, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	gen := b.StatusCodes["502"]
	se := b.ServerErrors
	if gen == 0 || se == nil {
		t.Fatalf("no 502s (%v) or no server errors (%+v): the overload did not happen", b.StatusCodes, se)
	}
	logs := map[string]bool{}
	for _, lg := range se.Logs {
		logs[lg.Name] = true
		if lg.Note != "" {
			t.Errorf("log %s: %s", lg.Name, lg.Note)
		}
	}
	if !logs["nginx"] || !logs["php-fpm"] || logs["apache"] {
		t.Errorf("logs read: %+v", se.Logs)
	}
	var backlog *results.ServerErrorClass
	for i, c := range se.Classes {
		if c.Class == "nginx_fpm_backlog_full" {
			backlog = &se.Classes[i]
		} else if c.ClientStatus != 0 {
			t.Errorf("another failing class: %+v", c)
		}
	}
	if backlog == nil {
		t.Fatalf("no nginx_fpm_backlog_full among %+v", se.Classes)
	}
	// The generator counts only requests sent after the logs' mark, so
	// the two differ by the requests at the window's edges: at most one
	// per connection at each.
	slack := int64(2 * conns)
	if d := backlog.Requests - gen; d > slack || d < -slack || backlog.ClientStatus != 502 || !strings.Contains(backlog.Cause, "listen.backlog=8") {
		t.Errorf("backlog class %+v against %d 502s from the generator", *backlog, gen)
	}
	want := fmt.Sprintf("%d of %d 502s were nginx's connect() to the fpm socket failing with EAGAIN: the fpm socket's backlog (listen.backlog=8) was full", min(gen, backlog.Requests), gen)
	if len(se.Explanations) == 0 || !strings.HasPrefix(se.Explanations[0], want) {
		t.Errorf("explanations %q, want the first to start %q", se.Explanations, want)
	}
	t.Logf("%d 502s; nginx_fpm_backlog_full %d lines; %s", gen, backlog.Lines, se.Explanations)

	// A pool that keeps up with its load: the logs are read and clean.
	cfg := knob.Defaults()
	cfg["pm"], cfg["pm.max_children"] = "static", "4"
	if err := s.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	b, err = s.Measure(ctx, 2, time.Second, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if b.Errors != 0 || b.ServerErrors == nil || len(b.ServerErrors.Logs) != 2 || len(b.ServerErrors.Classes) != 0 || len(b.ServerErrors.Explanations) != 0 {
		t.Errorf("clean run: %d errors, server errors %+v", b.Errors, b.ServerErrors)
	}
}
