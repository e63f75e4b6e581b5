package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// The hostile-site suite (issue 36): PHP placed in a live site's docroot,
// so part of "production", tries from inside the site's lab each way out
// the review found, and prints one line per attack:
//
//	ATTACK NAME ok|refused DETAIL
//
// "ok" means the attack did what it tried (the seal did not hold). The
// same script run on the host as www-data, harmlessly (dry=1), shows that
// the doors it knocks on are open outside the seal: the panel's pool and
// another lab's php-fpm answer FastCGI, production's database answers on
// the panel's socket path, the production worker can be named.
const hostilePHP = `<?php
// phptune's hostile-site suite: each attack prints
// ATTACK NAME ok|refused DETAIL
header('Content-Type: text/plain');
if (PHP_SAPI === 'cli') { parse_str($argv[1] ?? '', $_GET); }
$q = $_GET;
$dry = !empty($q['dry']);
function out($name, $ok, $detail) {
	echo 'ATTACK ', $name, ' ', $ok ? 'ok' : 'refused', ' ', preg_replace('/[^ -~]+/', ' ', (string)$detail), "\n";
	flush();
}
function fcgi_len($n) { return $n < 128 ? chr($n) : pack('N', $n | 0x80000000); }
function fcgi($sock, $params) {
	$s = @stream_socket_client('unix://' . $sock, $errno, $errstr, 3);
	if (!$s) { return [false, "connect $sock: $errstr ($errno)"]; }
	stream_set_timeout($s, 10);
	$rec = function ($type, $c) { return pack('CCnnCx', 1, $type, 1, strlen($c), 0) . $c; };
	$p = '';
	foreach ($params as $k => $v) { $p .= fcgi_len(strlen($k)) . fcgi_len(strlen($v)) . $k . $v; }
	fwrite($s, $rec(1, pack('nCx5', 1, 0)) . $rec(4, $p) . $rec(4, '') . $rec(5, ''));
	$r = stream_get_contents($s);
	fclose($s);
	if ($r === false || $r === '') { return [false, "connected to $sock, no answer"]; }
	$marks = [];
	foreach (['PWNED', 'PREPENDED', 'HELLO', 'STAGING'] as $m) { if (strpos($r, $m) !== false) { $marks[] = $m; } }
	return [true, "$sock answered " . strlen($r) . ' bytes, ran: ' . ($marks ? implode(',', $marks) : 'nothing known')];
}
function fcgi_params($script) {
	return ['GATEWAY_INTERFACE' => 'FastCGI/1.0', 'REQUEST_METHOD' => 'GET', 'SCRIPT_FILENAME' => $script,
		'SCRIPT_NAME' => '/' . basename($script), 'REQUEST_URI' => '/' . basename($script), 'QUERY_STRING' => '',
		'SERVER_SOFTWARE' => 'phptune-hostile', 'REMOTE_ADDR' => '127.0.0.1', 'SERVER_NAME' => 'site.test',
		'SERVER_PORT' => '80', 'SERVER_PROTOCOL' => 'HTTP/1.1'];
}
// (a) FastCGI to sockets of production's panel pool and of another lab:
// with a script of the attacker's choice, and with code of its own in
// PHP_VALUE / PHP_ADMIN_VALUE (auto_prepend_file=data://..., no file).
$payload = $dry ? "<?php echo \"PREPENDED\\n\";" : file_get_contents(__DIR__ . '/phptune-hostile-payload.php');
$prepend = "allow_url_include=On\nauto_prepend_file=\"data://text/plain;base64," . base64_encode($payload) . "\"";
foreach (['panel' => $q['panel'] ?? '', 'lab' => $q['lab'] ?? ''] as $who => $sock) {
	$script = $dry ? ($q[$who . '_hello'] ?? '') : __DIR__ . '/phptune-hostile-payload.php';
	list($ok, $d) = fcgi($sock, fcgi_params($script));
	out("fcgi-$who-file", $ok, $d);
	list($ok, $d) = fcgi($sock, fcgi_params($script) + ['PHP_VALUE' => $prepend, 'PHP_ADMIN_VALUE' => $prepend]);
	out("fcgi-$who-prepend", $ok, $d);
}
// (b) production's database by its socket path outside /run.
$psock = $q['dbsock'] ?? '';
try {
	mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
	// wpdb turns DB_HOST 'localhost:/path' into host localhost, socket /path.
	$db = new mysqli('localhost', 'site', 'site-secret', 'site', 0, $psock);
	$sock = $db->query('SELECT @@socket')->fetch_row()[0];
	if (!$dry) { $db->query("INSERT INTO comments (body) VALUES ('inserted by a lab through mysqli')"); }
	out('proddb-mysqli', true, "connected to the server of socket $sock" . ($dry ? '' : ', inserted a row'));
} catch (Throwable $e) { out('proddb-mysqli', false, $e->getMessage()); }
try {
	$pdo = new PDO("mysql:unix_socket=$psock;dbname=site", 'site', 'site-secret', [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION, PDO::ATTR_TIMEOUT => 3]);
	$sock = $pdo->query('SELECT @@socket')->fetchColumn();
	if (!$dry) { $pdo->exec("INSERT INTO comments (body) VALUES ('inserted by a lab through pdo')"); }
	out('proddb-pdo', true, "connected to the server of socket $sock" . ($dry ? '' : ', inserted a row'));
} catch (Throwable $e) { out('proddb-pdo', false, $e->getMessage()); }
// (c) a production php-fpm worker of the same account, by its pid.
$pid = (int)($q['pid'] ?? 0);
function sh($cmd) { $o = []; exec($cmd . ' 2>&1', $o, $rc); return [$rc === 0, "rc=$rc " . implode(' | ', $o)]; }
$seen = file_exists("/proc/$pid") ? "pid $pid exists here: " . trim(@file_get_contents("/proc/$pid/comm")) . '; ' : "no /proc/$pid here; ";
$cmds = $dry ? [
	'prlimit' => "/usr/bin/prlimit --pid $pid --nofile",
	'taskset' => "/usr/bin/taskset -p $pid",
] : [
	'prlimit' => "/usr/bin/prlimit --pid $pid --nofile=5:5",
	'renice' => "/usr/bin/renice -n 19 -p $pid",
	'taskset' => "/usr/bin/taskset -p 1 $pid",
	'chrt' => "/usr/bin/chrt -i -p 0 $pid",
	'ptrace' => "/usr/bin/python3 -c 'import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); r=l.ptrace(16,$pid,0,0); e=ctypes.get_errno(); r==0 and l.ptrace(17,$pid,0,0); print(\"attach\",r,os.strerror(e)); sys.exit(0 if r==0 else 1)'",
];
foreach ($cmds as $n => $c) { list($ok, $d) = sh($c); out("pid-$n", $ok, $seen . $d); }
if (function_exists('posix_kill')) {
	$ok = @posix_kill($pid, 0);
	out('pid-kill0', $ok, $seen . ($ok ? 'signal 0 delivered' : posix_strerror(posix_get_last_error())));
}
// (h) production's Redis, as a site's configuration names it: by TCP on
// 127.0.0.1:6379 and by its unix socket (PING only: harmless on the host).
foreach (['cache-redis-tcp' => 'tcp://127.0.0.1:6379', 'cache-redis-unix' => 'unix://' . ($q['redissock'] ?? '')] as $n => $a) {
	$s = @stream_socket_client($a, $errno, $errstr, 3);
	if ($s) { fwrite($s, "PING\r\n"); $r = fgets($s); fclose($s); out($n, true, "$a answered " . trim((string)$r)); }
	else { out($n, false, "$a: $errstr ($errno)"); }
}
if (!$dry) {
	// (d) AF_VSOCK (not namespaced: a VM's host agents listen there).
	list($ok, $d) = sh("/usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print(\"created an AF_VSOCK socket\")'");
	out('vsock', $ok, $d);
	// (e) the lab's own MariaDB as root with no password.
	foreach (['root-127' => '127.0.0.1', 'root-v6' => '[::1]', 'root-localhost' => 'localhost'] as $n => $h) {
		try {
			$db = new mysqli($h, 'root', '', '', 3306);
			out("labdb-$n", true, 'connected as ' . $db->query('SELECT CURRENT_USER()')->fetch_row()[0]);
		} catch (Throwable $e) { out("labdb-$n", false, $e->getMessage()); }
	}
	// (f) production's datadir.
	$l = @scandir('/var/lib/mysql');
	out('datadir-list', $l !== false, $l === false ? 'scandir /var/lib/mysql: ' . (error_get_last()['message'] ?? '') : implode(',', $l));
	// (g) writes outside the overlay, and the host's /tmp.
	foreach (['write-parent' => __DIR__ . '/../phptune-hostile-x', 'write-etc' => '/etc/phptune-hostile-x',
		'write-panel' => '/var/lib/php-panel/www/phptune-hostile-x', 'write-usr' => '/usr/local/phptune-hostile-x'] as $n => $f) {
		$ok = @file_put_contents($f, "written by a lab\n") !== false;
		out($n, $ok, $f . ': ' . ($ok ? 'written' : (error_get_last()['message'] ?? '')));
	}
	$m = $q['marker'] ?? '';
	$vis = $m !== '' && file_exists($m);
	@file_put_contents('/tmp/' . ($q['tmpname'] ?? 'phptune-hostile-tmp'), "written by a lab\n");
	out('host-tmp', $vis, $vis ? "the host's $m is visible" : "the host's $m is not here");
	// (h) the lab's own MariaDB: its root password in any file or process
	// the site's account can read, its datadir, its server process.
	$labdir = $q['labdir'] ?? '';
	echo "LS ", str_replace("\n", "\nLS ", trim(shell_exec('ls -la ' . escapeshellarg($labdir) . ' 2>&1') ?? '')), "\n";
	$c = @file_get_contents("$labdir/client.cnf");
	out('labsecret-clientcnf', $c !== false, "$labdir/client.cnf: " . ($c !== false ? 'read ' . strlen($c) . ' bytes' : (error_get_last()['message'] ?? '')));
	$want = $q['rootpw_sha256'] ?? '';
	$found = [];
	$look = function ($f) use ($want, &$found) {
		if (!@is_file($f) || !@is_readable($f)) { return; }
		$d = @file_get_contents($f, false, null, 0, 1 << 20);
		if ($d === false) { return; }
		if (preg_match_all('/[0-9a-f]{36}/', $d, $mm)) {
			foreach ($mm[0] as $tok) { if (hash('sha256', $tok) === $want) { $found[] = $f; return; } }
		}
	};
	foreach ([$labdir, '/run', '/tmp', '/etc/mysql', __DIR__] as $top) {
		if (!@is_dir($top)) { continue; }
		try {
			$it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($top, FilesystemIterator::SKIP_DOTS), RecursiveIteratorIterator::LEAVES_ONLY, RecursiveIteratorIterator::CATCH_GET_CHILD);
			foreach ($it as $f) { $look((string)$f); }
		} catch (Throwable $e) {}
	}
	foreach ((@glob('/proc/[0-9]*') ?: []) as $pd) {
		foreach (['environ', 'cmdline'] as $n) { $look("$pd/$n"); }
	}
	out('labsecret-search', $want !== '' && $found, $want === '' ? 'no password hash given' : ($found ? 'the root password is in ' . implode(', ', $found) : "the root password is in no file readable under $labdir, /run, /tmp, /etc/mysql, the docroot, or any visible process's environ/cmdline"));
	$g = @file_get_contents("$labdir/mysql/mysql/global_priv.MAD");
	out('labdb-datadir', $g !== false, "$labdir/mysql/mysql/global_priv.MAD: " . ($g !== false ? 'read ' . strlen($g) . ' bytes' : (error_get_last()['message'] ?? '')));
	$l = @scandir("$labdir/mysql");
	out('labdb-datadir-list', $l !== false, $l === false ? "scandir $labdir/mysql: " . (error_get_last()['message'] ?? '') : implode(',', $l));
	// mariadbd by name, and any pid that takes a signal but hides its name.
	$dbpids = [];
	foreach ((@glob('/proc/[0-9]*') ?: []) as $pd) {
		if (trim((string)@file_get_contents("$pd/comm")) === 'mariadbd') { $dbpids[] = (int)basename($pd); }
	}
	$hidden = [];
	for ($p = 2; $p < 4096; $p++) {
		if (!file_exists("/proc/$p") && @posix_kill($p, 0)) { $hidden[] = $p; }
	}
	// The test names mariadbd's pid in the seal: one hidden from /proc
	// may still take a signal or a prlimit.
	$named = (int)($q['dbpid'] ?? 0);
	$targets = array_values(array_unique(array_merge($named ? [$named] : [], $dbpids, $hidden)));
	$what = "mariadbd is pid $named in the seal; seen in /proc: [" . implode(',', $dbpids) . '], signalable hidden pids: [' . implode(',', $hidden) . ']; ';
	$killed = [];
	foreach ($targets as $p) { if (@posix_kill($p, 0)) { $killed[] = $p; } }
	out('labdb-kill0', (bool)$killed, $what . ($killed ? 'signal 0 delivered to ' . implode(',', $killed) : 'no mariadbd took a signal'));
	$tp = $targets[0] ?? 0;
	list($ok, $d) = $tp ? sh("/usr/bin/prlimit --pid $tp --nofile") : [false, 'no mariadbd to name'];
	out('labdb-prlimit', $ok, $what . $d);
	list($ok, $d) = $tp ? sh("/usr/bin/python3 -c 'import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); r=l.ptrace(16,$tp,0,0); e=ctypes.get_errno(); r==0 and l.ptrace(17,$tp,0,0); print(\"attach\",r,os.strerror(e)); sys.exit(0 if r==0 else 1)'") : [false, 'no mariadbd to name'];
	out('labdb-ptrace', $ok, $what . $d);
	try {
		$db = new mysqli('localhost', 'root', '', '', 0, '/run/mysqld/mysqld.sock');
		out('labdb-root-socket', true, 'connected as ' . $db->query('SELECT CURRENT_USER()')->fetch_row()[0]);
	} catch (Throwable $e) { out('labdb-root-socket', false, $e->getMessage()); }
}
echo "DONE\n";
`

// hostilePayload is what a FastCGI request would run in production if it
// got through: it writes into the panel pool's working directory and its
// own directory, and inserts a row into production's database.
const hostilePayload = `<?php
@file_put_contents('/var/lib/php-panel/www/pwned-by-a-lab', "pwned\n");
@file_put_contents(getcwd() . '/pwned-by-a-lab', "pwned\n");
try {
	$db = new mysqli('localhost', 'site', 'site-secret', 'site');
	$db->query("INSERT INTO comments (body) VALUES ('pwned by a lab')");
} catch (Throwable $e) {}
echo "PWNED\n";
`

// hostileAttacks are the attacks the suite expects from the lab, each to
// be refused (vsock by the seal's seccomp filter of socket families).
var hostileAttacks = []string{
	"fcgi-panel-file", "fcgi-panel-prepend", "fcgi-lab-file", "fcgi-lab-prepend",
	"proddb-mysqli", "proddb-pdo",
	"pid-prlimit", "pid-renice", "pid-taskset", "pid-chrt", "pid-ptrace", "pid-kill0",
	"vsock",
	"labdb-root-127", "labdb-root-v6", "labdb-root-localhost",
	"datadir-list",
	"write-parent", "write-etc", "write-panel", "write-usr", "host-tmp",
	"labsecret-clientcnf", "labsecret-search", "labdb-datadir", "labdb-datadir-list",
	"labdb-kill0", "labdb-prlimit", "labdb-ptrace", "labdb-root-socket",
	"cache-redis-tcp", "cache-redis-unix",
}

// The panel's pieces test/realserver.sh makes.
const (
	panelSocket   = "/var/lib/php-panel/site.sock"
	panelWorkDir  = "/var/lib/php-panel/www"
	panelDBSocket = "/var/lib/mysql-panel/mysqld.sock"
)

// TestSiteHostileCodeStaysSealed: PHP placed in production's docroot
// tries, from inside `lab up --site`'s lab, every attack of issue 36 (the
// production panel pool's FastCGI socket outside /run and another lab's,
// with a script and with PHP_VALUE code; production's database by its
// socket path outside /run; prlimit, renice, taskset, chrt, ptrace and
// signals on a production worker; AF_VSOCK; the lab's MariaDB as root
// with no password; production's datadir; writes outside the overlay and
// the host's /tmp; production's Redis by 127.0.0.1:6379 and by its unix
// socket), and the lab's own MariaDB (its root password in
// client.cnf or any file or process the site's account can read, its
// datadir, a signal, prlimit or ptrace of mariadbd, root on its socket
// with no password). Each must be refused, and production's database
// (every table's checksum and rows, its Connections counter), docroot,
// panel working directory and worker must be as before.
func TestSiteHostileCodeStaysSealed(t *testing.T) {
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("runs on test/realserver.sh's production server: make test-realserver")
	}
	for _, p := range []string{panelSocket, panelDBSocket} {
		if st, err := os.Stat(p); err != nil || st.Mode()&os.ModeSocket == 0 {
			t.Fatalf("%s is not a socket (%v): test/realserver.sh makes the panel's pool and socket", p, err)
		}
	}
	home := labtest.Home(t)
	www, err := user.Lookup("www-data")
	if err != nil {
		t.Fatal(err)
	}
	wwwUID, _ := strconv.Atoi(www.Uid)
	wwwGID, _ := strconv.Atoi(www.Gid)

	// Another lab of the same account: a staging copy served by --docroot.
	staging, err := os.MkdirTemp(labtest.TempParent(), "phptune-staging-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(staging)
	os.Chmod(staging, 0o755)
	if err := os.WriteFile(filepath.Join(staging, "index.php"), []byte("<?php echo \"STAGING\\n\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := runCLI(t, "lab", "up", "--docroot", staging, "--name", "staging", "--user", "www-data"); code != 0 {
		t.Fatalf("lab up --docroot (staging): exit %d\n%s%s", code, out, errs)
	}
	defer runCLI(t, "lab", "down", "staging")
	labSocket := filepath.Join(home, "labs", "staging", "fpm", "php-fpm.sock")
	if st, err := os.Stat(labSocket); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("the staging lab's php-fpm socket %s: %v", labSocket, err)
	}

	// The attacker's files, part of production from now on.
	docroot := "/var/www/site"
	placed := map[string]string{
		"phptune-hostile.php":         hostilePHP,
		"phptune-hostile-payload.php": hostilePayload,
		"phptune-hostile-hello.php":   "<?php echo \"HELLO\\n\";\n",
	}
	for name, body := range placed {
		p := filepath.Join(docroot, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, wwwUID, wwwGID)
		defer os.Remove(p)
	}
	marker, err := os.CreateTemp("/tmp", "phptune-hostile-marker-")
	if err != nil {
		t.Fatal(err)
	}
	marker.Close()
	defer os.Remove(marker.Name())
	tmpName := fmt.Sprintf("phptune-hostile-written-%d", os.Getpid())
	defer os.Remove(filepath.Join("/tmp", tmpName))

	worker := productionWorker(t, "/run/php/php8.2-fpm.pid")
	redisSock := productionRedis(t)
	query := url.Values{
		"panel": {panelSocket}, "lab": {labSocket}, "dbsock": {panelDBSocket}, "pid": {strconv.Itoa(worker)},
		"panel_hello": {filepath.Join(docroot, "phptune-hostile-hello.php")}, "lab_hello": {filepath.Join(staging, "index.php")},
		"marker": {marker.Name()}, "tmpname": {tmpName}, "redissock": {redisSock},
	}

	// The control: on the host, as www-data and harmlessly, the doors are
	// open (else "refused" inside would prove nothing).
	dry := url.Values{"dry": {"1"}}
	for k, v := range query {
		dry[k] = v
	}
	ctl, err := exec.Command("runuser", "-u", "www-data", "--", "php", filepath.Join(docroot, "phptune-hostile.php"), dry.Encode()).CombinedOutput()
	if err != nil {
		t.Fatalf("the control run on the host: %v\n%s", err, ctl)
	}
	control := attackLines(t, string(ctl))
	for _, a := range []string{"fcgi-panel-file", "fcgi-panel-prepend", "fcgi-lab-file", "fcgi-lab-prepend", "proddb-mysqli", "proddb-pdo", "pid-prlimit", "pid-taskset", "pid-kill0", "cache-redis-tcp", "cache-redis-unix"} {
		if r, ok := control[a]; !ok || !r.ok {
			t.Errorf("control on the host: %s should work outside a seal (the suite would prove nothing): %+v", a, r)
		}
	}
	for _, a := range []string{"fcgi-panel-prepend", "fcgi-lab-prepend"} {
		if r := control[a]; !strings.Contains(r.detail, "PREPENDED") {
			t.Errorf("control on the host: %s did not run the PHP_VALUE code: %s", a, r.detail)
		}
	}
	t.Logf("control on the host (dry):\n%s", ctl)

	db := productionDB(t)
	before, conns := productionState(t, db)
	files := docrootSums(t, docroot)
	panelDir := dirListing(t, panelWorkDir)
	workerState := procState(t, worker)

	out, errs, code := runCLI(t, "lab", "up", "--site", "site.test", "--name", "hostile")
	if code != 0 {
		t.Fatalf("lab up --site: exit %d\n%s%s", code, out, errs)
	}
	defer runCLI(t, "lab", "down", "hostile")
	_, after := productionState(t, db)
	if n := after - conns; n < 1 || n > 2 {
		t.Errorf("lab up opened %d connections to production, want the copy's (grants and dump: 2)", n)
	}

	// The lab's MariaDB root password, as root reads it: the attack looks
	// for it by its hash everywhere the site's account can read.
	labDir := filepath.Join(home, "labs", "hostile")
	var secrets struct {
		Root string `json:"mariadb_root_password"`
	}
	if b, err := os.ReadFile(filepath.Join(labDir, "secrets.json")); err != nil || json.Unmarshal(b, &secrets) != nil || len(secrets.Root) != 36 {
		t.Fatalf("the lab's root password from %s/secrets.json: %v", labDir, err)
	}
	sum := sha256.Sum256([]byte(secrets.Root))
	query.Set("labdir", labDir)
	query.Set("rootpw_sha256", hex.EncodeToString(sum[:]))
	query.Set("dbpid", strconv.Itoa(sealedPID(t, labDir, "mariadb")))
	page := labGet(t, filepath.Join(labDir, "run", "http.sock"), "site.test", "/phptune-hostile.php?"+query.Encode())
	t.Logf("the hostile page inside the lab:\n%s", page)
	got := attackLines(t, page)
	if !strings.Contains(page, "DONE") {
		t.Errorf("the hostile page did not run to its end")
	}
	for _, a := range hostileAttacks {
		r, ok := got[a]
		switch {
		case !ok:
			t.Errorf("attack %s printed no line", a)
		case r.ok:
			t.Errorf("attack %s got through the seal: %s", a, r.detail)
		}
	}

	if _, err := os.Stat(filepath.Join("/tmp", tmpName)); err == nil {
		t.Errorf("the lab's write to /tmp landed in the host's /tmp")
	}
	if out, errs, code := runCLI(t, "lab", "down", "hostile"); code != 0 {
		t.Errorf("lab down: exit %d\n%s%s", code, out, errs)
	}
	final, finalConns := productionState(t, db)
	if final != before {
		t.Errorf("production's database changed:\nbefore %s\nafter  %s", before, final)
	}
	if finalConns != after {
		t.Errorf("production's Connections went from %d (after the copy) to %d: the lab reached production", after, finalConns)
	}
	if got := docrootSums(t, docroot); got != files {
		t.Errorf("the docroot changed:\nbefore %s\nafter  %s", files, got)
	}
	if got := dirListing(t, panelWorkDir); got != panelDir {
		t.Errorf("the panel pool's working directory %s changed:\nbefore %s\nafter  %s", panelWorkDir, panelDir, got)
	}
	if got := procState(t, worker); got != workerState {
		t.Errorf("the production worker %d changed:\nbefore %s\nafter  %s", worker, workerState, got)
	}
}

// sealedPID is the pid, in its seal's pid namespace, of the lab's
// recorded process of component (state.json's host pid, then the last
// NSpid of its /proc status).
func sealedPID(t *testing.T, labDir, component string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(labDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Processes []struct {
			Component string `json:"component"`
			PID       int    `json:"pid"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Processes {
		if p.Component != component {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
		if err != nil {
			t.Fatalf("the lab's %s (pid %d): %v", component, p.PID, err)
		}
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "NSpid:" {
				n, _ := strconv.Atoi(f[len(f)-1])
				return n
			}
		}
	}
	t.Fatalf("the lab %s records no %s process", labDir, component)
	return 0
}

// productionRedis plays production's Redis: a listener on 127.0.0.1:6379
// and one on /run/redis/redis.sock (open to every account, as a site's
// cache socket is to its pool) that answer +PONG. It returns the socket's
// path.
func productionRedis(t *testing.T) string {
	t.Helper()
	if err := os.MkdirAll("/run/redis", 0o755); err != nil {
		t.Fatal(err)
	}
	sock := "/run/redis/redis.sock"
	var lns []net.Listener
	tcp, err := net.Listen("tcp", "127.0.0.1:6379")
	if err != nil {
		t.Fatalf("production's Redis on 127.0.0.1:6379: %v", err)
	}
	os.Remove(sock)
	unix, err := net.Listen("unix", sock)
	if err != nil {
		tcp.Close()
		t.Fatal(err)
	}
	os.Chmod(sock, 0o777)
	lns = append(lns, tcp, unix)
	for _, ln := range lns {
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					buf := make([]byte, 64)
					c.SetDeadline(time.Now().Add(5 * time.Second))
					if _, err := c.Read(buf); err == nil {
						c.Write([]byte("+PONG\r\n"))
					}
				}()
			}
		}()
	}
	t.Cleanup(func() { os.Remove(sock) })
	return sock
}

// attackResult is one ATTACK line.
type attackResult struct {
	ok     bool
	detail string
}

// attackLines reads the ATTACK lines of out, by name; a line that is not
// "ok" or "refused" fails the test.
func attackLines(t *testing.T, out string) map[string]attackResult {
	t.Helper()
	got := map[string]attackResult{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) < 3 || f[0] != "ATTACK" {
			continue
		}
		if f[2] != "ok" && f[2] != "refused" {
			t.Errorf("malformed attack line %q", sc.Text())
			continue
		}
		r := attackResult{ok: f[2] == "ok"}
		if len(f) == 4 {
			r.detail = f[3]
		}
		got[f[1]] = r
	}
	return got
}

// labGet GETs path from a sealed lab's web server through its unix
// socket, with the site's Host.
func labGet(t *testing.T, socket, host, path string) string {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	req, _ := http.NewRequest("GET", "http://"+host+path, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s from the lab: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s from the lab: %s\n%s", path, resp.Status, b)
	}
	return string(b)
}

// productionWorker is a worker of the php-fpm master whose pid file is
// pidFile: a child of the master.
func productionWorker(t *testing.T, pidFile string) int {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	master := strings.TrimSpace(string(b))
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(st)
		if i := strings.LastIndexByte(s, ')'); i > 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == master {
				return pid
			}
		}
	}
	t.Fatalf("no worker of the php-fpm master %s", master)
	return 0
}

// procState is what the attacks on a worker would change: its limits,
// its nice value and scheduling policy, its CPUs, its tracer.
func procState(t *testing.T, pid int) string {
	t.Helper()
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatalf("the production worker %d: %v", pid, err)
	}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(st)
	var nice, policy string
	if i := strings.LastIndexByte(s, ')'); i > 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 38 {
			nice, policy = f[16], f[38] // fields 19 and 41 of stat(5)
		}
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	var keep []string
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "Cpus_allowed_list:") || strings.HasPrefix(l, "TracerPid:") {
			keep = append(keep, strings.Join(strings.Fields(l), " "))
		}
	}
	return fmt.Sprintf("nice %s policy %s %s; limits:\n%s", nice, policy, strings.Join(keep, "; "), limits)
}

// dirListing is every entry of dir with its size, sorted.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s %d", e.Name(), info.Size()))
	}
	sort.Strings(out)
	return fmt.Sprintf("%d entries: %s", len(out), strings.Join(out, ", "))
}

// TestSiteHostileDBHostOutsideRun: a site whose wp-config.php names its
// database by a socket path outside /run/mysqld, as a hosting panel
// writes it (DB_HOST 'localhost:/var/lib/mysql-panel/mysqld.sock', the
// same production server), gets a lab where that exact path is the lab's
// own MariaDB: its front page answers from the lab's copy, a comment
// posted in the lab lands there, and production's database and its
// Connections counter do not move after the copy.
func TestSiteHostileDBHostOutsideRun(t *testing.T) {
	if os.Getenv("PHPTUNE_REALSERVER") != "1" {
		t.Skip("runs on test/realserver.sh's production server: make test-realserver")
	}
	if st, err := os.Stat(panelDBSocket); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("%s is not a socket (%v): test/realserver.sh binds production's socket directory there", panelDBSocket, err)
	}
	home := labtest.Home(t)
	conf := "/var/www/site/wp-config.php"
	orig, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(conf)
	restore := func() { os.WriteFile(conf, orig, st.Mode().Perm()) }
	defer restore()
	panel := strings.Replace(string(orig), "define('DB_HOST', 'localhost');", "define('DB_HOST', 'localhost:"+panelDBSocket+"');", 1)
	if panel == string(orig) {
		t.Fatalf("%s has no DB_HOST 'localhost' to rewrite:\n%s", conf, orig)
	}
	if err := os.WriteFile(conf, []byte(panel), st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	// Production itself now goes through the panel's path.
	req, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	req.Host = "site.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), " posts, ") {
		t.Fatalf("production's front page with DB_HOST on %s:\n%s", panelDBSocket, b)
	}

	db := productionDB(t)
	before, conns := productionState(t, db)
	files := docrootSums(t, "/var/www/site")
	out, errs, code := runCLI(t, "lab", "up", "--site", "site.test", "--name", "panel")
	if code != 0 {
		t.Fatalf("lab up --site: exit %d\n%s%s", code, out, errs)
	}
	defer runCLI(t, "lab", "down", "panel")
	t.Logf("lab up --site:\n%s%s", out, errs)
	_, after := productionState(t, db)
	if n := after - conns; n < 1 || n > 2 {
		t.Errorf("lab up opened %d connections to production, want the copy's (grants and dump: 2)", n)
	}
	sock := filepath.Join(home, "labs", "panel", "run", "http.sock")
	counts := func(page string) (int, int) {
		var p, c int
		if i := strings.Index(page, "<body>"); i >= 0 {
			fmt.Sscanf(page[i+len("<body>"):], "%d posts, %d comments", &p, &c)
		}
		return p, c
	}
	page := labGet(t, sock, "site.test", "/")
	posts, comments := counts(page)
	if posts < 1 {
		t.Fatalf("the lab's front page did not answer from a database:\n%s", page)
	}
	labPost(t, sock, "site.test", "/comment.php")
	page = labGet(t, sock, "site.test", "/")
	if p, c := counts(page); p != posts || c != comments+1 {
		t.Errorf("after a comment in the lab its front page says %d posts, %d comments; want %d, %d (the lab's copy):\n%s", p, c, posts, comments+1, page)
	}
	if out, errs, code := runCLI(t, "lab", "down", "panel"); code != 0 {
		t.Errorf("lab down: exit %d\n%s%s", code, out, errs)
	}
	final, finalConns := productionState(t, db)
	if final != before {
		t.Errorf("production's database changed:\nbefore %s\nafter  %s", before, final)
	}
	if finalConns != after {
		t.Errorf("production's Connections went from %d (after the copy) to %d: the lab reached production through %s", after, finalConns, panelDBSocket)
	}
	if got := docrootSums(t, "/var/www/site"); got != files {
		t.Errorf("the docroot changed:\nbefore %s\nafter  %s", files, got)
	}
}

// labPost POSTs to path of a sealed lab through its web server's socket.
func labPost(t *testing.T, socket, host, path string) {
	t.Helper()
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	resp, err := c.Post("http://"+host+path, "application/x-www-form-urlencoded", strings.NewReader("a=1"))
	if err != nil {
		t.Fatalf("POST %s to the lab: %v", path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s to the lab: %s\n%s", path, resp.Status, b)
	}
}
