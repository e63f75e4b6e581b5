package phpbuild

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

// Functions only this package's tests use.

// Binary returns the php-fpm and php (cli) binaries of complete build id,
// for a lab (knob php.build). They are root-owned and not writable by the
// lab; run them as the lab's account. An id that names no complete build is
// an error wrapping ErrNoBuild. A lab running them must load the build's
// own opcache (Files.Opcache) instead of the distro's: see Files.
func Binary(id string) (fpmPath, cliPath string, err error) {
	f, err := BuildFiles(id)
	if err != nil {
		return "", "", err
	}
	return f.FPM, f.CLI, nil
}

// ServeOnce starts a build's php-fpm (with its own opcache) as acct on a
// private socket under dir, sends one FastCGI request for script and stops
// it: a build is shown to serve.
func ServeOnce(ctx context.Context, f *Files, acct *Account, dir, extDir, script string) (*fcgi.Response, error) {
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		return nil, err
	}
	if uid, gid := acct.ids(); uid >= 0 {
		if err := os.Lchown(run, uid, gid); err != nil {
			return nil, err
		}
	}
	conf := filepath.Join(dir, "php-fpm.conf")
	if err := os.WriteFile(conf, []byte(FPMConfig(run, 1)), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(f.FPM, append([]string{"-F", "-y", conf}, TrainINI(extDir, f.Opcache, "")...)...)
	cmd.Dir, cmd.Env = run, []string{buildPath, "HOME=" + run}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if acct.drop {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: acct.UID, Gid: acct.GID, Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := waitFor(cmd)
	defer func() { killGroup(cmd.Process.Pid, 2*time.Second); <-w.done }()
	sock := filepath.Join(run, "php-fpm.sock")
	if err := waitSocket(ctx, sock, int(acct.UID), w); err != nil {
		return nil, err
	}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		return peercred.Dial(ctx, network, address, int(acct.UID))
	}
	params := fcgi.Params("GET", "/"+filepath.Base(script), script, nil, nil)
	return fcgi.GetWith(ctx, dial, "unix", sock, params, nil)
}
