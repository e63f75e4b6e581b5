package lab

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/stack/lab/labtest/testhome"
)

// testHome points Root at a fresh directory the unprivileged stack user can
// traverse (t.TempDir's parents are private to root).
func testHome(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a lab; skipped with -short")
	}
	if _, err := exec.LookPath("/usr/sbin/nginx"); err != nil {
		t.Skip("nginx is not installed; run: phptune setup")
	}
	parent := os.TempDir()
	if os.Geteuid() == 0 {
		// Not under /tmp: a sealed site lab cannot live there (the
		// seal replaces /tmp inside); see labtest.TempParent.
		parent = "/var/lib"
	}
	dir, err := os.MkdirTemp(parent, testhome.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testhome.Stamp(dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PHPTUNE_HOME", dir)
	t.Cleanup(func() {
		if hs, _ := List(); len(hs) > 0 {
			for _, h := range hs {
				_ = Down(h.Lab.Name)
			}
		}
		os.RemoveAll(dir)
	})
	return dir
}

// labProcesses are the pids labRefs finds.
func labProcesses(o owner, procs []Process) []int {
	refs := labRefs(o, procs)
	out := make([]int, len(refs))
	for i, r := range refs {
		out[i] = r.pid
	}
	return out
}

// testOwner finds every process of the stack account naming dir.
func testOwner(t *testing.T, dir string) owner {
	t.Helper()
	o, err := untrustedOwner(dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func assertGone(t *testing.T, l *Lab) {
	t.Helper()
	o := testOwner(t, l.Dir)
	o.bootID = l.BootID
	if left := labProcesses(o, l.Processes); len(left) > 0 {
		t.Errorf("processes of lab %s still running: %v", l.Name, left)
	}
	if _, err := os.Stat(l.Dir); !os.IsNotExist(err) {
		t.Errorf("lab directory %s still exists (%v)", l.Dir, err)
	}
}

func TestAppsServeTheirPages(t *testing.T) {
	testHome(t)
	ctx := context.Background()
	for _, c := range []struct{ app, marker string }{
		{"hello", "Hello, world!"},
		{"phpinfo", "PHP Version"},
		{"strings", "strings ok"},
		{"io", "io ok answer=42"},
	} {
		t.Run(c.app, func(t *testing.T) {
			l, err := Up(ctx, Options{Name: c.app, App: c.app})
			if err != nil {
				t.Fatal(err)
			}
			code, body := get(t, l.URL+"/")
			if code != 200 || !strings.Contains(body, c.marker) {
				t.Errorf("GET / = %d, body lacks %q: %.200s", code, c.marker, body)
			}
			if code, body := get(t, l.URL+"/static.html"); code != 200 || !strings.Contains(body, "phptune static") {
				t.Errorf("static file: %d %.100s", code, body)
			}
			if code, body := get(t, l.URL+"/fpm-status?json"); code != 200 || !strings.Contains(body, `"process manager":"dynamic"`) {
				t.Errorf("fpm status: %d %.200s", code, body)
			}
			want := os.FileMode(0o700)
			if os.Geteuid() == 0 {
				want = 0o750 // root's, the stack's group may read
			}
			fi, err := os.Stat(l.Dir)
			if err != nil || fi.Mode().Perm() != want || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
				t.Errorf("lab dir mode %v, want %v owned by uid %d (%v)", fi.Mode().Perm(), want, os.Geteuid(), err)
			}
			if os.Geteuid() == 0 {
				for _, p := range l.Processes {
					if uid := procUID(t, p.PID); uid == "0" {
						t.Errorf("%s (pid %d) runs as root", p.Component, p.PID)
					}
				}
			}
			if err := Down(l.Name); err != nil {
				t.Fatal(err)
			}
			assertGone(t, l)
		})
	}
}

func procUID(t *testing.T, pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "status"))
	if err != nil {
		t.Fatalf("reading status of %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Uid:") {
			return strings.Fields(line)[1]
		}
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestWordPressFrontPageCommentAndReset(t *testing.T) {
	testHome(t)
	ctx := context.Background()
	l, err := Up(ctx, Options{Name: "wp", App: "wordpress"})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	code, body := get(t, l.URL+"/")
	if code != 200 || !strings.Contains(body, "phptune lab") {
		t.Fatalf("front page: %d %.300s", code, body)
	}
	if n := strings.Count(body, `<h2 class="wp-block-post-title"`); n != 10 {
		t.Errorf("front page shows %d post titles, want the 10 newest seeded posts (posts_per_page)", n)
	}

	s, err := l.ReadSecrets()
	if err != nil {
		t.Fatal(err)
	}
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.PeerUID(), s.DBUser, s.DBPassword, s.DBName)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// No other account than root (with its password), the locked
	// mariadb.sys and the app's: mariadb-install-db's passwordless roots
	// at 127.0.0.1, ::1 and the host's name are dropped.
	rootDB, err := mariadb.OpenLab(l.MariaDBSocket, l.PeerUID(), "root", s.MariaDBRootPassword, "mysql")
	if err != nil {
		t.Fatal(err)
	}
	defer rootDB.Close()
	rows, err := rootDB.Query("SELECT User, Host FROM mysql.global_priv ORDER BY User, Host")
	if err != nil {
		t.Fatal(err)
	}
	var accounts []string
	for rows.Next() {
		var u, h string
		rows.Scan(&u, &h)
		accounts = append(accounts, u+"@"+h)
	}
	rows.Close()
	if want := []string{"mariadb.sys@localhost", "root@localhost", s.DBUser + "@localhost"}; strings.Join(accounts, " ") != strings.Join(want, " ") {
		t.Errorf("the lab's MariaDB has the accounts %q, want only %q", accounts, want)
	}
	count := func() int {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM wp_comments").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var postID int
	if err := db.QueryRow("SELECT MIN(ID) FROM wp_posts WHERE post_type='post' AND post_status='publish' AND comment_status='open'").Scan(&postID); err != nil {
		t.Fatal(err)
	}
	before := count()
	for i := 0; i < 3; i++ {
		form := url.Values{"comment_post_ID": {itoa(postID)}, "author": {"Bench"}, "email": {"bench@example.invalid"}, "comment": {"the same comment, posted quickly"}}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.PostForm(l.URL+"/wp-comments-post.php", form)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 302 {
			t.Fatalf("comment %d: status %d (flood/duplicate checks should be off): %.300s", i, resp.StatusCode, b)
		}
	}
	if got := count(); got != before+3 {
		t.Fatalf("comments: %d before, %d after 3 posts", before, got)
	}
	if err := l.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != before {
		t.Fatalf("after reset: %d comments, want the seeded %d", got, before)
	}
	// Secrets are not in the state file other tools read.
	state, _ := os.ReadFile(filepath.Join(l.Dir, "state.json"))
	if strings.Contains(string(state), s.DBPassword) || strings.Contains(string(state), s.MariaDBRootPassword) {
		t.Error("state.json contains a password")
	}
}

func TestTwoLabsSideBySideAndApply(t *testing.T) {
	testHome(t)
	ctx := context.Background()
	a, err := Up(ctx, Options{Name: "a", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Up(ctx, Options{Name: "b", App: "hello", Set: []string{"pm=static", "pm.max_children=3", "listen=tcp"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.URL == b.URL || a.FPMListen == b.FPMListen {
		t.Fatalf("labs share an address: %s %s", a.URL, b.URL)
	}
	for _, l := range []*Lab{a, b} {
		if code, body := get(t, l.URL+"/"); code != 200 || !strings.Contains(body, "Hello") {
			t.Errorf("lab %s: %d %s", l.Name, code, body)
		}
	}
	if _, body := get(t, b.URL+"/fpm-status?json"); !strings.Contains(body, `"process manager":"static"`) || !strings.Contains(body, `"total processes":3`) {
		t.Errorf("lab b status: %s", body)
	}
	// Apply a new config to b; a keeps running untouched.
	cfg := b.Config.Clone()
	cfg["pm.max_children"] = "5"
	cfg["listen"] = "unix"
	if err := b.Apply(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, body := get(t, b.URL+"/fpm-status?json"); !strings.Contains(body, `"total processes":5`) {
		t.Errorf("after Apply: %s", body)
	}
	// An invalid config is refused before anything stops.
	bad := b.Config.Clone()
	bad["pm"] = "dynamic"
	bad["pm.max_children"] = "2"
	if err := b.Apply(ctx, bad); err == nil || !strings.Contains(err.Error(), "max_spare_servers") {
		t.Errorf("invalid Apply not refused: %v", err)
	}
	if code, _ := get(t, b.URL+"/"); code != 200 {
		t.Errorf("lab b stopped serving after a refused Apply")
	}
	if code, _ := get(t, a.URL+"/"); code != 200 {
		t.Errorf("lab a disturbed by b's restart")
	}
	for _, l := range []*Lab{a, b} {
		if err := Down(l.Name); err != nil {
			t.Fatal(err)
		}
		assertGone(t, l)
	}
}

func TestRefusedBeforeAnyProcessStarts(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "readme.txt"), []byte("no php"), 0o644)
	if _, err := Up(ctx, Options{Name: "inuse", App: "hello"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opt  Options
		want string
	}{
		{"unknown knob", Options{Name: "x", Set: []string{"pm.turbo=1"}}, `unknown knob "pm.turbo"`},
		{"bad pm", Options{Name: "x", Set: []string{"pm=fast"}}, `knob pm: value "fast"`},
		{"zero children", Options{Name: "x", Set: []string{"pm.max_children=0"}}, "valid: 1..4096"},
		{"spares over children", Options{Name: "x", Set: []string{"pm.max_children=2"}}, "max_spare_servers=3 is greater than pm.max_children=2"},
		{"start outside spares", Options{Name: "x", Set: []string{"pm.start_servers=5", "pm.max_children=10"}}, "pm.start_servers=5 is outside"},
		{"unknown app", Options{Name: "x", App: "drupal"}, `unknown app "drupal"`},
		{"docroot without php", Options{Name: "x", DocRoot: empty}, "has no .php file"},
		{"bad name", Options{Name: "../etc"}, "lab name"},
		{"name in use", Options{Name: "inuse", App: "hello"}, `lab name "inuse" is already in use`},
		{"port taken", Options{Name: "x", Port: taken}, "already in use"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Up(ctx, c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(home, "labs", "x")); !os.IsNotExist(err) {
				t.Errorf("a lab directory was created for a refused lab")
			}
		})
	}
	// The lab that was in use is still intact.
	l, err := Open("inuse")
	if err != nil || healthOf(l) != "up" {
		t.Fatalf("lab inuse damaged: %v %v", err, l)
	}
}

func TestDeadLabIsCleanedByStatus(t *testing.T) {
	testHome(t)
	l, err := Up(context.Background(), Options{Name: "dead", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	// Simulate a crash of the stack: kill every process behind phptune's back.
	o := l.owner()
	o.dir = ""
	killAll(o, l.Processes, time.Second)
	hs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || !strings.HasPrefix(hs[0].Status, "cleaned") {
		t.Fatalf("status = %+v, want the dead lab cleaned", hs)
	}
	assertGone(t, l)
}

func TestUserDocRoot(t *testing.T) {
	testHome(t)
	dir, err := os.MkdirTemp("", "phptune-docroot-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "index.php"), []byte("<?php echo 'front controller saw ', $_SERVER['REQUEST_URI'];"), 0o644)
	if os.Geteuid() == 0 {
		// A private directory is refused with the fix in the message...
		os.Chmod(dir, 0o700)
		if _, err := Up(context.Background(), Options{Name: "own", DocRoot: dir}); err == nil || !strings.Contains(err.Error(), "chmod o+x") {
			t.Fatalf("unreachable docroot not refused clearly: %v", err)
		}
	}
	os.Chmod(dir, 0o755)
	l, err := Up(context.Background(), Options{Name: "own", DocRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	// ...and a reachable one is served, unknown paths through index.php.
	if code, body := get(t, l.URL+"/some/pretty/path"); code != 200 || !strings.Contains(body, "front controller saw /some/pretty/path") {
		t.Fatalf("GET through the front controller: %d %q", code, body)
	}
}

// A lab without MariaDB takes a MariaDB knob change (the search raises
// mariadb.max_connections with a large pool) without starting one.
func TestApplyMariaDBKnobWithoutMariaDB(t *testing.T) {
	testHome(t)
	ctx := context.Background()
	l, err := Up(ctx, Options{Name: "nodb", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	cfg := l.Config.Clone()
	cfg["mariadb.max_connections"] = "300"
	if err := l.Apply(ctx, cfg); err != nil {
		t.Fatalf("Apply mariadb.max_connections=300 on a lab without MariaDB: %v", err)
	}
	if recorded(l, "mariadb") {
		t.Errorf("a MariaDB was started: %+v", l.Processes)
	}
	if code, _ := get(t, l.URL+"/"); code != 200 {
		t.Errorf("GET / = %d after Apply", code)
	}
}
