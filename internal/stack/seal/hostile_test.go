package seal

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostSocket listens on a unix socket at dir/name, open to every account
// (only the seal must keep the lab out), and reports each connection on
// reached.
func hostSocket(t *testing.T, dir, name string, reached chan<- string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Chmod(p, 0o777); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached <- p
			c.Close()
		}
	}()
	return p
}

// tempDirIn makes a temporary directory, mode 0755, in parent, removed
// when the test ends.
func tempDirIn(t *testing.T, parent string) string {
	t.Helper()
	d, err := os.MkdirTemp(parent, "phptune-seal-hostile-")
	if err != nil {
		t.Skipf("cannot make a directory in %s: %v", parent, err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestHostileCodeFindsNothing is the site's hostile code, run as PHP and
// shell inside a sealed lab as the lab's account: it tries the unix
// sockets of production pools and of another lab outside /run (under
// /var/lib, /srv, /usr/local and the labs' home), lists production's
// MariaDB datadir, reads /home, /srv and /opt, looks for host processes
// (the test's own and one of the lab's own account) and tries kill,
// prlimit, renice and taskset on them, and writes outside what the seal
// gives it. Every attempt must fail, the host's listeners must not be
// reached, and the host process's limits and priority must not change.
func TestHostileCodeFindsNothing(t *testing.T) {
	needRoot(t)
	if _, err := os.Stat("/usr/bin/php"); err != nil {
		t.Skip("php (the CLI) is not installed")
	}
	uid, gid := account(t)
	home := base(t) // phptune's home, with two labs in it
	lab := filepath.Join(home, "labs", "mine")
	other := filepath.Join(home, "labs", "other", "run")
	writable := filepath.Join(lab, "run")
	for _, d := range []string{lab, other, writable} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(home, "labs"), filepath.Dir(other)} {
		os.Chmod(d, 0o755)
	}
	if err := os.Chown(writable, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lab, "nginx.conf"), []byte("# the lab's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := docroot(t, lab, uid, gid)
	reached := make(chan string, 20)
	inDocroot := hostSocket(t, root, "pool.sock", reached) // a pool's socket in the real docroot
	before := sums(t, root)

	sockets := map[string]string{ // what it stands for: its path
		"a production pool under /var/lib": hostSocket(t, tempDirIn(t, "/var/lib"), "php8.2-fpm-site.sock", reached),
		"a production pool under /srv":     hostSocket(t, tempDirIn(t, "/srv"), "fpm.sock", reached),
		"another lab's FastCGI socket":     hostSocket(t, other, "php-fpm.sock", reached),
	}
	os.Chown(other, uid, gid)
	masked := hostSocket(t, tempDirIn(t, "/usr/local"), "php82.sock", reached)

	// A host process of the lab's own account, as production's pool
	// workers of www-data beside a lab of www-data.
	host := exec.Command("/usr/bin/sleep", "120")
	host.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { host.Process.Kill(); host.Wait() }()
	limitsBefore, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", host.Process.Pid))
	niceBefore, _ := syscall.Getpriority(syscall.PRIO_PROCESS, host.Process.Pid)

	s := create(t, Spec{Dir: filepath.Join(lab, "seal"), Docroot: root, Hosts: []string{"site.test"},
		Accounts: []Account{{Name: "labuser", UID: uid, GID: gid}},
		Binds:    []Bind{{Source: writable, Target: writable}, {Source: lab, Target: lab, ReadOnly: true}}})

	var php strings.Builder
	php.WriteString("<?php\n")
	for what, p := range sockets {
		w := strings.ReplaceAll(what, "'", "\\'")
		fmt.Fprintf(&php, "$c = @stream_socket_client('unix://%s', $no, $msg, 2); echo $c ? 'ESCAPE connected to %s' : 'refused %s: errno '.$no, \"\\n\";\n", p, w, w)
	}
	fmt.Fprintf(&php, "$c = @stream_socket_client('unix://%s', $no, $msg, 2); echo $c ? 'ESCAPE connected to a socket under /usr/local' : 'refused /usr/local: errno '.$no, \"\\n\";\n", masked)
	fmt.Fprintf(&php, "$c = @stream_socket_client('unix://%s', $no, $msg, 2); echo $c ? 'ESCAPE connected to a socket in the docroot' : 'refused the docroot socket: errno '.$no, \"\\n\";\n", inDocroot)
	fmt.Fprintf(&php, "echo @file_put_contents('%s/x', 'x') === false ? 'refused writing the lab directory' : 'ESCAPE wrote the lab directory', \"\\n\";\n", lab)
	fmt.Fprintf(&php, "echo @scandir('/var/lib/mysql') === false ? 'refused the datadir listing' : 'ESCAPE listed /var/lib/mysql', \"\\n\";\n")
	phpFile := filepath.Join(writable, "hostile.php")
	if err := os.WriteFile(phpFile, []byte(php.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	var sh strings.Builder
	sh.WriteString("php " + phpFile + "\n")
	for _, d := range []string{"/var/lib/mysql", "/var/lib", "/home", "/srv", "/opt", "/var/www", "/root", filepath.Join(home, "labs", "other"), "/etc/nginx/sites-enabled", "/sys"} {
		fmt.Fprintf(&sh, "if ls %[1]s >/dev/null 2>&1; then echo 'ESCAPE listed %[1]s'; else echo 'refused listing %[1]s'; fi\n", d)
	}
	for _, pid := range []int{os.Getpid(), host.Process.Pid} {
		fmt.Fprintf(&sh, `p=%d
if test -e /proc/$p; then echo "ESCAPE sees /proc/$p"; else echo "refused /proc/$p"; fi
if kill -0 $p 2>/dev/null; then echo "ESCAPE signalled $p"; else echo "refused kill $p: $(kill -0 $p 2>&1)"; fi
if prlimit --pid $p --nofile=4:4 2>/dev/null; then echo "ESCAPE prlimit $p"; else echo "refused prlimit $p: $(prlimit --pid $p --nofile=4:4 2>&1)"; fi
if renice -n 19 -p $p >/dev/null 2>&1; then echo "ESCAPE renice $p"; else echo "refused renice $p"; fi
if taskset -p 1 $p >/dev/null 2>&1; then echo "ESCAPE taskset $p"; else echo "refused taskset $p"; fi
`, pid)
	}
	sh.WriteString(`echo "processes seen: $(ls -d /proc/[0-9]* | wc -l)"
for p in /x /usr/x /etc/x /var/x /dev/x; do if { echo x > $p; } 2>/dev/null; then echo "ESCAPE wrote $p"; else echo "refused writing $p"; fi; done
echo x > ` + writable + `/ok && echo "wrote the writable bind"
echo x > ` + root + `/new.txt && echo "wrote the docroot's overlay"
echo x > /tmp/x && echo "wrote /tmp"
true
`)
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", sh.String())
	t.Logf("inside:\n%s", out)
	if err != nil {
		t.Fatalf("the hostile script: %v", err)
	}
	if strings.Contains(out, "ESCAPE") {
		t.Errorf("the hostile code got out of the seal:\n%s", out)
	}
	for what := range sockets {
		if !strings.Contains(out, "refused "+what+": errno 2\n") {
			t.Errorf("connecting to %s did not fail with ENOENT (the path must not exist inside)", what)
		}
	}
	for _, want := range []string{"refused /usr/local: errno", "refused the docroot socket: errno", "refused writing the lab directory", "refused the datadir listing",
		"wrote the writable bind", "wrote the docroot's overlay", "wrote /tmp", "No such process"} {
		if !strings.Contains(out, want) {
			t.Errorf("inside, %q is missing from the output", want)
		}
	}
	if n := strings.Count(out, "No such process"); n < 4 {
		t.Errorf("kill and prlimit of host pids failed %d times with 'No such process', want 4 (the pids must not exist inside)", n)
	}
	select {
	case p := <-reached:
		t.Errorf("the host's socket %s was reached from inside", p)
	default:
	}
	if after, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", host.Process.Pid)); string(after) != string(limitsBefore) {
		t.Errorf("the host process's limits changed:\n%s", after)
	}
	if nice, _ := syscall.Getpriority(syscall.PRIO_PROCESS, host.Process.Pid); nice != niceBefore {
		t.Errorf("the host process's priority changed from %d to %d", niceBefore, nice)
	}
	if after := sums(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the real docroot changed")
	}
	if _, err := os.Stat(filepath.Join(lab, "x")); err == nil {
		t.Error("the lab's read-only directory was written")
	}
	seen := strings.TrimSpace(out[strings.Index(out, "processes seen: ")+len("processes seen: "):])
	if n, _ := strconv.Atoi(strings.SplitN(seen, "\n", 2)[0]); n > 5 {
		t.Errorf("inside, /proc shows %d processes; only the script's own should be there", n)
	}
}

// TestStartedOnlyIntoThePIDNamespace: a command of the seal started with
// cmd.Start, outside the seal's pid namespace, refuses to run; one started
// with Start runs there under a small pid of its own, and the host sees it
// under the pid cmd.Process has, with its parent and namespace.
func TestStartedOnlyIntoThePIDNamespace(t *testing.T) {
	needRoot(t)
	uid, gid := account(t)
	s := create(t, Spec{Dir: filepath.Join(base(t), "seal")})

	stray := s.Command(uid, gid, "/usr/bin/bash", "-c", "echo RAN")
	out, err := stray.CombinedOutput()
	// nsenter cannot even find the confining binary: /proc/self does not
	// exist in the seal's /proc for a process outside its namespace (the
	// confining step checks the same again).
	if err == nil || strings.Contains(string(out), "RAN") {
		t.Errorf("a command started outside the seal's pid namespace: %v, %q; want it refused", err, out)
	}

	cmd := s.Command(uid, gid, "/usr/bin/bash", "-c", "echo $$; exec sleep 60")
	var buf strings.Builder
	cmd.Stdout = &buf
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	status := ""
	for i := 0; i < 100 && !strings.Contains(status, "sleep"); i++ {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		status = string(data)
		if !strings.Contains(status, "sleep") {
			time.Sleep(20 * time.Millisecond)
		}
	}
	var nspid []string
	for _, line := range strings.Split(status, "\n") {
		if f, ok := strings.CutPrefix(line, "NSpid:"); ok {
			nspid = strings.Fields(f)
		}
	}
	if len(nspid) != 2 || nspid[0] != strconv.Itoa(pid) {
		t.Fatalf("the host's /proc/%d/status has NSpid %v, want the host pid and the seal's", pid, nspid)
	}
	if inner := strings.TrimSpace(buf.String()); inner != nspid[1] {
		t.Errorf("inside, the process is pid %q; the host says %s", inner, nspid[1])
	}
	if !contains(s.Processes(), pid) {
		t.Errorf("Processes() = %v lacks %d", s.Processes(), pid)
	}
	if got, want := linkInode(fmt.Sprintf("/proc/%d/ns/pid", pid), "pid"), nsInode(s.pidFile()); got != want || got == 0 {
		t.Errorf("the process's pid namespace is %d, the seal's %d", got, want)
	}
}
