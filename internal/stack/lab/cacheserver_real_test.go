package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
	"github.com/phptune/phptune/internal/watch/cachestat"
)

// cachePage is the cache fixture's index.php: it talks to Redis (RESP,
// with no extension) at the socket and the port its wp-config names, as
// Redis Object Cache would, and to Memcached (its text protocol) at
// 127.0.0.1:11211.
const cachePage = `<?php
require __DIR__ . '/wp-config.php';
function rline($s) {
	$l = rtrim((string)fgets($s), "\r\n");
	if ($l !== '' && $l[0] === '$') {
		$n = (int)substr($l, 1);
		if ($n < 0) return 'nil';
		$d = ''; while (strlen($d) < $n + 2 && !feof($s)) { $d .= fread($s, $n + 2 - strlen($d)); }
		return substr($d, 0, $n);
	}
	return $l;
}
function redis($addr, $cmds) {
	$s = @stream_socket_client($addr, $en, $es, 2);
	if (!$s) return "connect-error:$es";
	$out = [];
	foreach ($cmds as $c) {
		$m = '*' . count($c) . "\r\n";
		foreach ($c as $a) { $m .= '$' . strlen($a) . "\r\n" . $a . "\r\n"; }
		fwrite($s, $m);
		$out[] = rline($s);
	}
	return implode(',', $out);
}
$pw = WP_REDIS_PASSWORD;
echo '<html><head><title>Cache Test</title></head><body>';
echo 'sock=' . redis('unix://' . WP_REDIS_PATH, [['AUTH', $pw], ['GET', 'k-tcp'], ['SET', 'k-sock', 'lab-sock'], ['GET', 'k-sock'], ['GET', 'where']]) . ' ';
echo 'tcp=' . redis(WP_REDIS_SERVERS[0], [['AUTH', $pw], ['SET', 'k-tcp', 'lab-tcp'], ['GET', 'k-tcp'], ['GET', 'k-sock']]) . ' ';
echo 'noauth=' . redis(WP_REDIS_SERVERS[0], [['GET', 'k-tcp']]) . ' ';
echo 'config=' . redis(WP_REDIS_SERVERS[0], [['AUTH', $pw], ['CONFIG', 'SET', 'maxmemory', '0'], ['SHUTDOWN', 'NOSAVE']]) . ' ';
$m = @stream_socket_client('tcp://127.0.0.1:11211', $en, $es, 2);
if ($m) { fwrite($m, "set k 0 0 3\r\nmem\r\nget k\r\n"); echo 'mc=' . rtrim(fgets($m)) . ',' . rtrim(fgets($m)) . ',' . rtrim(fgets($m)); } else { echo "mc=connect-error:$es"; }
echo "</body></html>\n";
`

// prodRedisSock is production's Redis socket in the cache test: under
// /run, which test/realserver.sh makes private.
const prodRedisSock = "/run/redis-phptune-test/redis.sock"

// TestSiteLabRunsItsCaches: a site whose wp-config names a Redis socket
// and 127.0.0.1:6379 (with a password) and Memcached at 127.0.0.1
// comes up sealed with the lab's own Redis and Memcached at those
// addresses: from the site's PHP, SET and GET work through the socket and
// the port (one server: what the socket set, the port reads), without the
// password Redis refuses, Memcached stores and returns; production's
// Redis, running at the same socket path and port on the host, is
// untouched; the caches run as the lab's MariaDB account, and lab down
// leaves no cache process.
func TestSiteLabRunsItsCaches(t *testing.T) {
	home := testHome(t)
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	for _, k := range []string{"redis", "memcached"} {
		if !cacheHave(k) {
			t.Skipf("%s is not installed: run phptune setup --with-caches", cacheBinaries[k])
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:6379")
	if err != nil {
		t.Skip("127.0.0.1:6379 is in use on this host (run the test under test/realserver.sh, whose network is private)")
	}
	ln.Close()
	if _, err := os.Stat(filepath.Dir(prodRedisSock)); err == nil {
		t.Skipf("%s exists on this host (run the test under test/realserver.sh, whose /run is private)", filepath.Dir(prodRedisSock))
	}

	// Production's Redis on the host: the socket and the port the site
	// names, a key of its own.
	if err := os.MkdirAll(filepath.Dir(prodRedisSock), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(prodRedisSock)) })
	prod := exec.Command(cacheBinaries["redis"], "--port", "6379", "--bind", "127.0.0.1", "--unixsocket", prodRedisSock, "--unixsocketperm", "777",
		"--save", "", "--appendonly", "no", "--dir", filepath.Dir(prodRedisSock), "--requirepass", "labpw!")
	if err := prod.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prod.Process.Kill(); prod.Wait() })
	var prodOut string
	for i := 0; i < 100; i++ {
		if prodOut, err = redisDo(prodRedisSock, "AUTH", "labpw!", "SET", "where", "production"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("production's Redis: %v %s", err, prodOut)
	}

	s, docroot := siteFixture(t, 1)
	cfg := "<?php\ndefine('DB_NAME', 'sitedb');\ndefine('DB_USER', 'siteuser');\ndefine('DB_PASSWORD', 'sitepw');\ndefine('DB_HOST', '127.0.0.1');\n" +
		"define('WP_REDIS_PATH', '" + prodRedisSock + "');\ndefine('WP_REDIS_SERVERS', ['tcp://127.0.0.1:6379']);\ndefine('WP_REDIS_PASSWORD', 'labpw!');\n" +
		"define('WP_CACHE_HOST', '127.0.0.1');\n"
	www, _ := user.Lookup("www-data")
	uid, _ := strconv.Atoi(www.Uid)
	for name, text := range map[string]string{"wp-config.php": cfg, "index.php": cachePage} {
		p := filepath.Join(docroot, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, uid, uid)
	}
	app, err := site.ParseWPConfig(filepath.Join(docroot, "wp-config.php"), []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	s.Caches = app.Caches
	// Production's Memcached, as discovery would have read it: the lab's
	// is sized so.
	for i := range s.Caches {
		if s.Caches[i].Kind == "memcached" {
			s.Caches[i].MaxMemoryBytes, s.Caches[i].SizeFrom = 24<<20, "-m at pid 1 cmdline"
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var said []string
	l, err := Up(ctx, Options{Name: "caches", Site: s, FillDatabase: fillSiteDB, Progress: func(m string) { said = append(said, m) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lab up said: %q", said)
	t.Logf("caches: %q", l.SiteCaches)
	if len(l.SiteCaches) != 3 {
		t.Errorf("site caches %q, want 3 sentences", l.SiteCaches)
	}
	for _, c := range l.SiteCaches {
		if !strings.Contains(c, "the lab runs its own") || strings.Contains(c, "labpw") {
			t.Errorf("cache sentence %q: want the lab's own, and never the password", c)
		}
	}
	page, err := l.FetchPage(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("page: %s", page.Body)
	// lab up's own check of the front page was the first request: its
	// key is found (the cache keeps what requests write; "where",
	// production's key, is not there).
	for _, want := range []string{"sock=+OK,lab-tcp,+OK,lab-sock,nil ", "tcp=+OK,+OK,lab-tcp,lab-sock ", "noauth=-NOAUTH", "mc=STORED,VALUE k 0 3,mem", "config=+OK,-ERR unknown command 'CONFIG'"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the page lacks %q: %s", want, page.Body)
		}
	}
	// The caches' counters, read from the host the lab's way into its
	// seal: Redis asks for the site's password, so its are not read;
	// Memcached (its port inside the seal's network namespace) counted
	// the page's get and has production's size.
	for _, cs := range l.Caches {
		conn, err := l.DialCache(ctx, cs)
		if err != nil {
			t.Errorf("dialing the lab's %s: %v", cs.Kind, err)
			continue
		}
		c, err := cachestat.Read(ctx, cs.Kind, conn)
		conn.Close()
		switch cs.Kind {
		case "redis":
			if !errors.Is(err, cachestat.ErrPassword) {
				t.Errorf("the lab's Redis: %+v %v, want %v", c, err, cachestat.ErrPassword)
			}
		case "memcached":
			if err != nil || c.Hits < 1 || c.MaxBytes != 24<<20 || cs.MaxMemoryB != 24<<20 {
				t.Errorf("the lab's Memcached: %+v %v (%+v), want a hit and production's 24 MiB", c, err, cs)
			}
		}
	}
	if said := strings.Join(said, "\n"); !strings.Contains(said, "starting the lab's own Memcached at tcp:127.0.0.1:11211: at most 24 MiB, production's (-m at pid 1 cmdline)") ||
		!strings.Contains(said, "the lab's default (production's size: not read)") {
		t.Errorf("lab up said:\n%s", said)
	}
	// lab reset restarts the caches empty, with their password.
	if err := l.restartCaches(ctx); err != nil {
		t.Fatal(err)
	}
	if page, err = l.FetchPage(ctx, "/"); err != nil || !strings.Contains(page.Body, "sock=+OK,nil,+OK,lab-sock,nil ") || !strings.Contains(page.Body, "noauth=-NOAUTH") {
		t.Errorf("after the caches' restart: %v %s", err, page.Body)
	}
	// Production's Redis: its key as it was, none of the lab's.
	if out, err := redisDo(prodRedisSock, "AUTH", "labpw!", "GET", "where", "DBSIZE"); err != nil || out != "+OK,production,:1" {
		t.Errorf("production's Redis: %q %v, want +OK,production,:1 (untouched)", out, err)
	}

	// The machine's own Redis is a neighbour; the lab's caches are not.
	nb := strings.Join(Neighbours(), "; ")
	if !strings.Contains(nb, fmt.Sprintf("redis-server (pid %d", prod.Process.Pid)) || strings.Count(nb, "redis-server") != 1 || strings.Contains(nb, "memcached") {
		t.Errorf("neighbours %q: want production's redis-server (pid %d) alone", nb, prod.Process.Pid)
	}
	db, _ := user.Lookup(DBUser)
	var cachePIDs []int
	for _, p := range l.Processes {
		if p.Component != "redis" && p.Component != "memcached" {
			continue
		}
		cachePIDs = append(cachePIDs, p.PID)
		if got := procUID(t, p.PID); got != db.Uid {
			t.Errorf("%s (pid %d) runs as uid %s, want %s's %s", p.Component, p.PID, got, DBUser, db.Uid)
		}
	}
	if len(cachePIDs) != 2 {
		t.Errorf("cache processes %v in the lab's list %+v, want redis and memcached", cachePIDs, l.Processes)
	}
	if b, err := os.ReadFile(filepath.Join(l.Dir, cacheConfDir, "redis-0.conf")); err != nil || !strings.Contains(string(b), "save \"\"\nappendonly no\n") {
		t.Errorf("the lab's redis.conf: %v\n%s", err, b)
	}
	// The password's file and its directory: root's, readable by the
	// cache account's group, by no one else (the site's account).
	dbGID, _ := strconv.Atoi(db.Gid)
	for name, want := range map[string]string{cacheConfDir: "drwxr-x---", filepath.Join(cacheConfDir, "redis-0.conf"): "-rw-r-----"} {
		st, err := os.Lstat(filepath.Join(l.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 0 || int(sys.Gid) != dbGID || st.Mode().String() != want {
			t.Errorf("%s: uid %d gid %d %v, want root, %s's group %d, %s", name, sys.Uid, sys.Gid, st.Mode(), DBUser, dbGID, want)
		}
	}
	if st, err := os.Lstat(filepath.Join(l.Dir, cacheRunDir)); err != nil || st.Mode().String() != "drwxr-x---" || int(st.Sys().(*syscall.Stat_t).Gid) != l.GID {
		t.Errorf("%s: %v %v, want drwxr-x--- with the lab's group", cacheRunDir, err, st)
	}
	if logs, err := l.Logs("redis", 20); err != nil || !strings.Contains(logs, "Ready to accept connections") || strings.Contains(logs, "labpw") {
		t.Errorf("lab logs --component redis: %v\n%s", err, logs)
	}
	if err := Down("caches"); err != nil {
		t.Fatal(err)
	}
	for _, pid := range cachePIDs {
		if alive(pid) {
			t.Errorf("cache process %d survived lab down", pid)
		}
	}
	if left := cacheProcesses(t, prod.Process.Pid); len(left) > 0 {
		t.Errorf("cache processes left after lab down: %v", left)
	}
	if m := mountsUnder(t, home); len(m) > 0 {
		t.Errorf("mounts left after lab down: %v", m)
	}
	if out, err := redisDo(prodRedisSock, "AUTH", "labpw!", "GET", "where", "DBSIZE"); err != nil || out != "+OK,production,:1" {
		t.Errorf("production's Redis after lab down: %q %v", out, err)
	}
}

// redisDo sends args to the Redis at sock two at a time or one (AUTH pw,
// SET k v, GET k, DBSIZE) and returns the replies joined by commas.
func redisDo(sock string, args ...string) (string, error) {
	c, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	var out []string
	for i := 0; i < len(args); {
		n := map[string]int{"AUTH": 2, "SET": 3, "GET": 2, "DBSIZE": 1}[args[i]]
		cmd := args[i : i+n]
		i += n
		msg := fmt.Sprintf("*%d\r\n", len(cmd))
		for _, a := range cmd {
			msg += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := c.Write([]byte(msg)); err != nil {
			return "", err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "$") {
			if line == "$-1" {
				out = append(out, "nil")
				continue
			}
			v, err := r.ReadString('\n')
			if err != nil {
				return "", err
			}
			line = strings.TrimRight(v, "\r\n")
		}
		out = append(out, line)
	}
	return strings.Join(out, ","), nil
}

// cacheProcesses are the host's redis-server and memcached processes but
// except.
func cacheProcesses(t *testing.T, except int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == except {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if c := strings.TrimSpace(string(comm)); err == nil && (c == "redis-server" || c == "memcached") {
			out = append(out, fmt.Sprintf("%s (pid %d)", c, pid))
		}
	}
	return out
}
