// Package workload is what a lab is loaded with: it turns a workload name
// (front, comment, mix, a path, an access log, a scenario file) into the
// requests phptune's generator sends, reading a WordPress lab's database
// for the pages and posts that need it.
package workload

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/traffic/accesslog"
	"github.com/phptune/phptune/internal/traffic/load"
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
	// body that does not match is an unexpected_body error). Parse
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
	Front   = "front"
	Comment = "comment"
	Mix     = "mix"
)

// Builtin says whether name is a built-in workload and which app it needs
// ("" for any app).
func Builtin(name string) (app string, ok bool) {
	switch name {
	case "", Front:
		return "", true
	case Comment, Mix:
		return "wordpress", true
	}
	return "", false
}

// IsPath says spec names a page to GET ("/shop/"): it starts with "/"
// and is not a regular file of this machine, which is read as a scenario
// file (--workload /root/shop.scenario), nor named like one (a name
// ending in .scenario).
func IsPath(spec string) bool {
	if !strings.HasPrefix(spec, "/") || strings.HasSuffix(spec, ScenarioSuffix) {
		return false
	}
	st, err := os.Stat(spec)
	return err != nil || !st.Mode().IsRegular()
}

// ScenarioSuffix ends a scenario file's name by convention: a spec
// ending so is a file, never a page, so a mistyped or deleted
// /root/shop.scenario is refused instead of measured as a page.
const ScenarioSuffix = ".scenario"

// OpenScenario opens a scenario file: a regular file (a FIFO swapped in
// would block), not through a link at its last component.
func OpenScenario(spec string) (*os.File, error) {
	return saferead.Open(spec, saferead.AnyOwner)
}

// Parse turns a workload spec into requests for lab l: "front" (GET
// /), "comment" (WordPress comment form POSTs, which write), "mix"
// (WordPress pages and comments as readers use them, see MixShares), a
// path starting with "/" (GET it; IsPath), or a scenario file (see
// load.ParseScenario).
func Parse(ctx context.Context, l *lab.Lab, spec string) (Workload, error) {
	switch {
	case spec == "" || spec == Front:
		return Workload{Name: Front, Requests: []load.Request{{Method: "GET", Path: "/"}}}, nil
	case spec == Comment || spec == Mix:
		if l.App != "wordpress" {
			what := "posts WordPress comments"
			if spec == Mix {
				what = "loads WordPress pages and comments"
			}
			return Workload{}, fmt.Errorf("workload %s %s, but lab %s runs %s; use --app wordpress or another workload", spec, what, l.Name, l.App)
		}
		if spec == Mix {
			return mixWorkload(ctx, l)
		}
		id, err := commentablePost(ctx, l)
		if err != nil {
			return Workload{}, err
		}
		return Workload{Name: Comment, Writes: true, Requests: []load.Request{commentRequest(id, 1)}}, nil
	case IsPath(spec):
		return Workload{Name: spec, Requests: []load.Request{{Method: "GET", Path: spec}}}, nil
	case strings.HasPrefix(spec, LogPrefix) || strings.HasPrefix(spec, LogPostPrefix):
		w, _, err := FromSpec(spec)
		return w, err
	}
	f, err := OpenScenario(spec)
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

// FromSpec builds the workload of a "log:" or "log+post:" spec
// (see LogSpec), with the log's summary to show before it runs.
func FromSpec(spec string) (Workload, *accesslog.Summary, error) {
	if path, ok := strings.CutPrefix(spec, LogPostPrefix); ok {
		w, sum, err := FromLog(path, accesslog.Options{AllowPost: true})
		w.Name = spec
		return w, sum, err
	}
	path, _ := strings.CutPrefix(spec, LogPrefix)
	return FromLog(path, accesslog.Options{})
}

// FromLog builds a workload from a web server's access log (see
// package accesslog): its top dynamic paths weighted by their counts. The
// summary is for showing the scenario (Summary.Print) before it runs.
func FromLog(path string, opt accesslog.Options) (Workload, *accesslog.Summary, error) {
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
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.DBPeerUID(), sec.DBUser, sec.DBPassword, sec.DBName)
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
