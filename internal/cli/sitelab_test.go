package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/seal"
	"github.com/phptune/phptune/internal/watch/observe"
)

// wireSitePage is the site lab fixture's page: it reads and writes its
// database as its configuration names it (localhost: PHP's default
// socket, which inside the seal is the lab's MariaDB), and tries to reach
// an address outside the lab, which the seal refuses and counts.
const wireSitePage = `<?php
mysqli_report(MYSQLI_REPORT_OFF);
$db = @new mysqli('localhost', 'siteuser', 'sitepw', 'sitedb');
$marker = $db->connect_errno ? 'db-error' : $db->query('SELECT v FROM marker')->fetch_row()[0];
if (!$db->connect_errno) { $db->query('INSERT INTO hits VALUES ()'); }
$out = @fsockopen('10.255.255.1', 80, $e, $s, 1) ? 'open' : 'refused';
echo "<html><head><title>Wire Site</title></head><body>marker=$marker out=$out host={$_SERVER['HTTP_HOST']}</body></html>\n";
`

// wireSiteDocroot makes the fixture site's docroot: owned by www-data,
// in a root-owned directory outside /tmp (a seal replaces /tmp inside).
func wireSiteDocroot(t *testing.T) (string, int) {
	t.Helper()
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	www, err := user.Lookup("www-data")
	if err != nil {
		t.Skip("no www-data account")
	}
	uid, _ := strconv.Atoi(www.Uid)
	gid, _ := strconv.Atoi(www.Gid)
	parent, err := os.MkdirTemp(labtest.TempParent(), "phptune-site-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	docroot := filepath.Join(parent, "site")
	if err := os.Mkdir(docroot, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"index.php":     wireSitePage,
		"wp-config.php": "<?php\ndefine('DB_NAME', 'sitedb');\ndefine('DB_USER', 'siteuser');\ndefine('DB_PASSWORD', 'sitepw');\ndefine('DB_HOST', 'localhost');\n",
	} {
		p := filepath.Join(docroot, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(docroot, uid, gid); err != nil {
		t.Fatal(err)
	}
	return docroot, uid
}

// upWireSiteLab brings up a sealed site lab of a production-like site (a
// docroot owned by www-data outside /tmp, its configuration naming
// localhost) with its database filled, as lab up --site makes it, and
// records the live start a live pool of pm = static, pm.max_children = 7
// would give (LAB/live.knobs).
func upWireSiteLab(t *testing.T, name string) *lab.Lab {
	t.Helper()
	docroot, uid := wireSiteDocroot(t)
	s := &site.Site{
		Query: "wire.test", Root: "/", Host: "wire.test", Port: 80,
		Vhost:   site.Vhost{Server: "nginx", Names: []string{"wire.test"}, Root: docroot},
		DocRoot: site.DocRoot{Path: docroot, Owner: "www-data", UID: uid},
		Pool:    &site.Pool{Name: "www", User: "www-data", Group: "www-data"},
	}
	fill := func(ctx context.Context, db lab.SiteDB) error {
		sql := "CREATE DATABASE sitedb; CREATE TABLE sitedb.marker (v VARCHAR(32)); INSERT INTO sitedb.marker VALUES ('lab-copy');" +
			"CREATE TABLE sitedb.hits (id INT AUTO_INCREMENT PRIMARY KEY);" +
			"CREATE USER 'siteuser'@'localhost' IDENTIFIED BY 'sitepw'; GRANT ALL ON sitedb.* TO 'siteuser'@'localhost';"
		return db.Load(ctx, strings.NewReader(sql))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	live := "pm=static\npm.max_children=7\n"
	l, err := lab.Up(ctx, lab.Options{Name: name, Site: s, FillDatabase: fill, Set: []string{"pm=static", "pm.max_children=7"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.Dir, labstack.LiveStartFile), []byte(live), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSealedSiteLabCommands: a sealed site lab is a target for bench,
// tune and compare alike (labstack.Target: its unix socket with the site's
// Host): the page is the site's 200 page, every measured request a 2xx,
// the tune starts from the live configuration the lab recorded (pm =
// static, pm.max_children = 7, labelled live, with the distro baseline),
// compare takes "live" as a configuration, and what the site's code tried
// to reach outside is in each result.
func TestSealedSiteLabCommands(t *testing.T) {
	home := labtest.Home(t)
	l := upWireSiteLab(t, "wire")

	// bench --lab: the site's page, all 2xx, attempts recorded.
	out, errs, code := runCLI(t, "bench", "--lab", "wire", "-c", "2", "-d", "2s", "--no-save", "--json", "-q")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "answered 200") || !strings.Contains(errs, "Wire Site") {
		t.Errorf("bench's page check is not the site's 200 page:\n%s", errs)
	}
	var b results.Bench
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Requests == 0 || b.Errors != 0 || b.StatusCodes["200"] != b.Requests {
		t.Errorf("bench: %d requests, %d errors, statuses %v; want every request a 200", b.Requests, b.Errors, b.StatusCodes)
	}
	if !hasBlocked(b.Blocked, "tcp", "10.255.255.1:80") {
		t.Errorf("bench's result lacks the refused attempt to 10.255.255.1:80: %+v", b.Blocked)
	}
	if b.Observation == nil || b.Observation.Derived.CPUSecondsPerRequest["php-fpm workers"] == 0 {
		t.Fatalf("the observer did not find the sealed lab's php-fpm workers: %+v", b.Observation)
	}
	// It also read the accept queues in the seal's network namespace (the
	// web server's unix socket, where the load arrives, and php-fpm's),
	// nginx's stub_status on that socket and the lab MariaDB's status,
	// with no error in any sample.
	var webQueue, fpmQueue, nginxStatus, dbStatus int
	for i, s := range b.Observation.Samples {
		for _, e := range s.Errors {
			t.Errorf("sample %d: %s", i, e)
		}
		for _, q := range s.Queues {
			switch {
			case q.Owner == observe.ComponentNginx && q.Socket == l.HTTPSocket && q.Backlog > 0:
				webQueue++
			case q.Owner == observe.ComponentFPM && q.Backlog > 0:
				fpmQueue++
			}
		}
		if s.Nginx != nil && s.Nginx.Requests > 0 {
			nginxStatus++
		}
		if s.MariaDB != nil {
			dbStatus++
		}
	}
	if n := len(b.Observation.Samples); webQueue != n || fpmQueue != n || nginxStatus != n || dbStatus != n {
		t.Errorf("of %d samples, %d read the web server's queue, %d php-fpm's, %d nginx's status page, %d MariaDB's; want all", n, webQueue, fpmQueue, nginxStatus, dbStatus)
	}

	// tune --lab: from the live start, with the distro baseline.
	dir := filepath.Join(home, "tune-out")
	_, errs, code = runCLI(t, "tune", "--lab", "wire", "-c", "2", "--time-budget", "40s", "--trial-duration", "1s", "--trial-warmup", "0",
		"--holdout-rounds", "2", "--curve", "none", "-o", dir)
	if code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "starts from the live site's configuration") {
		t.Errorf("tune does not say it starts from the live configuration:\n%s", errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Tune
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.StartFrom != "live" || res.Start["pm"] != "static" || res.Start["pm.max_children"] != "7" {
		t.Errorf("tune's start: from %q, pm %q, pm.max_children %q; want live, static, 7", res.StartFrom, res.Start["pm"], res.Start["pm.max_children"])
	}
	if !hasBlocked(res.Blocked, "tcp", "10.255.255.1:80") {
		t.Errorf("tune's result lacks the refused attempt: %+v", res.Blocked)
	}
	for _, tr := range res.Trials {
		if b := tr.Bench; b != nil && b.Requests > 0 && b.StatusCodes["200"] != b.Requests {
			t.Errorf("trial %d: statuses %v; want every request a 200", tr.N, b.StatusCodes)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if !strings.Contains(string(summary), "the lab tried to reach tcp 10.255.255.1:80") {
		t.Errorf("summary.txt does not show the refused attempts:\n%s", summary)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(html), "Refused by the seal") {
		t.Error("report.html has no section on the refused attempts")
	}

	// compare --lab: live beside default.
	out, errs, code = runCLI(t, "compare", "--lab", "wire", "-c", "2", "-d", "1s", "--warmup", "0s", "--rounds", "1", "live", "default")
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "live ") || !strings.Contains(out, "the lab tried to reach tcp 10.255.255.1:80") {
		t.Errorf("compare's output lacks the live row or the refused attempts:\n%s", out)
	}
}

func hasBlocked(bs []results.Blocked, proto, dest string) bool {
	for _, b := range bs {
		if b.Proto == proto && b.Dest == dest && b.Count > 0 {
			return true
		}
	}
	return false
}

// TestSiteFlagRefusals: --site is one stack among --lab, --app and
// --docroot on every command, refused with the way out before anything
// starts.
func TestSiteFlagRefusals(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	checkUsageErrors(t, []usageCase{
		{args: []string{"tune", "--site", "site.test", "--app", "hello"}, want: "give exactly one of --lab, --app, --docroot and --site", fix: "--site NAME"},
		{args: []string{"capacity", "--site", "site.test", "--lab", "x"}, want: "give exactly one of --lab, --app, --docroot and --site", fix: "--site NAME"},
		{args: []string{"capacity", "--lab", "x", "--user", "www-data"}, want: "--user: only for a lab of its own (--app, --docroot, --site)", fix: "phptune lab up --user"},
		{args: []string{"compare", "--site", "site.test", "--docroot", "/srv", "default"}, want: "give exactly one of --lab, --app, --docroot and --site", fix: "--site NAME"},
		{args: []string{"profile", "--site", "site.test", "--lab", "x"}, want: "give exactly one of --lab, --app, --docroot and --site", fix: "--site NAME"},
		{args: []string{"bench", "--site", "site.test", "--lab", "x"}, want: "give exactly one of TARGET, --lab, --app, --docroot and --site", fix: "--site NAME"},
		{args: []string{"bench", "--site", "site.test", "--fcgi"}, want: "--fcgi does not go with --site", fix: "Leave --fcgi out"},
		{args: []string{"bench", "--user", "www-data", "http://127.0.0.1:1/"}, want: "--user: only for a lab of its own (--app, --docroot, --site)", fix: "phptune lab up --user"},
		{args: []string{"compare", "--app", "hello", "live"}, want: "live is a site's live configuration", fix: "Give --site NAME"},
	})
}

// TestSiteCommandsEndToEnd: tune --site and compare --site find the site
// on the host (a copy of Debian's nginx and php-fpm, started for real, a
// vhost wire.test whose pool is pm = static with 7 children), bring up a
// sealed lab of their own that starts from that live pool, measure the
// site's own 200 page, and take the lab down; the real docroot and the
// host's configuration are unchanged.
func TestSiteCommandsEndToEnd(t *testing.T) {
	home := labtest.Home(t)
	docroot, _ := wireSiteDocroot(t)
	h := hosttest.Debian(t, func(www string) string {
		www = strings.Replace(www, "\npm = dynamic", "\npm = static", 1)
		return strings.Replace(www, "\npm.max_children = 5", "\npm.max_children = 7", 1)
	})
	ng := h.Nginx(t)
	vhost := "server {\n\tlisten 127.0.0.1:" + strconv.Itoa(ng.Port+1) + ";\n\tserver_name wire.test;\n\troot " + docroot + ";\n\tindex index.php;\n" +
		"\tlocation ~ \\.php$ {\n\t\tinclude snippets/fastcgi-php.conf;\n\t\tfastcgi_pass unix:" + h.Socket + ";\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(h.Root, "etc", "nginx", "sites-enabled", "wire.test"), []byte(vhost), 0o644); err != nil {
		t.Fatal(err)
	}
	was := siteHost
	siteHost = site.Host{Root: h.Root}
	t.Cleanup(func() { siteHost = was })
	sums := fileSums(t, docroot)

	// tune --site, interrupted after a few trials: the run keeps the
	// site's record, without its password.
	dir := filepath.Join(home, "tune-site")
	ctx, cancel := context.WithCancel(context.Background())
	progress := &lockedWriter{}
	go func() {
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) && strings.Count(progress.String(), "] trial ") < 2 {
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
	}()
	err := Run(ctx, []string{"tune", "--site", "wire.test", "--db-from", "none", "-c", "2", "--time-budget", "40s", "--trial-duration", "1s", "--trial-warmup", "0",
		"--holdout-rounds", "2", "--curve", "none", "-o", dir}, io.Discard, progress)
	var ie *tune.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("interrupted tune --site returned %v, want an InterruptedError; stderr:\n%s", err, progress.String())
	}
	if !strings.Contains(progress.String(), "answered 200") || !strings.Contains(progress.String(), "Wire Site") {
		t.Errorf("tune --site's page is not the site's 200 page:\n%s", progress.String())
	}
	checkStoredSiteRun(t, ie.RunID, docroot)

	// The site's docroot moves: resuming the run is refused, naming the
	// fix, before anything starts.
	moved, _ := wireSiteDocroot(t)
	vhostFile := filepath.Join(h.Root, "etc", "nginx", "sites-enabled", "wire.test")
	if err := os.WriteFile(vhostFile, []byte(strings.Replace(vhost, "root "+docroot+";", "root "+moved+";", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, "tune", "--resume", ie.RunID)
	if code != 2 || !strings.Contains(errs, "changed since the run began") || !strings.Contains(errs, "its docroot was "+docroot+", now "+moved) ||
		!strings.Contains(errs, "phptune tune --site wire.test") {
		t.Errorf("resume of a site whose docroot changed: exit %d; want 2 naming the change and the fix\n%s", code, errs)
	}
	if err := os.WriteFile(vhostFile, []byte(vhost), 0o644); err != nil {
		t.Fatal(err)
	}

	// Back as it was: the run resumes on a site lab reopened from its
	// record, to the end.
	_, errs, code = runCLI(t, "tune", "--resume", ie.RunID)
	if code != 0 {
		t.Fatalf("tune --resume of the site run: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "site wire.test") || !strings.Contains(errs, "(stored)") {
		t.Errorf("the resumed run did not reopen the site's lab with its stored trials:\n%s", errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Tune
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.StartFrom != "live" || res.Start["pm"] != "static" || res.Start["pm.max_children"] != "7" || res.App != lab.SiteApp {
		t.Errorf("tune --site's start: from %q, pm %q, pm.max_children %q, app %q; want live, static, 7, site", res.StartFrom, res.Start["pm"], res.Start["pm.max_children"], res.App)
	}
	distro := false
	for _, b := range res.Baselines {
		distro = distro || b.Name == "distro"
	}
	if !distro {
		t.Errorf("tune --site has no distro baseline: %+v", res.Baselines)
	}
	for _, tr := range res.Trials {
		if b := tr.Bench; b != nil && b.Requests > 0 && b.StatusCodes["200"] != b.Requests {
			t.Errorf("trial %d: statuses %v; want every request a 200", tr.N, b.StatusCodes)
		}
	}

	checkStoredSiteRun(t, res.ID, docroot)

	out, errs, code := runCLI(t, "compare", "--site", "wire.test", "--db-from", "none", "-c", "2", "-d", "1s", "--warmup", "0s", "--rounds", "1", "live", "default")
	if code != 0 {
		t.Fatalf("compare --site: exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "live ") {
		t.Errorf("compare --site lacks the live row:\n%s", out)
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Errorf("--site left labs running: %+v", hs)
	}
	if got := fileSums(t, docroot); !reflect.DeepEqual(got, sums) {
		t.Errorf("the real docroot changed: before %v, after %v", sums, got)
	}
	if err := h.Unchanged(); err != nil {
		t.Errorf("the host's configuration changed: %v", err)
	}
}

// checkStoredSiteRun checks what run id, a tune --site of the wire site,
// stored of its site: a record of where it is (its name, vhost, docroot
// and app root, its database's name and account, and that the lab's
// database started empty, --db-from none) and nowhere the
// password of the site's configuration (sitepw).
func checkStoredSiteRun(t *testing.T, id, docroot string) {
	t.Helper()
	db, err := store.Open(context.Background(), resultsDBPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, err := db.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	result, err := json.Marshal(run.Result)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"options": string(run.Options), "result": string(result), "command": run.Command} {
		if strings.Contains(text, "sitepw") {
			t.Errorf("the stored run's %s hold the site's database password: %s", what, text)
		}
	}
	var opt tune.Options
	if err := json.Unmarshal(run.Options, &opt); err != nil {
		t.Fatal(err)
	}
	r := opt.Site
	if r == nil || r.Name != "wire.test" || r.DocRoot != docroot || r.VhostFile == "" || r.Server != "nginx" || r.AppRoot == "" ||
		r.DBName != "sitedb" || r.DBUser != "siteuser" || r.DBHost != "localhost" || r.DBFrom != "none" {
		t.Errorf("the stored run's site: %+v; want the wire site's record", r)
	}
}

// fileSums is the sha256 of every file under dir, by relative path.
func fileSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
