package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// The other machine of TestSiteRemoteDBOnProductionServer: a network
// namespace of the test's own, reached from the production server over a
// veth pair.
const (
	otherHostIP  = "10.213.0.1" // the production server's end
	otherIP      = "10.213.0.2" // the other machine's
	otherName    = "db.internal"
	remoteVhost  = "remote.test"
	remoteDocDir = "/var/www/remote"
)

// remotePage is the remote site's index.php: the database at DB_HOST (an
// IP of another machine) as wpdb connects, and Redis at WP_REDIS_HOST (a
// name of it) in RESP, with no extension: it reads production's marker
// key and counts its visits.
const remotePage = `<?php
require __DIR__ . '/wp-config.php';
$db = new mysqli(DB_HOST, DB_USER, DB_PASSWORD, DB_NAME);
$n = $db->query('SELECT COUNT(*) FROM posts')->fetch_row()[0];
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
$r = @stream_socket_client('tcp://' . WP_REDIS_HOST . ':' . WP_REDIS_PORT, $en, $es, 2);
$where = 'connect-error'; $hits = '';
if ($r) {
	fwrite($r, "*2\r\n$3\r\nGET\r\n$5\r\nwhere\r\n"); $where = rline($r);
	fwrite($r, "*2\r\n$4\r\nINCR\r\n$4\r\nhits\r\n"); $hits = rline($r);
}
echo "<html><head><title>Remote site</title></head><body>$n posts, redis where=$where hits=$hits</body></html>\n";
`

// TestSiteRemoteDBOnProductionServer: a site whose wp-config.php names
// its database at another machine's IP and its Redis by that machine's
// name (db.internal, in the server's /etc/hosts) — the other machine a
// network namespace of the test's own with MariaDB and Redis at
// 10.213.0.2 — comes up sealed: the copy dumps from 10.213.0.2 as the
// app's account, and inside the seal 10.213.0.2 answers with the lab's
// MariaDB and the lab's own Redis, so the page shows the copied rows and
// an empty Redis (not production's marker), and the other machine's
// MariaDB saw only the copy's two connections, its Redis none.
func TestSiteRemoteDBOnProductionServer(t *testing.T) {
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("runs on test/realserver.sh's production server: make test-realserver")
	}
	for _, b := range []string{"/usr/bin/redis-server", "/usr/bin/redis-cli"} {
		if _, err := os.Stat(b); err != nil {
			t.Skipf("%s is not installed (make setup)", b)
		}
	}
	home := labtest.Home(t)
	t.Setenv("PHPTUNE_HOME", home)
	ns := otherMachine(t)
	general := otherMariaDB(t, ns)
	otherRedis(t, ns)
	remoteSite(t)

	out, errs, code := runCLI(t, "lab", "up", "--site", remoteVhost, "--name", "remote")
	t.Logf("lab up --site:\n%s%s", out, errs)
	if code != 0 {
		t.Fatalf("lab up --site: exit %d", code)
	}
	defer runCLI(t, "lab", "down", "remote")
	l, err := lab.Open("remote")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// lab up's own page check was the first visit: the lab's Redis
	// counts from there, and never had production's marker.
	for i := 2; i <= 3; i++ {
		want := fmt.Sprintf("3 posts, redis where=nil hits=:%d<", i)
		page, err := l.FetchPage(ctx, "/")
		if err != nil || !strings.Contains(page.Body, want) {
			t.Fatalf("the lab's page, visit %d: %v %q, want %q", i, err, page.Body, want)
		}
	}
	if got := strings.TrimSpace(run(t, "ip", "netns", "exec", ns, "redis-cli", "-h", otherIP, "GET", "hits")); got != "" {
		t.Errorf("the other machine's Redis was written to: hits=%q", got)
	}
	if out, errs, code = runCLI(t, "lab", "down", "remote"); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}
	log, err := os.ReadFile(general)
	if err != nil {
		t.Fatal(err)
	}
	var connects []string
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, " Connect\t") && !strings.Contains(line, "root@localhost") {
			connects = append(connects, strings.TrimSpace(line))
		}
	}
	if len(connects) != 2 {
		t.Errorf("the other machine's MariaDB saw %d connections, want the copy's 2 (grants, dump):\n%s", len(connects), strings.Join(connects, "\n"))
	}
	for _, c := range connects {
		if !strings.Contains(c, "rsite@"+otherHostIP) {
			t.Errorf("a connection that is not the app's account from the server: %s", c)
		}
	}
	t.Logf("the other machine's connections: %q", connects)
}

// run runs a command as root and returns its output; a failure ends the
// test.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// otherMachine makes the other machine: a network namespace with
// 10.213.0.2/24 on a veth whose peer, 10.213.0.1/24, is the server's;
// removed (its processes killed) when the test ends.
func otherMachine(t *testing.T) string {
	ns := fmt.Sprintf("phptune-other-%d", os.Getpid())
	host, peer := fmt.Sprintf("ph%dh", os.Getpid()%100000), fmt.Sprintf("ph%do", os.Getpid()%100000)
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
			for _, p := range strings.Fields(string(out)) {
				exec.Command("kill", "-9", p).Run()
			}
		}
		exec.Command("ip", "link", "del", host).Run()
		exec.Command("ip", "netns", "del", ns).Run()
	})
	run(t, "ip", "link", "add", host, "type", "veth", "peer", "name", peer)
	run(t, "ip", "link", "set", peer, "netns", ns)
	run(t, "ip", "addr", "add", otherHostIP+"/24", "dev", host)
	run(t, "ip", "link", "set", host, "up")
	for _, c := range [][]string{{"ip", "addr", "add", otherIP + "/24", "dev", peer}, {"ip", "link", "set", peer, "up"}, {"ip", "link", "set", "lo", "up"}} {
		run(t, "ip", append([]string{"netns", "exec", ns}, c...)...)
	}
	return ns
}

// otherMariaDB starts a MariaDB in the other machine at 10.213.0.2:3306,
// as mysql, with a private datadir, its general log on, the database
// remote (3 posts) and the app's account rsite@10.213.0.1; it returns the
// general log's path.
func otherMariaDB(t *testing.T, ns string) string {
	dir, err := os.MkdirTemp("/var/tmp", "phptune-other-db-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	run(t, "chown", "mysql:mysql", dir)
	run(t, "mariadb-install-db", "--no-defaults", "--user=mysql", "--datadir="+dir+"/data", "--skip-test-db")
	sock, general := filepath.Join(dir, "mysqld.sock"), filepath.Join(dir, "general.log")
	cmd := exec.Command("ip", "netns", "exec", ns, "mariadbd", "--no-defaults", "--user=mysql", "--datadir="+dir+"/data",
		"--socket="+sock, "--pid-file="+dir+"/mysqld.pid", "--bind-address="+otherIP, "--port=3306", "--skip-name-resolve",
		"--general-log=1", "--general-log-file="+general, "--log-error="+dir+"/error.log")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sql := `CREATE DATABASE remote;
CREATE TABLE remote.posts (id INT PRIMARY KEY AUTO_INCREMENT, title TEXT);
INSERT INTO remote.posts (title) VALUES ('a'), ('b'), ('c');
CREATE USER 'rsite'@'` + otherHostIP + `' IDENTIFIED BY 'remote-secret';
GRANT ALL ON remote.* TO 'rsite'@'` + otherHostIP + `';`
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := exec.Command("mariadb", "--no-defaults", "--socket="+sock, "-uroot")
		c.Stdin = strings.NewReader(sql)
		out, err := c.CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(dir + "/error.log")
			t.Fatalf("the other machine's MariaDB: %v\n%s\n%s", err, out, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return general
}

// otherRedis starts a Redis in the other machine at 10.213.0.2:6379
// holding production's marker key.
func otherRedis(t *testing.T, ns string) {
	cmd := exec.Command("ip", "netns", "exec", ns, "runuser", "-u", "nobody", "--", "redis-server", "--bind", otherIP, "--port", "6379",
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir", "/")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command("ip", "netns", "exec", ns, "redis-cli", "-h", otherIP, "SET", "where", "production").CombinedOutput()
		if err == nil && strings.Contains(string(out), "OK") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other machine's Redis: %v %s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// remoteSite adds the site to test/realserver.sh's production server: a
// vhost remote.test in its (private) /etc/nginx, its docroot in its
// (private) /var/www, db.internal and remote.test in its (private)
// /etc/hosts; all undone when the test ends.
func remoteSite(t *testing.T) {
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	vhost := "/etc/nginx/sites-enabled/" + remoteVhost
	t.Cleanup(func() {
		os.WriteFile("/etc/hosts", hosts, 0o644)
		os.Remove(vhost)
		exec.Command("nginx", "-s", "reload").Run()
		os.RemoveAll(remoteDocDir)
	})
	extra := fmt.Sprintf("%s %s\n127.0.0.1 %s\n", otherIP, otherName, remoteVhost)
	if err := os.WriteFile("/etc/hosts", append(hosts, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := `server {
	listen 80;
	server_name ` + remoteVhost + `;
	root ` + remoteDocDir + `;
	index index.php;
	location / { try_files $uri $uri/ /index.php?$args; }
	location ~ \.php$ {
		include snippets/fastcgi-php.conf;
		fastcgi_pass unix:/run/php/php8.2-fpm.sock;
	}
}
`
	if err := os.WriteFile(vhost, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(remoteDocDir, 0o755); err != nil {
		t.Fatal(err)
	}
	wp := `<?php
define('DB_NAME', 'remote');
define('DB_USER', 'rsite');
define('DB_PASSWORD', 'remote-secret');
define('DB_HOST', '` + otherIP + `');
define('WP_REDIS_HOST', '` + otherName + `');
define('WP_REDIS_PORT', 6379);
$table_prefix = 'wp_';
`
	for name, body := range map[string]string{"wp-config.php": wp, "index.php": remotePage} {
		if err := os.WriteFile(filepath.Join(remoteDocDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, "chown", "-R", "www-data:www-data", remoteDocDir)
	run(t, "nginx", "-s", "reload")
}
