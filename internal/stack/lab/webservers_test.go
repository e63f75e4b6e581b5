package lab

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/caddy"
	"github.com/phptune/phptune/internal/servers/h2o"
	"github.com/phptune/phptune/internal/servers/lighttpd"
)

// otherServers are the servers of Debian's lighttpd, caddy and h2o
// packages, each in front of php-fpm.
var otherServers = []string{knob.LighttpdFPM, knob.CaddyFPM, knob.H2OFPM}

// otherHome is testHome for the lighttpd, Caddy and h2o tests: they skip,
// saying what to install, without the three binaries.
func otherHome(t *testing.T) {
	t.Helper()
	testHome(t)
	for _, find := range []func() (string, error){lighttpd.Find, caddy.Find, h2o.Find} {
		if _, err := find(); err != nil {
			t.Skipf("skipping the lighttpd, Caddy and h2o labs: %v", err)
		}
	}
}

// tunedKnobs are knobs of each server away from their defaults, so that
// the labs run what a tune would render, not only the defaults.
var tunedKnobs = map[string][]string{
	knob.LighttpdFPM: {"lighttpd.max_worker=2", "lighttpd.max_connections=512", "lighttpd.max_keep_alive_requests=0", "lighttpd.access_log=on"},
	knob.CaddyFPM:    {"caddy.gomaxprocs=1", "caddy.lb_try_duration=200", "caddy.idle_timeout=30", "caddy.access_log=on"},
	knob.H2OFPM:      {"h2o.num_threads=2", "h2o.fastcgi_keepalive=1000", "h2o.http1_request_timeout=5", "h2o.access_log=off"},
}

// TestAppsBehindOtherServers serves every built-in app behind lighttpd,
// Caddy and h2o: each lab comes up behind one of them (a different one
// per app) and is switched by Apply to the other two, each server's
// process replacing the last one's. Some apps run with the servers' knobs
// away from their defaults, one with php-fpm on TCP. Behind each server:
// the app's page, $_SERVER's host and port (phpinfo), a static file, a
// missing script's 404, the server's status page, php-fpm's status and
// ping pages, and for WordPress its permalinks, front page and a comment
// POST; WordPress then goes back to nginx-fpm.
func TestAppsBehindOtherServers(t *testing.T) {
	otherHome(t)
	ctx := context.Background()
	for i, c := range []struct {
		app, marker string
		tuned       bool     // the servers' knobs away from their defaults
		set         []string // more knobs, for every server
	}{
		{"hello", "Hello, world!", false, nil},
		{"phpinfo", "PHP Version", true, nil},
		{"strings", "strings ok", false, []string{"listen=tcp"}},
		{"io", "io ok answer=42", true, []string{"pm=static", "pm.max_children=3"}},
		{"wordpress", "phptune lab", true, nil},
	} {
		t.Run(c.app, func(t *testing.T) {
			// Each app starts behind another server, and visits all three.
			servers := append(append([]string(nil), otherServers[i%3:]...), otherServers[:i%3]...)
			if c.app == "wordpress" {
				servers = append(servers, knob.NginxFPM)
			}
			configFor := func(base knob.Config, server string) knob.Config {
				cfg := withServer(base, server)
				more := c.set
				if c.tuned {
					more = append(append([]string(nil), more...), tunedKnobs[server]...)
				}
				cfg, err := cfg.Apply(more)
				if err != nil {
					t.Fatal(err)
				}
				return cfg
			}
			first := configFor(knob.Defaults(), servers[0])
			l, err := Up(ctx, Options{Name: "ws-" + c.app, App: c.app, Set: first.Overrides()})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := Down(l.Name); err != nil {
					t.Error(err)
				}
				assertGone(t, l)
			}()
			for j, server := range servers {
				if j > 0 {
					if err := l.Apply(ctx, configFor(l.Config, server)); err != nil {
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
					for _, want := range []string{"$_SERVER['HTTP_HOST']</td><td class=\"v\">127.0.0.1:" + port, "$_SERVER['SERVER_PORT']</td><td class=\"v\">" + port} {
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
				if c.app != "wordpress" {
					// Without a front controller, a path that is no file is
					// the server's 404, not the app's page.
					if code, body := get(t, l.URL+"/no/such/page"); code != 404 || strings.Contains(body, c.marker) {
						t.Errorf("server=%s: /no/such/page answered %d: %.100s", server, code, body)
					}
				}
			}
		})
	}
}

// TestOtherServersKnobsRefusedBeforeStart: a knob of another server, or a
// value out of its range, refuse the lab before anything starts.
func TestOtherServersKnobsRefusedBeforeStart(t *testing.T) {
	otherHome(t)
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"server=lighttpd-fpm", "nginx.worker_processes=2"}, "belongs to server nginx-fpm, but this configuration runs server=lighttpd-fpm"},
		{[]string{"server=caddy-fpm", "h2o.num_threads=2"}, "belongs to server h2o-fpm, but this configuration runs server=caddy-fpm"},
		{[]string{"server=h2o-fpm", "apache.keepalive=off"}, "belongs to server apache-event-fpm or apache-prefork-modphp"},
		{[]string{"lighttpd.max_worker=2"}, "belongs to server lighttpd-fpm, but this configuration runs server=nginx-fpm"},
		{[]string{"server=apache-prefork-modphp", "caddy.gomaxprocs=2"}, "belongs to server caddy-fpm"},
		{[]string{"server=lighttpd-fpm", "lighttpd.max_connections=8"}, "out of range"},
		{[]string{"server=h2o-fpm", "pm.max_children=2"}, "pm.max_spare_servers=3 is greater than pm.max_children=2"},
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

// TestKilledDuringOtherServerStartLeavesNothing SIGKILLs `lab up` while
// lighttpd, Caddy or h2o starts (recorded, the lab not yet up), and checks
// that the next `lab status` cleans the lab: no server process, no
// helper, no directory.
func TestKilledDuringOtherServerStartLeavesNothing(t *testing.T) {
	otherHome(t)
	for i, server := range otherServers {
		name := fmt.Sprintf("okill%d", i)
		t.Run(server, func(t *testing.T) {
			set := append([]string{"server=" + server}, tunedKnobs[server]...)
			t.Setenv("PHPTUNE_LAB_CHILD_SET", strings.Join(set, ","))
			cmd := startChild(t, name, "phpinfo")
			web := webComponent(server)
			m := moment{web + "-start", func(l *Lab) bool { return recorded(l, web) && l.State == "starting" }}
			if !waitFor(t, name, m, cmd) {
				_ = cmd.Process.Kill()
				Down(name)
				t.Skipf("lab up finished before %s's start could be caught (a fast machine): nothing to check", web)
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

// TestOtherServerKilledLeavesNoOrphan SIGKILLs the web server itself —
// lighttpd's parent with two workers, Caddy, h2o with its backtrace
// helper — whose children then outlive it, and checks that `lab status`
// reports the lab broken and `lab down` stops every one of them.
func TestOtherServerKilledLeavesNoOrphan(t *testing.T) {
	otherHome(t)
	for i, server := range otherServers {
		t.Run(server, func(t *testing.T) {
			set := append([]string{"server=" + server}, tunedKnobs[server]...)
			l, err := Up(context.Background(), Options{Name: fmt.Sprintf("okilled%d", i), App: "hello", Set: set})
			if err != nil {
				t.Fatal(err)
			}
			web := webComponent(server)
			var leader int
			for _, p := range l.Processes {
				if p.Component == web {
					leader = p.PID
				}
			}
			// lighttpd forks its workers, h2o its helper, as they start:
			// the port may accept before they exist.
			want := map[string]int{knob.LighttpdFPM: 2, knob.H2OFPM: 1}[server]
			children := childrenOf(leader)
			for deadline := time.Now().Add(10 * time.Second); len(children) < want && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				children = childrenOf(leader)
			}
			if len(children) < want {
				t.Errorf("%s (pid %d) has %d children, want %d: lighttpd's workers or h2o's helper", web, leader, len(children), want)
			}
			if err := syscall.Kill(leader, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); alive(leader) && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			hs, err := List()
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) != 1 || !strings.Contains(hs[0].Status, "broken: "+web+" exited") {
				t.Errorf("status after SIGKILL of %s: %+v, want it broken", web, hs)
			}
			if err := Down(l.Name); err != nil {
				t.Fatal(err)
			}
			assertGone(t, l)
			for _, c := range children {
				if alive(c) {
					t.Errorf("%s's child %d outlived lab down", web, c)
				}
			}
		})
	}
}

// childrenOf lists the live children of pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		var p int
		if _, err := fmt.Sscan(e.Name(), &p); err != nil {
			continue
		}
		if st, ok := readStat(p); ok && st.ppid == pid && alive(p) {
			out = append(out, p)
		}
	}
	return out
}

// TestLighttpdDescriptorsRefusedBeforeStart: connections needing more
// descriptors than the lab's hard limit are refused before anything
// starts (lighttpd would silently lower them).
func TestLighttpdDescriptorsRefusedBeforeStart(t *testing.T) {
	otherHome(t)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	if lim.Max >= 3*21845 {
		t.Skipf("the hard descriptor limit (%d) holds lighttpd's most connections", lim.Max)
	}
	conns := lim.Max/3 + 1
	_, err := Up(context.Background(), Options{Name: "refused", App: "hello", Set: []string{"server=lighttpd-fpm", fmt.Sprintf("lighttpd.max_connections=%d", conns)}})
	if err == nil || !strings.Contains(err.Error(), "above the descriptors a lab may open") {
		t.Errorf("lighttpd.max_connections=%d with a hard limit of %d: %v", conns, lim.Max, err)
	}
	if _, err := os.Stat(Root() + "/refused"); !os.IsNotExist(err) {
		t.Errorf("the lab directory was made")
	}
}

// listeners lists the sockets the processes of pid's group listen on
// (TCP in LISTEN, any bound UDP socket), as "tcp 127.0.0.1:PORT", read
// from /proc/net and the processes' descriptors.
func listeners(t *testing.T, pgid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if st, ok := readStat(pid); !ok || st.pgrp != pgid {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
				inodes[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	var out []string
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		data, err := os.ReadFile("/proc/net/" + proto)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] || strings.HasPrefix(proto, "tcp") && f[3] != "0A" {
				continue
			}
			out = append(out, proto+" "+procNetAddr(f[1]))
		}
	}
	return out
}

// procNetAddr turns /proc/net's hex address (0100007F:1F90) into
// 127.0.0.1:8080; IPv6 addresses are left in hex.
func procNetAddr(s string) string {
	host, port, _ := strings.Cut(s, ":")
	var p int
	fmt.Sscanf(port, "%X", &p)
	if len(host) == 8 {
		var a uint32
		fmt.Sscanf(host, "%X", &a)
		return fmt.Sprintf("%d.%d.%d.%d:%d", a&0xff, a>>8&0xff, a>>16&0xff, a>>24, p)
	}
	return fmt.Sprintf("[%s]:%d", host, p)
}

// TestOtherServersListenOnlyOnTheLabPort: lighttpd, Caddy (no admin
// endpoint, no HTTPS or HTTP/3 port) and h2o listen on the lab's loopback
// port and nothing else.
func TestOtherServersListenOnlyOnTheLabPort(t *testing.T) {
	otherHome(t)
	for i, server := range otherServers {
		t.Run(server, func(t *testing.T) {
			set := append([]string{"server=" + server}, tunedKnobs[server]...)
			l, err := Up(context.Background(), Options{Name: fmt.Sprintf("listen%d", i), App: "hello", Set: set})
			if err != nil {
				t.Fatal(err)
			}
			defer Down(l.Name)
			want := "tcp " + strings.TrimPrefix(l.URL, "http://")
			for _, p := range l.Processes {
				if p.Component != webComponent(server) {
					continue
				}
				got := listeners(t, p.PID)
				if len(got) != 1 || got[0] != want {
					t.Errorf("%s listens on %q, want only %q", server, got, want)
				}
			}
		})
	}
}
