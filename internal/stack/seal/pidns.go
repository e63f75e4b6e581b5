package seal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A seal has its own pid namespace: its processes see only each other
// (and its init, pid 1) in its /proc, and a pid they name — to kill(2),
// prlimit(2), setpriority(2), sched_setaffinity(2), ioprio_set(2) or
// ptrace(2) — is a pid of the seal, never a process of the host, whatever
// its account. The host still sees every process of the seal under its
// host pid (a pid namespace's processes are members of its parent's too),
// so the lab records, signals and observes its servers as before.
//
// A process joins a pid namespace only at its birth, and it must be born
// to a thread that joined it first (setns(CLONE_NEWPID) sets the pid
// namespace of the thread's children, not of the thread). So Start forks
// the command from a locked OS thread that has joined the seal's
// namespace, and that thread is thrown away afterwards (its goroutine ends
// still locked): the process cmd.Start makes is still the program itself,
// with the host pid the caller records. The Go runtime never clones a
// locked thread's state into a new thread (it asks its template thread),
// so the rest of this process stays in the host's pid namespace.

// pidFile is the file the seal's pid namespace is bound to.
func (s *Seal) pidFile() string { return s.nsDir() + "/pid" }

// rootDir is where the init builds the new root (a directory of the host,
// seen by the init before it pivots).
func (s *Seal) rootDir() string { return s.nsDir() + "/root" }

// Start starts cmd, made by Command or CommandIn, in the seal's pid
// namespace. A command started otherwise (cmd.Start) refuses to run: its
// confining step finds itself outside the seal's /proc and exits with
// status 126.
func (s *Seal) Start(cmd *exec.Cmd) error {
	return s.StartWith(cmd, (*exec.Cmd).Start)
}

// StartWith is Start with start in place of cmd.Start (one that adds a
// cgroup or CPU affinity before it calls cmd.Start, on the same thread).
func (s *Seal) StartWith(cmd *exec.Cmd, start func(*exec.Cmd) error) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	fd, err := s.openNS(s.pidFile(), unix.CLONE_NEWPID, "pid")
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, its
		// children's pid namespace with it.
		runtime.LockOSThread()
		if err := unix.Setns(fd, unix.CLONE_NEWPID); err != nil {
			done <- fmt.Errorf("entering the seal's pid namespace: %v", err)
			return
		}
		done <- start(cmd)
	}()
	err = <-done
	if errors.Is(err, unix.ENOMEM) {
		return fmt.Errorf("starting %s in the seal %s: its init is gone, so its pid namespace takes no new process: %v; run phptune lab down, then up again", cmd.Path, s.Dir, err)
	}
	return err
}

// openNS opens a namespace file of the seal, not through a link, and only
// when it is a namespace of kind.
func (s *Seal) openNS(p string, kind int, name string) (int, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening the seal's %s namespace: %w", name, &os.PathError{Op: "open", Path: p, Err: err})
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil || st.Type != unix.NSFS_MAGIC {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is not a namespace (is the seal gone? phptune lab down, then up again)", p)
	}
	if t, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE); err != nil || t != kind {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is not a %s namespace", p, name)
	}
	return fd, nil
}

// startInit starts the seal's init (init.go) as pid 1 of a new pid
// namespace inside the seal's other namespaces, hands it the plan of the
// file system, waits for its answer, and binds its pid namespace to
// pidFile. start starts it (the caller's cgroup), cmd.Start when nil.
func (s *Seal) startInit(ctx context.Context, steps []step, start func(*exec.Cmd) error) error {
	exe, err := selfFile()
	if err != nil {
		return err
	}
	if err := os.Mkdir(s.rootDir(), 0o700); err != nil {
		return fmt.Errorf("creating %s: %v", s.rootDir(), err)
	}
	req, err := json.Marshal(initRequest{Root: s.rootDir(), Steps: steps})
	if err != nil {
		return err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		return err
	}
	defer outR.Close()
	cmd := exec.Command(tool("nsenter"), "--net="+s.netFile(), "--mount="+s.mntFile(), "--ipc="+s.ipcFile(), "--", selfPath(), initFlag)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + toolPath}
	cmd.ExtraFiles = []*os.File{exe}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
	// Its own session, and no parent-death signal: the init outlives
	// the phptune process that made the seal, as the lab's servers do.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWPID}
	if start == nil {
		start = (*exec.Cmd).Start
	}
	err = start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		return fmt.Errorf("starting the seal's init: %v", err)
	}
	failed := func(err error) error {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	if _, err := inW.Write(req); err != nil {
		return failed(fmt.Errorf("sending the seal's init its plan: %v", err))
	}
	inW.Close()
	deadline := time.Now().Add(stepLimit)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = outR.SetReadDeadline(deadline)
	answer, err := io.ReadAll(io.LimitReader(outR, 64<<10))
	if err != nil {
		return failed(fmt.Errorf("waiting for the seal's init: %v (so far: %s)", err, bytes.TrimSpace(answer)))
	}
	if string(answer) != "ok\n" {
		return failed(fmt.Errorf("building the seal's file system: %s", strings.TrimSpace(string(answer))))
	}
	// The init is this process's child and not waited for yet: its pid
	// names it (a zombie at worst, whose namespace link is gone).
	if err := bindNS("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/ns/pid", s.pidFile()); err != nil {
		return failed(err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// bindNS binds the namespace link src to a new file dst.
func bindNS(src, dst string) error {
	fd, err := unix.Open(dst, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %v", dst, err)
	}
	unix.Close(fd)
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("binding the seal's pid namespace to %s: %v", dst, err)
	}
	return nil
}

// inSealPID reports whether the calling process is in the pid namespace
// of the /proc it sees: inside a seal, that is the seal's. A process
// started into the seal's mount namespace but not its pid namespace has
// no /proc/self there.
func inSealPID() bool {
	_, err := os.Readlink("/proc/self")
	return err == nil
}
