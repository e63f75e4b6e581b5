package lab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/peercred"
)

// Every program a lab runs — servers, mariadb-install-db, the WordPress
// installer, mariadb-dump and the mariadb client — runs as the stack
// account, never as root: whatever it reads that the lab could have
// written (a database snapshot, an app's code) can act only with the lab's
// own rights. Secrets reach it on standard input or in its environment
// (readable only by that account and root), never in argv.

const labPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// command prepares bin to run as the stack account in its own session, in
// the lab directory, with only env.
func (l *Lab) command(acct *account, bin string, args, env []string) *exec.Cmd {
	if l.Sealed() {
		return l.sealedCommand(acct, bin, args, env)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = acct.sysProcAttr()
	cmd.Env = append([]string{labPath, "HOME=" + layout{l.Dir}.p("tmp")}, env...)
	cmd.Dir = l.Dir
	return cmd
}

// output runs a short check (php-fpm -t, nginx -t) and returns its output.
func (l *Lab) output(ctx context.Context, acct *account, bin string, args, env []string) (string, error) {
	cmd := l.command(acct, bin, args, env)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := l.runRecorded(ctx, cmd, "check", time.Minute)
	return buf.String(), err
}

// runQuiet runs a short-lived helper (mariadb-install-db, the WordPress
// installer, the mariadb client) with its output appended to the
// component's capture in out/; stdin, when set, feeds it.
func (l *Lab) runQuiet(ctx context.Context, acct *account, component, bin string, args, env []string, stdin io.Reader, limit time.Duration) error {
	y := layout{l.Dir}
	logf, err := y.openOut(component)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := l.command(acct, bin, args, env)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = logf, logf, stdin
	if err := l.runRecorded(ctx, cmd, component+"-setup", limit); err != nil {
		tail := ""
		if data, rerr := l.readLog(logFile{y.p(outDir), component + ".out"}); rerr == nil {
			tail = ": " + lastLines(string(data), 3)
		}
		return fmt.Errorf("%v (log: %s)%s", err, y.outFile(component), tail)
	}
	return nil
}

// runRecorded starts cmd, records its pid (with its start time) in the
// state while it runs so a crash of phptune leaves no orphan, and waits
// for it at most limit.
func (l *Lab) runRecorded(ctx context.Context, cmd *exec.Cmd, component string, limit time.Duration) error {
	return l.runRecordedWith(ctx, cmd, component, limit, l.startCmd)
}

// runRecordedWith is runRecorded with start starting cmd (a sealed lab's
// command that runs on the host side: the lab's startCapped).
func (l *Lab) runRecordedWith(ctx context.Context, cmd *exec.Cmd, component string, limit time.Duration, start func(*exec.Cmd) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := start(cmd); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	l.Processes = append(l.Processes, Process{Component: component, PID: pid, StartTime: startTime(pid)})
	if err := l.writeState(); err != nil {
		killAll(l.owner(), []Process{l.Processes[len(l.Processes)-1]}, time.Second)
		_ = cmd.Wait()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		o := l.owner()
		o.dir = ""
		killAll(o, []Process{{PID: pid, StartTime: l.Processes[len(l.Processes)-1].StartTime}}, 2*time.Second)
		err = <-done
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("%s did not finish within %v", filepath.Base(cmd.Path), limit)
		} else {
			err = ctx.Err()
		}
	}
	l.dropProcess(pid)
	if werr := l.writeState(); werr != nil && err == nil {
		err = werr
	}
	return err
}

func (l *Lab) dropProcess(pid int) {
	out := l.Processes[:0]
	for _, p := range l.Processes {
		if p.PID != pid {
			out = append(out, p)
		}
	}
	l.Processes = out
}

// start launches a long-running server as the stack account in its own
// session, records its pid and start time at once (before waiting for it to
// be ready) and reaps it in the background if it dies while phptune runs.
func (l *Lab) start(acct *account, component, bin string, args, env []string) (*exec.Cmd, error) {
	logf, err := layout{l.Dir}.openOut(component)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := l.command(acct, bin, args, env)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := l.startCmd(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %v", component, err)
	}
	pid := cmd.Process.Pid
	l.Processes = append(l.Processes, Process{Component: component, PID: pid, StartTime: startTime(pid)})
	if err := l.writeState(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait() }()
	return cmd, nil
}

// waitDial waits until network/addr accepts connections (from a listener
// running as uid) while pid lives.
func (l *Lab) waitDial(ctx context.Context, what, network, addr string, uid, pid int) error {
	return l.waitFor(ctx, what, addr, pid, func(ctx context.Context) (net.Conn, error) {
		return dialAs(ctx, network, addr, uid)
	})
}

// waitFor waits until dial connects (addr names where, for the error)
// while pid lives, for 30 s at most.
func (l *Lab) waitFor(ctx context.Context, what, addr string, pid int, dial func(context.Context) (net.Conn, error)) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := dial(dctx)
		cancel()
		if err == nil {
			c.Close()
			return nil
		}
		if !alive(pid) {
			return fmt.Errorf("%s exited while starting", what)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on %s within 30s: %v", what, addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// dialAs connects to one of the lab's sockets, refusing a unix socket whose
// listener does not run as uid.
func dialAs(ctx context.Context, network, addr string, uid int) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return peercred.Dial(dctx, network, addr, uid)
}

// PeerUID is the account the lab's servers run as: the only listener its
// clients (the observer, the generator's FastCGI mode, the database
// handles) accept on a unix socket of the lab.
func (l *Lab) PeerUID() int { return l.UID }

// DBPeerUID is the account the lab's MariaDB runs as: the only listener
// a client of root's accepts on the lab's MariaDB socket.
func (l *Lab) DBPeerUID() int {
	if l.DBUser != "" {
		return l.DBUID
	}
	return l.UID
}

// noFollow is O_NOFOLLOW for os.OpenFile.
const noFollow = syscall.O_NOFOLLOW
