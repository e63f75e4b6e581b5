package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The adversarial suite of the lab's privilege boundary: a process running
// as the stack account (what any PHP request in a lab can run) attacks the
// root phptune. Each test asserts that no root-owned file changed owner or
// content, nothing ran as root, and nothing outside the lab was removed or
// signalled.

func rootOnly(t *testing.T) *account {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the privilege boundary exists only when phptune runs as root")
	}
	acct, err := stackAccount()
	if err != nil {
		t.Fatal(err)
	}
	return acct
}

// asStack runs a shell command as the stack account and returns its output
// and error.
func asStack(t *testing.T, acct *account, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: acct.UID, Gid: acct.GID, Groups: []uint32{}}}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// victim is a root-only file outside every lab, whose owner, mode and
// content must never change.
type victim struct {
	path    string
	content string
}

func newVictim(t *testing.T) victim {
	t.Helper()
	dir, err := os.MkdirTemp("", "phptune-victim-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // reachable, so a link to it resolves
	t.Cleanup(func() { os.RemoveAll(dir) })
	v := victim{path: filepath.Join(dir, "root-only"), content: "root's secret " + strconv.Itoa(os.Getpid()) + "\n"}
	if err := os.WriteFile(v.path, []byte(v.content), 0o600); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v victim) check(t *testing.T) {
	t.Helper()
	fi, err := os.Lstat(v.path)
	if err != nil {
		t.Fatalf("victim %s: %v", v.path, err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 0 || st.Gid != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("victim %s now uid %d gid %d mode %v, want root:root 0600", v.path, st.Uid, st.Gid, fi.Mode().Perm())
	}
	if data, _ := os.ReadFile(v.path); string(data) != v.content {
		t.Errorf("victim %s content changed to %q", v.path, data)
	}
}

// TestOwnershipByDesign: everything in a lab that root reads, runs or
// writes is root's and not writable by the stack account; the stack owns
// only the directories its servers write.
func TestOwnershipByDesign(t *testing.T) {
	acct := rootOnly(t)
	testHome(t)
	l, err := Up(context.Background(), Options{Name: "own", App: "io"})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	stackDirs := map[string]bool{"run": true, "log": true, "tmp": true, "mysql": true, "fpm": true, "unit": true}
	err = filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(l.Dir, p)
		top := strings.SplitN(rel, string(filepath.Separator), 2)[0]
		if stackDirs[top] {
			if rel == top {
				fi, _ := os.Lstat(p)
				if st := fi.Sys().(*syscall.Stat_t); st.Uid != acct.UID || fi.Mode().Perm() != 0o700 {
					t.Errorf("%s: uid %d mode %v, want the stack's, 0700", rel, st.Uid, fi.Mode().Perm())
				}
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		writable := fi.Mode().Perm()&0o002 != 0 || (st.Gid == acct.GID && fi.Mode().Perm()&0o020 != 0)
		if st.Uid != 0 || writable {
			t.Errorf("%s: uid %d gid %d mode %v: root must own it and the stack must not write it", rel, st.Uid, st.Gid, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"state.json", "secrets.json", "db-snapshot.sql", "out/php-fpm.out"} {
		if fi, err := os.Stat(filepath.Join(l.Dir, f)); err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s mode %v: readable by others than root", f, fi.Mode().Perm())
		}
	}
	// The stack account tries the files root trusts, and fails.
	for _, f := range []string{"state.json", "state.json.tmp", "db-snapshot.sql", "client.cnf", "nginx.conf", "php/99-phptune.ini", "out/php-fpm.out", markerFile} {
		if out, err := asStack(t, acct, "echo forged > '"+filepath.Join(l.Dir, f)+"'"); err == nil {
			t.Errorf("the stack account could write %s: %s", f, out)
		}
	}
	if out, err := asStack(t, acct, "cat '"+filepath.Join(l.Dir, "secrets.json")+"'"); err == nil {
		t.Errorf("the stack account could read secrets.json: %s", out)
	}
}

// TestResetRunsTheSnapshotAsTheStack: a snapshot that smuggles a shell
// command (`\!`, the client's system command) runs it with the stack's
// rights, never root's; and the stack cannot rewrite the snapshot at all.
func TestResetRunsTheSnapshotAsTheStack(t *testing.T) {
	acct := rootOnly(t)
	testHome(t)
	if _, err := os.Stat("/usr/share/wordpress/wp-settings.php"); err != nil {
		t.Skip("WordPress is not installed")
	}
	// Watch every command line while WordPress installs: the admin
	// password must never be on one.
	var mu sync.Mutex
	var cmdlines []string
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				if c, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && len(c) > 0 {
					mu.Lock()
					cmdlines = append(cmdlines, string(bytes.ReplaceAll(c, []byte{0}, []byte{' '})))
					mu.Unlock()
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	l, err := Up(context.Background(), Options{Name: "wpx", App: "wordpress"})
	stop.Store(true)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	s, err := l.ReadSecrets()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmdlines {
		for _, secret := range []string{s.WPAdminPassword, s.DBPassword, s.MariaDBRootPassword} {
			if strings.Contains(c, secret) {
				t.Errorf("a secret was on a command line: %.200s", c)
			}
		}
	}

	snap := filepath.Join(l.Dir, "db-snapshot.sql")
	if out, err := asStack(t, acct, "echo '\\! id' >> "+snap); err == nil {
		t.Fatalf("the stack account could append to the snapshot: %s", out)
	}
	// Suppose the dump itself carried the command (the database is the
	// lab's): root appends it here to see who would run it.
	proof, err := os.MkdirTemp("", "phptune-proof-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(proof)
	os.Chmod(proof, 0o777)
	// (Before the dump's own first line, which turns on the client's
	// sandbox mode where MariaDB's client has one.)
	orig, _ := os.ReadFile(snap)
	os.WriteFile(snap, append([]byte(fmt.Sprintf("\\! id -u > %s/uid\n", proof)), orig...), 0o600)
	rerr := l.Reset(context.Background())
	t.Logf("reset with the smuggled command: %v", rerr)
	if data, err := os.ReadFile(filepath.Join(proof, "uid")); err == nil {
		if got := strings.TrimSpace(string(data)); got != strconv.Itoa(int(acct.UID)) {
			t.Fatalf("the snapshot's shell command ran as uid %s, not as the stack account (%d)", got, acct.UID)
		}
		t.Logf("the snapshot's shell command ran as uid %s (the stack account)", strings.TrimSpace(string(data)))
	} else {
		// MariaDB's client runs `\!` before the dump's sandbox line: if it
		// did not, this test would prove nothing.
		t.Errorf("the snapshot's shell command did not run (%v), so who runs the restore was not seen", err)
	}
	os.WriteFile(snap, orig, 0o600)
	if err := l.Reset(context.Background()); err != nil {
		t.Fatalf("reset with the real snapshot: %v", err)
	}
}

// TestLinksInLabWritableDirs: the stack account plants links (and a hard
// link) to a root-only file in the directories it owns; a restart, lab logs
// and a failed start's log tail never chown, write or read the victim.
func TestLinksInLabWritableDirs(t *testing.T) {
	acct := rootOnly(t)
	testHome(t)
	v := newVictim(t)
	l, err := Up(context.Background(), Options{Name: "links", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	plant := fmt.Sprintf(`cd %s/log && for f in php-fpm.log nginx-error.log nginx-access.log mariadb.log; do rm -f $f; ln -s %s $f; done;
ln %s hard 2>/dev/null; ln -s %s %s/run/php-fpm.pid 2>/dev/null; true`, l.Dir, v.path, v.path, v.path, l.Dir)
	if out, err := asStack(t, acct, plant); err != nil {
		t.Fatalf("planting links: %v %s", err, out)
	}
	for _, f := range []string{"out/php-fpm.out", "out/nginx.out", "state.json.tmp"} {
		if out, err := asStack(t, acct, "ln -sf "+v.path+" "+filepath.Join(l.Dir, f)); err == nil {
			t.Errorf("the stack account could plant %s: %s", f, out)
		}
	}
	cfg, _ := l.Config.Apply([]string{"pm.max_children=6"})
	applyErr := l.Apply(context.Background(), cfg)
	t.Logf("restart with planted links: %v", applyErr)
	logs, err := l.Logs("", 50)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs, v.content[:12]) {
		t.Errorf("lab logs printed the victim's content:\n%s", logs)
	}
	if !strings.Contains(logs, "not read") {
		t.Errorf("lab logs did not say which logs it refused:\n%s", logs)
	}
	v.check(t)
	if err := Down(l.Name); err != nil {
		t.Fatal(err)
	}
	v.check(t)
}

// sleeper starts an unrelated root process that must never be signalled.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func assertAlive(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	if !alive(cmd.Process.Pid) {
		t.Errorf("%s (pid %d) was signalled", what, cmd.Process.Pid)
	}
}

// TestForgedStateAndRecycledPids: a state naming another directory and
// other processes (written by an older phptune's lab account, or copied
// from another machine) is never trusted; recorded pids that now belong to
// another process are never signalled.
func TestForgedStateAndRecycledPids(t *testing.T) {
	rootOnly(t)
	testHome(t)
	if _, err := EnsureHome(); err != nil {
		t.Fatal(err)
	}
	v := newVictim(t)
	keepDir := filepath.Dir(v.path)
	sl := sleeper(t)
	// 1. An unmarked lab directory (an older phptune's, owned by the stack
	// account then) whose state points elsewhere.
	old := filepath.Join(Root(), "old")
	os.Mkdir(old, 0o755)
	forged, _ := json.Marshal(map[string]any{"name": "old", "dir": keepDir, "state": "up",
		"processes": []map[string]any{{"component": "nginx", "pid": sl.Process.Pid}}})
	os.WriteFile(filepath.Join(old, "state.json"), forged, 0o644)
	hs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || !strings.HasPrefix(hs[0].Status, "unmarked") {
		t.Errorf("status of an unmarked directory = %+v, want it listed as unmarked and left alone", hs)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("lab status removed the unmarked directory: %v", err)
	}
	if _, err := Up(context.Background(), Options{Name: "old", App: "hello"}); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("up over an unmarked directory: %v, want it refused", err)
	}
	if err := Down("old"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("lab down old left its directory: %v", err)
	}
	assertAlive(t, sl, "the unrelated root process named in the forged state")
	v.check(t)
	if _, err := os.Stat(keepDir); err != nil {
		t.Errorf("the directory named in the forged state was removed: %v", err)
	}

	// 2. A real lab whose recorded pids were recycled (a reboot, a crash):
	// one now belongs to the unrelated root process.
	l, err := Up(context.Background(), Options{Name: "recycled", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	real := append([]Process(nil), l.Processes...)
	for _, start := range []uint64{startTime(sl.Process.Pid) + 1, startTime(sl.Process.Pid)} {
		l.Processes = append(append([]Process(nil), real...), Process{Component: "php-fpm", PID: sl.Process.Pid, StartTime: start})
		if err := l.writeState(); err != nil {
			t.Fatal(err)
		}
		if _, err := List(); err != nil {
			t.Fatal(err)
		}
		assertAlive(t, sl, "a root process whose pid the lab recorded")
	}
	if err := Down("recycled"); err != nil {
		t.Fatal(err)
	}
	assertAlive(t, sl, "a root process whose pid the lab recorded")
	assertGone(t, &Lab{Name: "recycled", Dir: l.Dir, Processes: real, BootID: l.BootID})

	// 3. A state from another boot: nothing recorded is trusted.
	l, err = Up(context.Background(), Options{Name: "reboot", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	l.BootID = "00000000-0000-0000-0000-000000000000"
	l.Processes = append(l.Processes, Process{Component: "nginx", PID: sl.Process.Pid, StartTime: startTime(sl.Process.Pid)})
	l.writeState()
	hs, _ = List()
	t.Logf("after a 'reboot': %+v", hs[0].Status)
	assertAlive(t, sl, "a root process recorded by a lab of another boot")
	Down("reboot")
	assertAlive(t, sl, "a root process recorded by a lab of another boot")
	assertGone(t, l)
}

// TestPlantedDirectoryIsLeftAlone: a directory under labs/ that phptune
// did not make (no marker) is listed, never removed by status or up.
func TestPlantedDirectoryIsLeftAlone(t *testing.T) {
	rootOnly(t)
	testHome(t)
	if _, err := EnsureHome(); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(Root(), "planted")
	os.MkdirAll(filepath.Join(planted, "data"), 0o755)
	os.WriteFile(filepath.Join(planted, "data", "keep"), []byte("keep"), 0o644)
	l, err := Up(context.Background(), Options{Name: "next", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		hs, _ := List()
		for _, h := range hs {
			if h.Lab.Name == "planted" && !strings.HasPrefix(h.Status, "unmarked") {
				t.Errorf("planted directory status %q", h.Status)
			}
		}
	}
	Down(l.Name)
	if _, err := os.Stat(filepath.Join(planted, "data", "keep")); err != nil {
		t.Errorf("the planted directory was touched: %v", err)
	}
}

// TestStatusDuringRestartsNeverReaps: a `lab status` loop while the lab
// restarts 50 times never tears it down.
func TestStatusDuringRestartsNeverReaps(t *testing.T) {
	testHome(t)
	l, err := Up(context.Background(), Options{Name: "busy", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	var stop atomic.Bool
	var seen sync.Map
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			hs, err := List()
			if err != nil {
				t.Error(err)
				return
			}
			for _, h := range hs {
				seen.Store(strings.SplitN(h.Status, " ", 2)[0], true)
				if strings.HasPrefix(h.Status, "cleaned") || strings.HasPrefix(h.Status, "dead") {
					t.Errorf("status reaped a restarting lab: %s", h.Status)
				}
			}
		}
	}()
	a, b := l.Config, l.Config.Clone()
	b["pm.max_children"] = "6"
	for i := 0; i < 50 && !t.Failed(); i++ {
		cfg := a
		if i%2 == 0 {
			cfg = b
		}
		if err := l.Apply(context.Background(), cfg); err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	var states []string
	seen.Range(func(k, _ any) bool { states = append(states, k.(string)); return true })
	t.Logf("states seen by the status loop: %v", states)
	if code, _ := get(t, l.URL+"/"); code != 200 {
		t.Fatalf("after 50 restarts GET / = %d", code)
	}
}

// TestOwnedLabGoesWithItsOwner: a lab made for a tune that was killed is
// taken down by the next command.
func TestOwnedLabGoesWithItsOwner(t *testing.T) {
	testHome(t)
	l, err := Up(context.Background(), Options{Name: "owned", App: "hello", OwnedBy: "tune"})
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := List()
	if len(hs) != 1 || hs[0].Status != "up" {
		t.Fatalf("while its owner lives: %+v", hs)
	}
	// Its owner dies: pretend it was another process, now gone.
	sl := exec.Command("true")
	sl.Run()
	l.OwnerPID, l.OwnerStart = sl.Process.Pid, 1
	if err := l.writeState(); err != nil {
		t.Fatal(err)
	}
	hs, _ = List()
	if len(hs) != 1 || !strings.Contains(hs[0].Status, "made by phptune tune") {
		t.Fatalf("after its owner died: %+v", hs)
	}
	assertGone(t, l)
}

// TestEscapedProcessDiesWithTheLab: code in a lab starts a process that
// leaves its session and takes another name (so neither the recorded
// groups nor the command-line scan know it); `lab down` still stops it,
// through the lab's cgroup.
func TestEscapedProcessDiesWithTheLab(t *testing.T) {
	acct := rootOnly(t)
	testHome(t)
	dir, err := os.MkdirTemp("", "phptune-escape-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "index.php"), []byte(`<?php
exec("setsid -f bash -c 'exec -a phptune-escapee sleep 300' >/dev/null 2>&1");
echo "started";`), 0o644)
	l, err := Up(context.Background(), Options{Name: "escape", DocRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Limits.Track {
		Down(l.Name)
		t.Skip("no cgroup to track the lab's processes on this machine")
	}
	escapees := func() []int {
		var out []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if bytes.HasPrefix(cmd, []byte("phptune-escapee")) {
				pid, _ := strconv.Atoi(e.Name())
				if st, ok := readStat(pid); ok && st.uid == int(acct.UID) && st.state != "Z" {
					out = append(out, pid)
				}
			}
		}
		return out
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(escapees()) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(escapees()) == 0 {
		Down(l.Name)
		t.Fatal("the escapee never started")
	}
	if err := Down(l.Name); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if left := escapees(); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes %v escaped lab down", left)
	}
}
