package lab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/servers/mariadb"
)

// apacheHome is testHome for the Apache tests: they skip, saying what to
// install, without Debian's apache2 binary and PHP module.
func apacheHome(t *testing.T) {
	t.Helper()
	testHome(t)
	if _, err := apache.Find(); err != nil {
		t.Skipf("skipping the Apache labs: %v", err)
	}
	if _, err := apache.FindModPHP(); err != nil {
		t.Skipf("skipping the Apache labs: %v", err)
	}
}

// withServer is cfg with another server; the knobs of the server left
// behind go back to their defaults, where they are irrelevant.
func withServer(cfg knob.Config, server string) knob.Config {
	out := cfg.Clone()
	for _, k := range knob.All() {
		if !knob.UsedBy(k, server) {
			out[k.Name] = k.Default
		}
	}
	out[knob.ServerKnob] = server
	return out
}

// webComponent is the component a server's web server is recorded as.
func webComponent(server string) string {
	switch server {
	case knob.ApacheEventFPM, knob.ApachePreforkModPHP:
		return "apache"
	case knob.LighttpdFPM:
		return "lighttpd"
	case knob.CaddyFPM:
		return "caddy"
	case knob.H2OFPM:
		return "h2o"
	case knob.UnitPHP:
		return "unit"
	}
	return "nginx"
}

// checkServer checks that the lab's web server is the one its knob names:
// its process recorded (and no other web server's), its status page
// answering, php-fpm running only where the server uses it and its status
// and ping pages reachable through the server, nothing running as root.
func checkServer(t *testing.T, l *Lab) {
	t.Helper()
	server := l.Config.Server()
	web := webComponent(server)
	for _, c := range webComponents {
		if recorded(l, c) != (c == web) {
			t.Errorf("server=%s: %s recorded %v; processes %+v", server, c, recorded(l, c), l.Processes)
		}
	}
	if recorded(l, "php-fpm") != knob.RunsFPM(server) {
		t.Errorf("server=%s: php-fpm recorded %v, want %v", server, recorded(l, "php-fpm"), knob.RunsFPM(server))
	}
	status := l.ServerStatusURL
	var want string
	switch web {
	case "nginx":
		want = "Active connections"
	case "apache":
		status += "?auto"
		want = "ServerMPM: " + map[string]string{knob.ApacheEventFPM: "event", knob.ApachePreforkModPHP: "prefork"}[server]
	case "lighttpd":
		status += "?auto"
		want = "BusyServers: "
	case "h2o":
		status += "/json"
		want = `"max-connections": `
	case "caddy":
		if status != "" {
			t.Errorf("server=%s: a status URL %q (Caddy has none without its admin endpoint)", server, status)
		}
	}
	if want != "" {
		if code, body := get(t, status); code != 200 || !strings.Contains(body, want) {
			t.Errorf("server=%s: %s = %d, lacks %q: %.200s", server, status, code, want, body)
		}
	}
	if knob.RunsFPM(server) {
		// The observer and users read php-fpm's pages through the lab's
		// port too.
		for _, c := range []struct{ path, want string }{
			{"/fpm-status", "pool:                 www"},
			{"/fpm-status?json", `"pool":"www"`},
			{"/fpm-ping", "pong"},
		} {
			if code, body := get(t, l.URL+c.path); code != 200 || !strings.Contains(body, c.want) {
				t.Errorf("server=%s: %s = %d, lacks %q: %.200s", server, c.path, code, c.want, body)
			}
		}
	}
	if os.Geteuid() == 0 {
		for _, p := range l.Processes {
			if uid := procUID(t, p.PID); uid == "0" {
				t.Errorf("%s (pid %d) runs as root", p.Component, p.PID)
			}
		}
	}
}

// TestAppsBehindApache serves every built-in app behind both Apache
// servers: each lab comes up on apache-event-fpm, is switched by Apply to
// apache-prefork-modphp (Apache and php-fpm stop, Apache with mod_php
// starts), and WordPress then goes back to nginx-fpm. WordPress's front
// page and a comment POST are checked behind each server.
func TestAppsBehindApache(t *testing.T) {
	apacheHome(t)
	ctx := context.Background()
	for _, c := range []struct{ app, marker string }{
		{"hello", "Hello, world!"},
		{"phpinfo", "PHP Version"},
		{"strings", "strings ok"},
		{"io", "io ok answer=42"},
		{"wordpress", "phptune lab"},
	} {
		t.Run(c.app, func(t *testing.T) {
			l, err := Up(ctx, Options{Name: "ap-" + c.app, App: c.app, Set: []string{"server=apache-event-fpm"}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := Down(l.Name); err != nil {
					t.Error(err)
				}
				assertGone(t, l)
			}()
			servers := []string{knob.ApacheEventFPM, knob.ApachePreforkModPHP}
			if c.app == "wordpress" {
				servers = append(servers, knob.NginxFPM)
			}
			for i, server := range servers {
				if i > 0 {
					if err := l.Apply(ctx, withServer(l.Config, server)); err != nil {
						t.Fatalf("Apply server=%s: %v", server, err)
					}
				}
				checkServer(t, l)
				code, body := get(t, l.URL+"/")
				if code != 200 || !strings.Contains(body, c.marker) {
					t.Fatalf("server=%s: GET / = %d, body lacks %q: %.300s", server, code, c.marker, body)
				}
				switch c.app {
				case "phpinfo":
					port := l.URL[strings.LastIndexByte(l.URL, ':')+1:]
					for _, want := range []string{"127.0.0.1:" + port, "SERVER_PORT"} {
						if !strings.Contains(body, want) {
							t.Errorf("server=%s: phpinfo lacks %q ($_SERVER's host and port)", server, want)
						}
					}
				case "wordpress":
					checkWordPress(t, l, server)
				default:
					if code, body := get(t, l.URL+"/static.html"); code != 200 || !strings.Contains(body, "phptune static") {
						t.Errorf("server=%s: static file: %d %.100s", server, code, body)
					}
				}
				if code, _ := get(t, l.URL+"/nothing-here.php"); code != 404 {
					t.Errorf("server=%s: a missing script answered %d, want 404", server, code)
				}
			}
		})
	}
}

// checkWordPress fetches a permalink (routed by the server to index.php)
// and posts a comment.
func checkWordPress(t *testing.T, l *Lab, server string) {
	t.Helper()
	s, err := l.ReadSecrets()
	if err != nil {
		t.Fatal(err)
	}
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.PeerUID(), s.DBUser, s.DBPassword, s.DBName)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var postID int
	var name string
	if err := db.QueryRow("SELECT ID, post_name FROM wp_posts WHERE post_type='post' AND post_status='publish' AND comment_status='open' ORDER BY ID LIMIT 1").Scan(&postID, &name); err != nil {
		t.Fatal(err)
	}
	var n0, n1 int
	_ = db.QueryRow("SELECT COUNT(*) FROM wp_comments").Scan(&n0)
	// The front page links its posts with the lab's own host and port.
	_, front := get(t, l.URL+"/")
	if !strings.Contains(front, l.URL+"/") {
		t.Errorf("server=%s: the front page does not link to %s/", server, l.URL)
	}
	// ?p=ID redirects to the post's pretty permalink, which the server
	// must route to index.php (mod_dir's FallbackResource, nginx's
	// try_files).
	c0 := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c0.Get(l.URL + "/?p=" + itoa(postID))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 301 || !strings.HasPrefix(loc, l.URL+"/") || !strings.Contains(loc, "/"+name+"/") {
		t.Fatalf("server=%s: /?p=%d answered %d, Location %q; want a redirect to the permalink on %s", server, postID, resp.StatusCode, loc, l.URL)
	}
	if code, body := get(t, loc); code != 200 || !strings.Contains(body, "comment_post_ID") {
		t.Errorf("server=%s: the permalink %s answered %d: %.200s", server, loc, code, body)
	}
	if code, body := get(t, l.URL+"/category/uncategorized/"); code != 200 {
		t.Errorf("server=%s: a category archive answered %d: %.200s", server, code, body)
	}
	form := url.Values{"comment_post_ID": {itoa(postID)}, "author": {"Bench"}, "email": {"bench@example.invalid"}, "comment": {fmt.Sprintf("a comment behind %s", server)}}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = c.PostForm(l.URL+"/wp-comments-post.php", form)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 302 || !strings.HasPrefix(resp.Header.Get("Location"), l.URL+"/") {
		t.Fatalf("server=%s: comment POST: %d, Location %q: %.300s", server, resp.StatusCode, resp.Header.Get("Location"), b)
	}
	_ = db.QueryRow("SELECT COUNT(*) FROM wp_comments").Scan(&n1)
	if n1 != n0+1 {
		t.Errorf("server=%s: comments %d before the POST, %d after", server, n0, n1)
	}
}

// TestApacheKnobsRefusedBeforeStart: a knob of another server, or Apache
// rules broken, refuse the lab before anything starts.
func TestApacheKnobsRefusedBeforeStart(t *testing.T) {
	apacheHome(t)
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"server=apache-event-fpm", "nginx.worker_processes=2"}, "belongs to server nginx-fpm"},
		{[]string{"server=apache-prefork-modphp", "pm.max_children=9"}, "PHP runs inside Apache's children"},
		{[]string{"apache.max_request_workers=10"}, "belongs to server apache-event-fpm or apache-prefork-modphp"},
		{[]string{"server=apache-event-fpm", "apache.max_request_workers=30"}, "not a multiple"},
	} {
		_, err := Up(context.Background(), Options{Name: "refused", App: "hello", Set: c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error saying %q, got %v", c.set, c.want, err)
		}
		if _, err := os.Stat(Root() + "/refused"); !os.IsNotExist(err) {
			t.Errorf("%v: the lab directory was made", c.set)
		}
	}
}

// TestKilledDuringApacheStartLeavesNothing SIGKILLs `lab up` while Apache
// starts (recorded, the lab not yet up), for each Apache server, and checks
// that the next `lab status` cleans the lab: no Apache parent or child
// left, no directory.
func TestKilledDuringApacheStartLeavesNothing(t *testing.T) {
	apacheHome(t)
	for i, server := range []string{knob.ApacheEventFPM, knob.ApachePreforkModPHP} {
		name := fmt.Sprintf("akill%d", i)
		t.Run(server, func(t *testing.T) {
			t.Setenv("PHPTUNE_LAB_CHILD_SET", "server="+server)
			cmd := startChild(t, name, "phpinfo")
			m := moment{"apache-start", func(l *Lab) bool { return recorded(l, "apache") && l.State == "starting" }}
			if !waitFor(t, name, m, cmd) {
				_ = cmd.Process.Kill()
				Down(name)
				t.Skip("lab up finished before Apache's start could be caught (a fast machine): nothing to check")
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			l, err := Open(name)
			if err != nil {
				t.Fatalf("after SIGKILL: %v", err)
			}
			hs, err := List()
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) != 1 || !strings.HasPrefix(hs[0].Status, "cleaned") {
				t.Fatalf("status after SIGKILL: %+v, want the lab cleaned", hs)
			}
			assertGone(t, l)
			if left := labProcesses(testOwner(t, l.Dir), nil); len(left) > 0 {
				t.Fatalf("orphans: %v", left)
			}
		})
	}
}
