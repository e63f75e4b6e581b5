// Package configtest is for the tests of the web server packages (nginx,
// apache, lighttpd, caddy, h2o): it runs a server's own configuration
// check (lighttpd -tt, caddy validate, h2o -t) on a rendered file the way a
// lab does, as the unprivileged phptune account, in a directory of its own
// that the account can traverse. It imports nothing of the lab, so the
// packages the lab imports can use it in their tests.
package configtest

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Dir makes a directory for the check, with subdirs writable by the check's
// account, and returns it with run, which runs cmd with env (plus PATH and
// HOME, the directory's tmp) as that account when the test runs as root
// (the phptune account; skipped when there is none) and returns its
// combined output.
func Dir(t *testing.T, subdirs ...string) (dir string, run func(cmd *exec.Cmd, env []string) (string, error)) {
	t.Helper()
	// t.TempDir's parents are private to root: the account could not
	// reach the files.
	dir, err := os.MkdirTemp("", "phptune-configtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("phptune")
		if err != nil {
			t.Skip("no phptune account to run the check as; run: phptune setup")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	for _, d := range append([]string{"tmp"}, subdirs...) {
		p := filepath.Join(dir, d)
		if err := os.MkdirAll(p, 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(p, 0o777)
	}
	run = func(cmd *exec.Cmd, env []string) (string, error) {
		cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + filepath.Join(dir, "tmp")}, env...)
		cmd.Dir = dir
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	return dir, run
}
