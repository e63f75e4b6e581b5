package locust

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RunOptions say how Run starts Locust.
type RunOptions struct {
	// Home is phptune's state directory (the environment is under it).
	Home       string
	Locustfile Locustfile
	// Host is the base URL loaded: http://127.0.0.1:PORT.
	Host string
	// Users are Locust's simulated users (phptune's -c), all started at
	// once; Duration is the run time.
	Users    int
	Duration time.Duration
	// Workers is how many worker processes Run starts on this machine
	// behind a master (0 with ExpectWorkers 0: one process).
	Workers int
	// MasterBind is ADDR:PORT for the master to listen on, for workers
	// started elsewhere; empty: 127.0.0.1 on a free port.
	MasterBind string
	// ExpectWorkers is how many workers started elsewhere the master waits
	// for, besides Workers, at most WorkerWait.
	ExpectWorkers int
	WorkerWait    time.Duration
	// UID and GID are the account Locust runs as when phptune runs as
	// root (the lab's); -1: as phptune itself.
	UID, GID int
	// Log receives Locust's own log lines (its stderr).
	Log io.Writer
	// OnMaster, when set, is called once the master is started with the
	// command that starts a worker elsewhere.
	OnMaster func(workerCommand string)
}

// Run is a finished Locust run: its result and what its processes cost.
type Run struct {
	Result           *Result
	MasterCPUSeconds float64
	WorkerCPUSeconds []float64
}

// ErrNoWorkers is returned when the master gave up waiting for its
// workers.
var ErrNoWorkers = errors.New("Locust's workers did not all join the master")

// Start runs Locust to the end: its master (or single process) and
// o.Workers worker processes, in one process group of their own, as o.UID,
// from a directory only root can write that holds the locustfile. The
// result comes back over a pipe (ResultFDEnv), never from a file the
// account could write.
func Start(ctx context.Context, o RunOptions) (*Run, error) {
	if err := CheckVenv(o.Home); err != nil {
		return nil, err
	}
	if o.Users < 1 || o.Duration < time.Second {
		return nil, fmt.Errorf("Locust needs at least one user and a run of at least 1s")
	}
	dir, file, err := o.runDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	distributed := o.Workers > 0 || o.ExpectWorkers > 0
	bindHost, bindPort, err := o.masterAddress(distributed)
	if err != nil {
		return nil, err
	}
	wait := o.WorkerWait
	if wait <= 0 {
		wait = time.Minute
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", ResultFDEnv + "=3"}
	env = append(env, o.Locustfile.Env()...)
	bin := Bin(o.Home)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	var logBuf tailBuffer
	logw := io.Writer(&logBuf)
	if o.Log != nil {
		logw = io.MultiWriter(&logBuf, o.Log)
	}
	master := exec.Command(bin, o.masterArgs(file, distributed, bindHost, bindPort, wait)...)
	master.Dir, master.Env = dir, env
	master.Stdout, master.Stderr = logw, logw
	master.ExtraFiles = []*os.File{pw}
	master.SysProcAttr = o.attr(0)
	if err := master.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("starting Locust: %v", err)
	}
	pw.Close()
	pgid := master.Process.Pid
	stop := context.AfterFunc(ctx, func() { syscall.Kill(-pgid, syscall.SIGTERM) })
	defer stop()
	var doc []byte
	var readErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		doc, readErr = io.ReadAll(io.LimitReader(pr, maxDoc+1))
	}()
	o.announceMaster(bindHost, bindPort)
	workers, startErr := o.startWorkers(bin, file, dir, env, bindHost, bindPort, logw, pgid)
	merr := master.Wait()
	run := &Run{MasterCPUSeconds: cpu(master.ProcessState)}
	reapWorkers(workers, pgid)
	for _, w := range workers {
		run.WorkerCPUSeconds = append(run.WorkerCPUSeconds, cpu(w.ProcessState))
	}
	wg.Wait()
	if startErr != nil {
		return nil, startErr
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res, err := o.result(doc, readErr, merr, logBuf.String(), distributed, bindHost, bindPort, wait)
	if err != nil {
		return nil, err
	}
	run.Result = res
	return run, nil
}

// result reads the master's result document (doc, read from its result
// pipe with readErr; waitErr is how the master ended), or says why there
// is none: the workers it waited for did not come, or Locust failed
// (tail is the end of its log).
func (o RunOptions) result(doc []byte, readErr, waitErr error, tail string, distributed bool, bindHost string, bindPort int, wait time.Duration) (*Result, error) {
	total := o.Workers + o.ExpectWorkers
	if distributed && strings.Contains(tail, "Gave up waiting for workers") {
		return nil, fmt.Errorf("%w: %d expected, waited %v (the master listened on %s); start them with: locust -f - %s, or raise --worker-wait",
			ErrNoWorkers, total, wait, net.JoinHostPort(bindHost, strconv.Itoa(bindPort)), strings.Join(workerArgs(bindHost, bindPort), " "))
	}
	if readErr != nil || len(doc) == 0 {
		return nil, fmt.Errorf("Locust ended (%v) without its result; its last words: %s", waitErr, lastLines(tail, 5))
	}
	if len(doc) > maxDoc {
		return nil, fmt.Errorf("Locust's result is larger than %d MiB", maxDoc>>20)
	}
	res, err := ParseResult(strings.NewReader(string(doc)))
	if err != nil {
		return nil, err
	}
	if distributed {
		res.Workers = total
	}
	return res, nil
}

// masterArgs is the command line of Locust's master (its only process
// when not distributed), which runs the locustfile at file headless.
func (o RunOptions) masterArgs(file string, distributed bool, bindHost string, bindPort int, wait time.Duration) []string {
	// Every user is started within a second at most: a capacity step's
	// hundreds of users would otherwise ramp through much of its
	// measured time and short its rate.
	spawn := min(o.Users*10, max(o.Users, 100*max(o.Workers+o.ExpectWorkers, 1)))
	args := []string{"-f", file, "--headless", "-u", strconv.Itoa(o.Users), "-r", strconv.Itoa(spawn),
		"-t", fmt.Sprintf("%ds", int(o.Duration.Round(time.Second)/time.Second)), "--host", o.Host,
		"--only-summary", "--loglevel", "WARNING", "--stop-timeout", "5", "--exit-code-on-error", "0"}
	if distributed {
		total := o.Workers + o.ExpectWorkers
		args = append(args, "--master", "--master-bind-host", bindHost, "--master-bind-port", strconv.Itoa(bindPort),
			"--expect-workers", strconv.Itoa(total), "--expect-workers-max-wait", strconv.Itoa(int(wait.Round(time.Second)/time.Second)))
	}
	return args
}

// workerArgs is a Locust worker's command line (after its -f) to join the
// master at host and port.
func workerArgs(host string, port int) []string {
	return []string{"--worker", "--master-host", host, "--master-port", strconv.Itoa(port), "--loglevel", "WARNING", "--stop-timeout", "5"}
}

// announceMaster tells OnMaster, when the run expects workers from
// other machines, the command that starts one there.
func (o RunOptions) announceMaster(bindHost string, bindPort int) {
	if o.OnMaster == nil || o.ExpectWorkers <= 0 {
		return
	}
	var names []string
	for _, s := range o.Locustfile.Secrets {
		names = append(names, s.Env+"=...")
	}
	h := bindHost
	if h == "0.0.0.0" || h == "::" || h == "*" {
		h = "THIS_HOST"
	}
	o.OnMaster(strings.TrimSpace(strings.Join(names, " ") + " locust -f - " + strings.Join(workerArgs(h, bindPort), " ")))
}

// startWorkers starts the run's local workers in the master's process
// group pgid. On a failure it stops the group and returns the workers
// started so far, with the error.
func (o RunOptions) startWorkers(bin, file, dir string, env []string, bindHost string, bindPort int, logw io.Writer, pgid int) ([]*exec.Cmd, error) {
	var workers []*exec.Cmd
	for i := 0; i < o.Workers; i++ {
		// A worker connects to the master on loopback whatever it binds.
		h := bindHost
		if h == "0.0.0.0" || h == "*" || h == "" {
			h = "127.0.0.1"
		}
		w := exec.Command(bin, append([]string{"-f", file}, workerArgs(h, bindPort)...)...)
		w.Dir = dir
		w.Env = append([]string{}, env[:4]...)
		w.Env = append(w.Env, o.Locustfile.Env()...)
		w.Stdout, w.Stderr = logw, logw
		w.SysProcAttr = o.attr(pgid)
		if err := w.Start(); err != nil {
			syscall.Kill(-pgid, syscall.SIGTERM)
			return workers, fmt.Errorf("starting Locust worker %d: %v", i+1, err)
		}
		workers = append(workers, w)
	}
	return workers, nil
}

// runDir makes the run's directory, only root can write it (the run's
// group may read it), and writes the locustfile there.
func (o RunOptions) runDir() (dir, file string, err error) {
	dir, err = os.MkdirTemp(filepath.Join(o.Home, "locust"), "run-")
	if err != nil {
		return "", "", fmt.Errorf("making Locust's run directory: %v; run phptune setup --with-locust", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if o.GID >= 0 {
		if err := os.Chown(dir, -1, o.GID); err != nil {
			return "", "", err
		}
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		return "", "", err
	}
	file = filepath.Join(dir, "locustfile.py")
	if err := os.WriteFile(file, o.Locustfile.Source, 0o640); err != nil {
		return "", "", err
	}
	if o.GID >= 0 {
		if err := os.Chown(file, -1, o.GID); err != nil {
			return "", "", err
		}
	}
	return dir, file, nil
}

// masterAddress is where the master listens for its workers: --master-bind,
// or a free loopback port for a distributed run (port 0 otherwise).
func (o RunOptions) masterAddress(distributed bool) (host string, port int, err error) {
	bindHost, bindPort := "127.0.0.1", 0
	if o.MasterBind != "" {
		h, p, err := net.SplitHostPort(o.MasterBind)
		if err != nil {
			return "", 0, fmt.Errorf("--master-bind %q: want ADDR:PORT, e.g. 0.0.0.0:5557", o.MasterBind)
		}
		bindHost = h
		if bindPort, err = strconv.Atoi(p); err != nil || bindPort < 1 || bindPort > 65535 {
			return "", 0, fmt.Errorf("--master-bind %q: the port must be 1 to 65535", o.MasterBind)
		}
	} else if distributed {
		if bindPort, err = freePort(); err != nil {
			return "", 0, err
		}
	}
	return bindHost, bindPort, nil
}

// reapWorkers waits for the workers, which quit when the master tells
// them; one that does not is stopped with the process group pgid.
func reapWorkers(workers []*exec.Cmd, pgid int) {
	done := make(chan struct{})
	go func() {
		for _, w := range workers {
			w.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
	}
}

// attr runs a Locust process as the run's account in process group pgid
// (0: a new group led by the process itself).
func (o RunOptions) attr(pgid int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pgid: pgid, Pdeathsig: syscall.SIGKILL}
	if o.UID >= 0 && os.Geteuid() == 0 {
		a.Credential = &syscall.Credential{Uid: uint32(o.UID), Gid: uint32(o.GID), Groups: []uint32{}}
	}
	return a
}

func cpu(s *os.ProcessState) float64 {
	if s == nil {
		return 0
	}
	return (s.UserTime() + s.SystemTime()).Seconds()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last 64 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 64<<10 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-64<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
