package lab

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// appOwnedBy makes a docroot app whose data directory belongs to account
// (mode 0700), as Debian's packaged apps keep theirs for www-data: the app
// writes a cache file there on every request.
func appOwnedBy(t *testing.T, account string) string {
	t.Helper()
	u, err := user.Lookup(account)
	if err != nil {
		t.Skipf("no %s account: %v", account, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "phptune-app-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	os.Chown(data, uid, gid)
	os.WriteFile(filepath.Join(dir, "index.php"), []byte(`<?php
$f = __DIR__ . '/data/cache.txt';
if (@file_put_contents($f, 'cached at ' . time()) === false) {
    http_response_code(500);
    $e = error_get_last();
    echo "<title>Cache error</title>cannot write $f: ", $e['message'] ?? '';
    exit;
}
echo '<title>App</title>served by uid ', posix_geteuid(), ' ', file_get_contents($f);
`), 0o644)
	return dir
}

func TestUserRunsTheLabAsTheAppsAccount(t *testing.T) {
	rootOnly(t)
	testHome(t)
	dir := appOwnedBy(t, "www-data")
	// As the lab's own account the app cannot write its data: refused,
	// with --user suggested.
	_, err := Up(context.Background(), Options{Name: "app", DocRoot: dir})
	if err == nil || !strings.Contains(err.Error(), "--user www-data") {
		t.Fatalf("up without --user: %v, want the failure to suggest --user www-data", err)
	}
	for _, bad := range []string{"root", "no-such-account-x"} {
		if _, err := Up(context.Background(), Options{Name: "app", DocRoot: dir, User: bad}); err == nil || !strings.Contains(err.Error(), "--user "+bad) {
			t.Errorf("--user %s: %v, want it refused naming the flag", bad, err)
		}
	}
	l, err := Up(context.Background(), Options{Name: "app", DocRoot: dir, User: "www-data"})
	if err != nil {
		t.Fatal(err)
	}
	if l.FrontPage == nil || l.FrontPage.Status != 200 || l.FrontPage.Title != "App" {
		t.Errorf("front page recorded as %+v", l.FrontPage)
	}
	code, body := get(t, l.URL+"/")
	if code != 200 || !strings.Contains(body, "served by uid 33 cached at") {
		t.Fatalf("GET / = %d %q", code, body)
	}
	// The whole lab runs as www-data: no process of phptune's account (which
	// every other lab shares) is part of it.
	for _, p := range l.Processes {
		if got := procUID(t, p.PID); got != "33" {
			t.Errorf("%s runs as uid %s, want 33 (www-data)", p.Component, got)
		}
	}
	fi, err := os.Stat(l.Dir)
	if err != nil || fi.Sys().(*syscall.Stat_t).Gid != 33 {
		t.Errorf("the lab directory's group is not www-data's: %v", err)
	}
	// A restart keeps the pool's account; logs are read from its directory.
	cfg, _ := l.Config.Apply([]string{"pm=static", "pm.max_children=3"})
	if err := l.Apply(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, l.URL+"/"); code != 200 || !strings.Contains(body, "served by uid 33") {
		t.Fatalf("after a restart GET / = %d %q", code, body)
	}
	if logs, _ := l.Logs("php-fpm", 5); strings.Contains(logs, "not read") {
		t.Errorf("php-fpm's log was not readable:\n%s", logs)
	}
	if err := Down(l.Name); err != nil {
		t.Fatal(err)
	}
	assertGone(t, l)
}
