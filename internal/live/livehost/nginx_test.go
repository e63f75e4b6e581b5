package livehost

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/watch/proc"
)

func TestParseNginxTitle(t *testing.T) {
	for _, tc := range []struct{ title, bin, conf, prefix string }{
		{"nginx: master process /usr/sbin/nginx -g daemon on; master_process on;", "/usr/sbin/nginx", NginxDefaultConf, ""},
		{"nginx: master process nginx -c /srv/h/etc/nginx/nginx.conf -e /srv/h/e.log", "nginx", "/srv/h/etc/nginx/nginx.conf", ""},
		{"nginx: master process nginx -p /srv/n/ -c conf/nginx.conf", "nginx", "/srv/n/conf/nginx.conf", "/srv/n/"},
		{"nginx: master process nginx -c/x.conf", "nginx", "/x.conf", ""},
	} {
		m, ok := ParseNginxTitle(tc.title)
		if !ok || m.Binary != tc.bin || m.Conf != tc.conf || m.Prefix != tc.prefix {
			t.Errorf("%q: %+v %v", tc.title, m, ok)
		}
	}
	for _, bad := range []string{"nginx: worker process", "nginx: master process ", "nginx: master process nginx -c relative.conf"} {
		if _, ok := ParseNginxTitle(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// nginxFor is the copy's nginx as apply sees it.
func nginxFor(n *hosttest.NginxHost) Nginx {
	return Nginx{Binary: n.Binary, Conf: n.Conf, ErrorLog: n.ErrorLog}
}

func TestNginxDebianCopy(t *testing.T) {
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	if code, body, err := n.Get("/index.php"); err != nil || code != 200 || body != "php ok\n" {
		t.Fatalf("GET /index.php: %d %q %v", code, body, err)
	}
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := NginxMasters(fs)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range ms {
		found = found || m.Conf == n.Conf
	}
	if !found {
		t.Fatalf("masters %+v lack %s", ms, n.Conf)
	}
	c, err := nginxFor(n).Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Main != n.Conf || len(c.Servers) != 1 {
		t.Fatalf("dump: main %s, servers %+v", c.Main, c.Servers)
	}
	s := c.Servers[0]
	if len(s.FastCGI) != 1 || s.FastCGI[0].Addrs[0] != "unix:"+h.Socket || !strings.HasSuffix(s.FastCGI[0].File, "sites-enabled/default") {
		t.Errorf("fastcgi_pass %+v", s.FastCGI)
	}
	if d := nginxDropInDir(c); d != filepath.Join(n.ConfDir, NginxDropInName) {
		t.Errorf("drop-in %s", d)
	}

	// The error rate from the copy's own access log (Debian's combined
	// format): 200s before, 503s after make the settle check fail.
	logs := c.AccessLogs("")
	if len(logs) != 1 || logs[0] != n.Access {
		t.Fatalf("access logs %v", logs)
	}
	os.WriteFile(filepath.Join(n.DocRoot, "fail.php"), []byte("<?php http_response_code(503);\n"), 0o644)
	for i := 0; i < 10; i++ {
		n.Get("/index.php")
	}
	time.Sleep(1100 * time.Millisecond) // the lines carry whole seconds
	e, err := NewErrorRate(context.Background(), logs, nil, 5*time.Second)
	if err != nil || e.Before.Requests < 10 || e.Before.Errors != 0 {
		t.Fatalf("before %+v %v", e, err)
	}
	st := e.Step()
	st.Reload(context.Background())
	for i := 0; i < 5; i++ {
		if code, _, _ := n.Get("/fail.php"); code != 503 {
			t.Fatalf("fail.php answered %d", code)
		}
	}
	time.Sleep(200 * time.Millisecond) // nginx logs after the response
	if err := st.Healthy(context.Background()); err == nil || !strings.Contains(err.Error(), "100.0% (5 of 5 requests)") {
		t.Errorf("error rate: %v", err)
	}
}

// TestNginxDirectiveRules checks with nginx -t itself the rules
// ComposeNginx follows: a second keepalive_timeout at http level is
// refused, access_log off beside another access_log is accepted, and
// worker_connections cannot be set from an http-level file.
func TestNginxDirectiveRules(t *testing.T) {
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	ng := nginxFor(n)
	drop := filepath.Join(n.ConfDir, NginxDropInName)
	defer os.Remove(drop)
	for _, tc := range []struct {
		text, refusal string
	}{
		{"access_log off;\n", ""},
		{"keepalive_timeout 15;\n", ""},
		{"keepalive_timeout 15;\nkeepalive_timeout 20;\n", "is duplicate"},
		{"worker_connections 1024;\n", "is not allowed here"},
		{"worker_processes 2;\n", "is not allowed here"},
	} {
		if err := os.WriteFile(drop, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		err := ng.Check(context.Background())
		if tc.refusal == "" && err != nil || tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)) {
			t.Errorf("%q: nginx -t said %v, want %q", tc.text, err, tc.refusal)
		}
	}
}

func TestNginxApplyAndRollback(t *testing.T) {
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	ng := nginxFor(n)
	ctx := context.Background()
	c, err := ng.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := ComposeNginx(c, knobs(t, "nginx.keepalive_timeout=15", "nginx.access_log=off", "nginx.worker_connections=1024"), h.Root, ReadRealConf)
	if err != nil {
		t.Fatal(err)
	}
	if ch.DropInPath != filepath.Join(n.ConfDir, NginxDropInName) || !strings.Contains(string(ch.DropIn), "keepalive_timeout 15;\naccess_log off;\n") {
		t.Fatalf("drop-in %s: %q", ch.DropInPath, ch.DropIn)
	}
	if strings.Join(ch.PatchKnobs, " ") != "nginx.worker_connections=1024" || !strings.Contains(ch.Patch, "--- etc/nginx/nginx.conf\n") {
		t.Fatalf("patch %v:\n%s", ch.PatchKnobs, ch.Patch)
	}
	pid, err := ng.Master()
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := proc.Default()
	before := settledWorkers(t, fs, pid)
	opt := liveapply.Options{Home: t.TempDir(), Root: h.Root, Log: t.Logf,
		StepsFor: func(names []string) []liveapply.Step { return []liveapply.Step{ng.Step()} }}
	plan := liveapply.Plan{Changes: []liveapply.Change{{Path: ch.DropInPath, Content: ch.DropIn}}, Steps: []liveapply.Step{ng.Step()}}
	if _, err := liveapply.Apply(ctx, plan, opt); err != nil {
		t.Fatal(err)
	}
	after := workers(fs, pid)
	for w := range after {
		if before[w] {
			t.Errorf("worker %d survived the reload", w)
		}
	}
	// Served, and no longer logged.
	size := fileSize(n.Access)
	for i := 0; i < 3; i++ {
		if code, body, err := n.Get("/index.php"); err != nil || code != 200 || body != "php ok\n" {
			t.Fatalf("after apply: %d %q %v", code, body, err)
		}
	}
	time.Sleep(200 * time.Millisecond) // nginx logs after the response
	if got := fileSize(n.Access); got != size {
		t.Errorf("access.log grew from %d to %d bytes with access_log off", size, got)
	}
	// The patch applies and nginx -t takes the result.
	if _, err := exec.LookPath("patch"); err == nil {
		conf, _ := os.ReadFile(n.Conf)
		cmd := exec.Command("patch", "-p0", "--batch", "--silent")
		cmd.Dir, cmd.Stdin = h.Root, strings.NewReader(ch.Patch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch -p0 at the root: %v %s", err, out)
		}
		if err := ng.Check(ctx); err != nil {
			t.Errorf("nginx -t after the patch: %v", err)
		}
		os.WriteFile(n.Conf, conf, 0o644)
	}
	if _, err := liveapply.Rollback(ctx, opt); err != nil {
		t.Fatal(err)
	}
	for w := range workers(fs, pid) {
		if after[w] {
			t.Errorf("worker %d survived the rollback's reload", w)
		}
	}
	if code, _, err := n.Get("/index.php"); err != nil || code != 200 {
		t.Fatalf("after rollback: %d %v", code, err)
	}
	// nginx logs a request after its response is sent: wait for it.
	for i := 0; i < 50 && fileSize(n.Access) <= size; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if got := fileSize(n.Access); got <= size {
		t.Errorf("access.log not written again after the rollback (%d bytes)", got)
	}
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
}

// TestChaosNginxRefused: a drop-in nginx -t refuses is never reloaded,
// and the files are put back byte for byte.
func TestChaosNginxRefused(t *testing.T) {
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	ng := nginxFor(n)
	pid, err := ng.Master()
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := proc.Default()
	before := settledWorkers(t, fs, pid)
	plan := liveapply.Plan{Changes: []liveapply.Change{{Path: filepath.Join(n.ConfDir, NginxDropInName), Content: []byte("keepalive_timeout 15s banana;\n")}},
		Steps: []liveapply.Step{ng.Step()}}
	_, err = liveapply.Apply(context.Background(), plan, liveapply.Options{Home: t.TempDir(), Root: h.Root})
	if err == nil || !strings.Contains(err.Error(), "nginx refused the new configuration") {
		t.Fatalf("err %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	now := workers(fs, pid)
	if len(now) != len(before) {
		t.Errorf("workers %v, before %v", now, before)
	}
	for w := range now {
		if !before[w] {
			t.Errorf("new worker %d: nginx was reloaded", w)
		}
	}
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
	if code, body, err := n.Get("/index.php"); err != nil || code != 200 || body != "php ok\n" {
		t.Errorf("serving: %d %q %v", code, body, err)
	}
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// settledWorkers waits until every child of the master has named itself a
// worker (a worker just forked still carries its master's title) and
// returns them.
func settledWorkers(t *testing.T, fs *proc.FS, master int) map[int]bool {
	t.Helper()
	for i := 0; i < 100; i++ {
		ws := workers(fs, master)
		if len(ws) > 0 && len(ws) == len(children(fs, master)) {
			return ws
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nginx's master %d: workers %v, children %v", master, workers(fs, master), children(fs, master))
	return nil
}
