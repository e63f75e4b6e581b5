package unit_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/build/unitbuild"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/unit"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/watch/observe"
)

// frontPageLoad loads the lab's front page over HTTP with conns
// connections from this process.
func frontPageLoad(t *testing.T, l *lab.Lab, conns int, d, warmup time.Duration) func(ctx context.Context) (*results.Bench, error) {
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		t.Fatalf("lab URL %q", l.URL)
	}
	return func(ctx context.Context) (*results.Bench, error) {
		return load.Run(ctx, load.Options{
			Target:      load.Target{Protocol: "http", Network: "tcp", Address: u.Host, Host: u.Host, Display: l.URL},
			Requests:    []load.Request{{Method: "GET", Path: "/"}},
			Connections: conns, Duration: d, Warmup: warmup, KeepAlive: true, Timeout: 10 * time.Second,
		})
	}
}

func httpGet(t *testing.T, u string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 == 3 {
		return resp.StatusCode, resp.Header.Get("Location")
	}
	return resp.StatusCode, string(b)
}

// unitStatus reads the lab's Unit /status over its peer-checked control
// socket.
func unitStatus(t *testing.T, l *lab.Lab) *unit.Status {
	t.Helper()
	c := unit.NewControl(l.UnitControl, l.PeerUID())
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.Status(ctx)
	if err != nil {
		t.Fatalf("unit /status: %v", err)
	}
	return s
}

// unitProcesses lists the live (not zombie) processes of a process group.
func unitProcesses(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !strings.Contains(string(st), ") Z ") {
				out = append(out, pid)
			}
		}
	}
	return out
}

// TestUnitServesEveryApp runs every built-in app behind NGINX Unit built
// from its source release: the front page, $_SERVER's host and port, a
// static file, 404 for a missing script, and for WordPress a permalink, a
// category archive and a comment POST. Unit's /status answers on the
// control socket; no process runs as root and there is no php-fpm. A lab
// switched to nginx-fpm and back by Apply keeps serving; lab down after
// unitd was killed with SIGKILL leaves none of Unit's processes.
func TestUnitServesEveryApp(t *testing.T) {
	labtest.Home(t)
	unitbuild.Unit(t)
	ctx := context.Background()
	for _, c := range []struct{ app, marker string }{
		{"hello", "Hello, world!"},
		{"phpinfo", "PHP Version"},
		{"strings", "strings ok"},
		{"io", "io ok answer=42"},
		{"wordpress", "phptune lab"},
	} {
		t.Run(c.app, func(t *testing.T) {
			l, err := lab.Up(ctx, lab.Options{Name: "unit-" + c.app, App: c.app, Set: []string{"server=unit", "unit.processes=2"}})
			if err != nil {
				t.Fatal(err)
			}
			defer lab.Down(l.Name)
			if l.FPMListen != "" || l.UnitControl == "" {
				t.Errorf("a Unit lab with php-fpm %q, control socket %q", l.FPMListen, l.UnitControl)
			}
			var unitPID int
			for _, p := range l.Processes {
				if p.Component == "php-fpm" || p.Component == "nginx" {
					t.Errorf("server=unit runs %s", p.Component)
				}
				if p.Component == "unit" {
					unitPID = p.PID
				}
			}
			if unitPID == 0 {
				t.Fatalf("no unit process recorded: %+v", l.Processes)
			}
			code, body := httpGet(t, l.URL+"/")
			if code != 200 || !strings.Contains(body, c.marker) {
				t.Fatalf("GET / = %d, lacks %q: %.300s", code, c.marker, body)
			}
			switch c.app {
			case "phpinfo":
				port := l.URL[strings.LastIndexByte(l.URL, ':')+1:]
				for _, want := range []string{"127.0.0.1:" + port, "SERVER_PORT", "Server API </td><td class=\"v\">unit"} {
					if !strings.Contains(body, want) {
						t.Errorf("phpinfo lacks %q", want)
					}
				}
			case "wordpress":
				checkWordPressHTTP(t, l)
			default:
				if code, body := httpGet(t, l.URL+"/static.html"); code != 200 || !strings.Contains(body, "phptune static") {
					t.Errorf("static file: %d %.100s", code, body)
				}
			}
			if c.app == "strings" {
				// The tuner's runtime read (opcache, realpath cache) goes
				// through Unit: the status script's own route.
				w, err := workload.Parse(ctx, l, workload.Front)
				if err != nil {
					t.Fatal(err)
				}
				b, err := labstack.New(l, w).Measure(ctx, 2, time.Second, 200*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				if rt := b.Runtime; rt == nil || rt.Opcache == nil || rt.Realpath == nil || len(rt.Errors) > 0 {
					t.Errorf("runtime under Unit: %+v", rt)
				}
				if code, _ := httpGet(t, l.URL+unit.StatusPath); code != 200 {
					t.Errorf("the status script's route answered %d from 127.0.0.1", code)
				}
			}
			if code, _ := httpGet(t, l.URL+"/nothing-here.php"); code != 404 {
				t.Errorf("a missing script answered %d, want 404", code)
			}
			s := unitStatus(t, l)
			if a := s.Applications[unit.AppName]; a.Processes.Running != 2 || s.Requests.Total == 0 {
				t.Errorf("unit /status: %+v (want 2 processes running, requests counted)", s)
			}
			if os.Geteuid() == 0 {
				for _, pid := range unitProcesses(unitPID) {
					st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
					if m := regexp.MustCompile(`(?m)^Uid:\s+(\d+)`).FindSubmatch(st); m == nil || string(m[1]) == "0" {
						t.Errorf("unit process %d runs as root", pid)
					}
				}
			}
			if c.app == "wordpress" {
				// Apply moves the lab to nginx + php-fpm and back.
				for _, set := range [][]string{{"server=nginx-fpm"}, {"server=unit", "unit.pm=dynamic", "unit.processes=3", "unit.spare_processes=1"}} {
					cfg, err := knob.Defaults().Apply(set)
					if err != nil {
						t.Fatal(err)
					}
					if err := l.Apply(ctx, cfg); err != nil {
						t.Fatalf("Apply %v: %v", set, err)
					}
					if code, body := httpGet(t, l.URL+"/"); code != 200 || !strings.Contains(body, c.marker) {
						t.Fatalf("after Apply %v: GET / = %d", set, code)
					}
				}
				if a := unitStatus(t, l).Applications[unit.AppName]; a.Processes.Running < 1 {
					t.Errorf("dynamic pool: %+v", a)
				}
				for _, p := range l.Processes {
					if p.Component == "unit" {
						unitPID = p.PID
					}
				}
			}
			// unitd killed outright: lab down still stops its router and
			// application processes (they share its process group).
			if err := syscall.Kill(unitPID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			if err := lab.Down(l.Name); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for left := unitProcesses(unitPID); len(left) > 0; left = unitProcesses(unitPID) {
				if time.Now().After(deadline) {
					t.Fatalf("Unit processes %v outlived lab down", left)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// checkWordPressHTTP follows ?p=ID to its pretty permalink (Unit's route
// falls back to index.php), reads a category archive and posts a comment.
func checkWordPressHTTP(t *testing.T, l *lab.Lab) {
	t.Helper()
	_, front := httpGet(t, l.URL+"/")
	m := regexp.MustCompile(`href="(` + regexp.QuoteMeta(l.URL) + `/\d{4}/\d{2}/[^"/]+/)"`).FindStringSubmatch(front)
	if m == nil {
		t.Fatalf("the front page links no permalink on %s: %.300s", l.URL, front)
	}
	permalink := m[1]
	code, post := httpGet(t, permalink)
	if code != 200 || !strings.Contains(post, "comment_post_ID") {
		t.Fatalf("the permalink %s answered %d: %.200s", permalink, code, post)
	}
	if code, _ := httpGet(t, l.URL+"/category/uncategorized/"); code != 200 {
		t.Errorf("a category archive answered %d", code)
	}
	if code, _ := httpGet(t, l.URL+"/wp-admin/"); code != 302 {
		t.Errorf("/wp-admin/ answered %d, want 302 to the login", code)
	}
	id := regexp.MustCompile(`name='comment_post_ID' value='(\d+)'`).FindStringSubmatch(post)
	if id == nil {
		t.Fatalf("no comment form on %s", permalink)
	}
	form := url.Values{"comment_post_ID": {id[1]}, "author": {"Bench"}, "email": {"bench@example.invalid"}, "comment": {"a comment behind Unit"}}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(l.URL+"/wp-comments-post.php", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != 302 || !strings.HasPrefix(loc, l.URL+"/") || !strings.Contains(loc, "comment") {
		t.Fatalf("comment POST: %d, Location %q", resp.StatusCode, loc)
	}
}

// TestUnitUnderLoad observes a strings lab on Unit with more connections
// than application processes: Unit's router, its application processes
// (the PHP workers: CPU, per-worker PSS, imbalance) and its /status, whose
// active requests above the processes running are Unit's own queue.
func TestUnitUnderLoad(t *testing.T) {
	labtest.Home(t)
	unitbuild.Unit(t)
	ctx := context.Background()
	l, err := lab.Up(ctx, lab.Options{Name: "unit-obs", App: "strings", Set: []string{"server=unit", "unit.processes=2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Down(l.Name)
	cfg, closeDB, err := labstack.Observer(l)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	if cfg.UnitControl == "" || cfg.FPM != nil {
		t.Fatalf("observer config: unit %q, fpm %v", cfg.UnitControl, cfg.FPM)
	}
	cfg.Roots = append(cfg.Roots, observe.Root{Component: observe.ComponentGenerator, PID: os.Getpid()})
	cfg.Interval = 500 * time.Millisecond
	b, err := observe.MeasureConfig(ctx, cfg, frontPageLoad(t, l, 8, 2*time.Second, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if b.Errors > 0 || b.Requests == 0 {
		t.Fatalf("load: %d requests, %d errors %v", b.Requests, b.Errors, b.ErrorsByClass)
	}
	d := b.Observation.Derived
	t.Logf("unit: %d requests at %.0f req/s; CPU s/request %v; worker PSS p50 %d KiB; imbalance %.2f; warnings %q", b.Requests, b.ThroughputRPS, d.CPUSecondsPerRequest, d.WorkerPSSP50B>>10, d.WorkerImbalance, d.Warnings)
	cpu := d.CPUSecondsPerRequest
	if cpu[observe.GroupUnitWorkers] <= 0 || cpu[observe.GroupUnitRouter] <= 0 {
		t.Errorf("no CPU for Unit's application processes or router: %v", cpu)
	}
	if _, ok := cpu[observe.GroupFPMWorkers]; ok {
		t.Errorf("php-fpm workers in a Unit lab: %v", cpu)
	}
	if d.WorkerPSSP50B <= 0 || d.WorkerImbalance <= 0 {
		t.Errorf("PHP workers' PSS %d, imbalance %.2f: want both measured", d.WorkerPSSP50B, d.WorkerImbalance)
	}
	read := 0
	for _, s := range b.Observation.Samples {
		if u := s.Unit; u != nil {
			read++
			if u.MaxProcesses != 2 || u.ProcessesRunning > 2 {
				t.Errorf("unit sample %+v", u)
			}
		}
	}
	if read == 0 {
		t.Fatalf("no sample read Unit's /status")
	}
	if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "the pool is at unit.processes") }) {
		t.Errorf("8 connections on 2 processes: no pool-at-size warning in %q", d.Warnings)
	}
}

// TestUnitKnobsRefusedBeforeStart: php-fpm's knobs, Unit's rules broken
// or a PHP build refuse a Unit lab before any process starts or any
// directory is made.
func TestUnitKnobsRefusedBeforeStart(t *testing.T) {
	home := labtest.Home(t)
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"server=unit", "pm.max_children=20"}, "PHP runs in Unit's application processes"},
		{[]string{"server=unit", "unit.pm=dynamic", "unit.processes=2", "unit.spare_processes=5"}, "unit.spare_processes=5 is greater than unit.processes=2"},
		{[]string{"unit.processes=4"}, "belongs to server unit"},
	} {
		_, err := lab.Up(context.Background(), lab.Options{Name: "unit-bad", App: "hello", Set: c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.set, err, c.want)
		}
		if ents, _ := os.ReadDir(home + "/labs"); len(ents) != 0 {
			t.Fatalf("%v: a refused lab left %d entries in labs/", c.set, len(ents))
		}
	}
}
