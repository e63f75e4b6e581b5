package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/testkit/readmecmd"
)

// The README's commands are tests: every command of its sh blocks is run,
// as written, by one of the tests below, under readmecmd.TestRule (time
// budgets and durations shortened) with the placeholders filled:
//
//   - phptune-tune-RUN: the directory the previous tune (or demo) of the
//     same test printed ("files in DIR:");
//   - /srv/staging/public: a staging copy the test makes (an index.php
//     whose page is titled "My Site");
//   - site.test is test/realserver.sh's production site, as written.
//
// Which test runs a command (readmeTier): make test is the runner itself;
// make demo and the blocks that name no --site or --lab run in
// TestReadmeCommands (make test); the blocks that name --site or --lab in
// TestReadmeSiteCommands, on the simulated production server (make
// test-realserver). apply, which acts on the host's running php-fpm, gets
// in make test a host copy's --root (hosttest: Debian's php-fpm
// configuration under a temporary root, its master started for real). A
// command no test can run fails TestReadmeCommands, naming it.
const (
	tierRunner     = "make test (the runner of these tests)"
	tierMakeTest   = "TestReadmeCommands (make test)"
	tierRealServer = "TestReadmeSiteCommands (make test-realserver)"
)

// readmeCommands are the README's commands with the test that runs each.
func readmeCommands(t *testing.T) ([]readmecmd.Command, map[int]string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := readmecmd.Parse(b)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	siteBlock := map[int]bool{}
	for _, c := range cmds {
		for _, a := range c.Args {
			if a == "--site" || a == "--lab" {
				siteBlock[c.Block] = true
			}
		}
	}
	tiers := map[int]string{}
	for i, c := range cmds {
		switch {
		case c.Text == "make test":
			tiers[i] = tierRunner
		case c.Text == "make demo":
			tiers[i] = tierMakeTest
		case readmecmd.IsPhptune(c.Args[0]) && len(c.Args) > 1 && siteBlock[c.Block]:
			tiers[i] = tierRealServer
		case readmecmd.IsPhptune(c.Args[0]) && len(c.Args) > 1:
			tiers[i] = tierMakeTest
		}
	}
	return cmds, tiers
}

// TestReadmeCommandsAllRun: every command the README shows is run by a
// test. A command added to the README that no test knows how to run (not
// phptune, make demo or make test) fails here with its line.
func TestReadmeCommandsAllRun(t *testing.T) {
	cmds, tiers := readmeCommands(t)
	if len(cmds) < 10 {
		t.Errorf("the README shows %d commands: is its sh block syntax still ```sh?", len(cmds))
	}
	for i, c := range cmds {
		if tiers[i] == "" {
			t.Errorf("README.md line %d: %q is run by no test: make it a phptune command, make demo or make test, or teach readmeTier to run it", c.Line, c.Text)
			continue
		}
		t.Logf("README.md line %d: %-90s run by %s", c.Line, c.Text, tiers[i])
	}
}

// readmeRun is the state of one test's run through the README: the
// binary, the working directory and the placeholders' values.
type readmeRun struct {
	t       *testing.T
	bin     string
	work    string
	tuneDir string // phptune-tune-RUN, from the last tune or demo
	staging string // /srv/staging/public
	// hostRoot is the host copy apply acts on in make test ("" on the
	// production server, where apply runs as written).
	hostRoot func() string
}

// buildPhptune builds the command into a directory of the test's.
func buildPhptune(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "phptune")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/phptune")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// run runs one README command (its words shortened and filled) and checks
// its documented result.
func (r *readmeRun) run(c readmecmd.Command) {
	t := r.t
	args := readmecmd.Shorten(c.Args, readmecmd.TestRule)
	args = readmecmd.Fill(args, [2]string{"phptune-tune-RUN", r.tuneDir}, [2]string{"/srv/staging/public", r.staging})
	if strings.Contains(strings.Join(args, " "), "phptune-tune-RUN") || (r.tuneDir == "" && strings.Contains(c.Text, "phptune-tune-RUN")) {
		t.Fatalf("README.md line %d: %q names phptune-tune-RUN, and no tune ran before it", c.Line, c.Text)
	}
	var cmd *exec.Cmd
	if args[0] == "make" {
		cmd = exec.Command("make", args[1:]...)
		cmd.Dir = "../.."
	} else {
		if args[1] == "apply" && r.hostRoot != nil {
			args = append(args, "--root", r.hostRoot(), "--settle", "100ms")
		}
		cmd = exec.Command(r.bin, args[1:]...)
		cmd.Dir = r.work
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("README.md line %d: %s\n  ran as: %s\n  exit %v in %s", c.Line, c.Text, strings.Join(args, " "), err, time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("README.md line %d: %q failed: %v\n--- stdout\n%s--- stderr\n%s", c.Line, c.Text, err, stdout.String(), stderr.String())
	}
	r.check(c, args, stdout.String(), stderr.String())
}

var (
	filesIn        = regexp.MustCompile(`(?m)^files in (.+):$`)
	verdictClosing = regexp.MustCompile(`(?m)^verdict: (.+)$`)
)

// check checks that a command printed its documented result.
func (r *readmeRun) check(c readmecmd.Command, args []string, stdout, stderr string) {
	t := r.t
	sub := args[1]
	if args[0] != "make" && sub == "lab" && len(args) > 2 {
		sub = "lab " + args[2]
	}
	want := func(what string, ok bool) {
		if !ok {
			t.Errorf("README.md line %d: %q did not print %s:\n--- stdout\n%s--- stderr\n%s", c.Line, c.Text, what, stdout, stderr)
		}
	}
	switch sub {
	case "demo", "tune":
		m := filesIn.FindStringSubmatch(stdout)
		want("its files' directory (files in DIR:)", m != nil)
		vs := verdictClosing.FindAllStringSubmatch(stdout, -1)
		want("the verdict (verdict: ...)", len(vs) > 0)
		if m == nil || len(vs) == 0 {
			return
		}
		dir := m[1]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(map[bool]string{true: "../..", false: r.work}[args[0] == "make"], dir)
		}
		if args[0] == "make" {
			t.Cleanup(func() { os.RemoveAll(dir) })
		}
		r.tuneDir = dir
		verdict := vs[len(vs)-1][1]
		page, err := os.ReadFile(filepath.Join(dir, "report.html"))
		if err != nil {
			t.Errorf("README.md line %d: %v", c.Line, err)
			return
		}
		h := verdictHeading.FindSubmatch(page)
		if h == nil || html.UnescapeString(string(h[1])) != verdict {
			t.Errorf("README.md line %d: report.html's headline does not state the terminal's verdict %q:\n%s", c.Line, verdict, firstBytes(page, 4000))
		}
		var res results.Tune
		if b, err := os.ReadFile(filepath.Join(dir, "result.json")); err != nil || json.Unmarshal(b, &res) != nil || res.Verdict == nil || res.Verdict.Sentence != verdict {
			t.Errorf("README.md line %d: result.json's verdict is not the terminal's %q (%v)", c.Line, verdict, err)
		}
		t.Logf("README.md line %d: verdict: %s", c.Line, verdict)
	case "compare":
		want("the comparison's table (config, rps, p99 ms)", strings.Contains(stdout, "config") && strings.Contains(stdout, "p99 ms"))
		for _, a := range args {
			if strings.HasSuffix(a, "recommended.knobs") {
				want("the quoted verdict of the tune it compares", strings.Contains(stdout, "whose verdict was: "))
			}
		}
	case "apply":
		want("the plan (the drop-in's diff and its steps)", strings.Contains(stdout, "+++ ") && strings.Contains(stdout, "Plan: "))
	case "site":
		want("the site's vhost and docroot", strings.Contains(stdout, "site.test") && strings.Contains(stdout, "/var/www/site"))
		want("the vhost's rules a lab leaves out, a parameter's value not shown", strings.Contains(stdout, "vhost rule  location ~ /\\.ht at /etc/nginx/sites-enabled/site.test:") &&
			strings.Contains(stdout, "vhost rule  fastcgi_param APP_ENV (") && !strings.Contains(stdout, "Zq9"))
	case "lab up":
		want("the front page: line", strings.Contains(stdout+stderr, "front page: "))
	case "bench":
		want("the throughput and the latencies", strings.Contains(stdout, "Throughput") && strings.Contains(stdout, "p99"))
	case "lab reset", "lab down":
		// Exit 0 is their result; lab down says which lab went.
	default:
		t.Errorf("README.md line %d: %q: no documented result is checked for %s: add it to readmeRun.check", c.Line, c.Text, sub)
	}
}

func firstBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// stagingCopy makes the README's /srv/staging/public: a PHP directory
// whose page is titled "My Site", readable by www-data, with a data
// directory of www-data's the page writes to.
func stagingCopy(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "phptune-staging-") // outside phptune's private home
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	page := `<?php
$n = 0;
for ($i = 0; $i < 2000; $i++) { $n += strlen(md5((string)$i)); }
echo "<!doctype html><title>My Site</title><p>Welcome to My Site ($n)</p>";
`
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadmeCommands runs the README's make demo and its commands that
// need no site of this host (the --docroot block: tune, compare, apply
// --dry-run), in order, as written under readmecmd.TestRule.
func TestReadmeCommands(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the README's commands run as root (make demo installs packages; --user needs root): run make test as root")
	}
	if _, err := user.Lookup("www-data"); err != nil {
		t.Skip("the README's --docroot block runs as www-data, which this host lacks")
	}
	labtest.Home(t) // PHPTUNE_HOME for every command, labs taken down at the end
	cmds, tiers := readmeCommands(t)
	r := &readmeRun{t: t, bin: buildPhptune(t), work: t.TempDir(), staging: stagingCopy(t)}
	var host *hosttest.Host
	r.hostRoot = func() string {
		if host == nil {
			host = hosttest.Debian(t)
		}
		return host.Root
	}
	for i, c := range cmds {
		switch tiers[i] {
		case tierMakeTest:
			r.run(c)
		default:
			t.Logf("README.md line %d: %q: not here: run by %s", c.Line, c.Text, tiers[i])
		}
	}
	if host != nil {
		if err := host.Unchanged(); err != nil {
			t.Errorf("apply --dry-run changed the host copy: %v", err)
		}
	}
}

// TestReadmeSiteCommands runs the README's blocks that tune a site of this
// host (site, lab up --site, bench --lab, lab reset, lab down, tune --site,
// compare --site), in order, as written under readmecmd.TestRule, on
// test/realserver.sh's production server, where site.test is served.
func TestReadmeSiteCommands(t *testing.T) {
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("the README's site commands need a site on this host: they run on test/realserver.sh's production server (make test-realserver)")
	}
	labtest.Home(t)
	cmds, tiers := readmeCommands(t)
	r := &readmeRun{t: t, bin: buildPhptune(t), work: t.TempDir()}
	defer func() {
		// A failed step leaves the README's lab up: take it down.
		exec.CommandContext(context.Background(), r.bin, "lab", "down", "lab").Run()
	}()
	n := 0
	for i, c := range cmds {
		if tiers[i] == tierRealServer {
			r.run(c)
			n++
		}
	}
	if n == 0 {
		t.Fatal("the README has no site commands: TestReadmeSiteCommands ran nothing")
	}
	fmt.Fprintf(os.Stderr, "README: %d site commands ran\n", n)
}
