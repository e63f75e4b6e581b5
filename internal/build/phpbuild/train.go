package phpbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
)

// TrainRecipe numbers the way training runs; it is part of a trained
// build's key. 3: the workers exit through exit() when training stops, so
// their profiles are written (recipes 1 and 2 kept the master's alone:
// php-fpm's default process_control_timeout of 0 let the master SIGTERM
// them at once); 2: the distro's fpm php.ini (production settings), in a
// lab for apps with a database. Builds of recipe 1 ran without a php.ini.
const TrainRecipe = 3

// DefaultTrain is the training workload when --train is not given.
const DefaultTrain = "strings"

// DefaultTrainDuration is how long the generator loads the instrumented
// php-fpm when --train-duration is not given.
const DefaultTrainDuration = 30 * time.Second

// ParseTrain reads APP[:WORKLOAD]. Apps without a database (hello,
// phpinfo, strings) train on their front page with a private docroot; apps
// with one (io, wordpress) train in a lab of their own (trainInLab), on
// any of the lab's built-in workloads (front; for WordPress also mix and
// comment).
func ParseTrain(s string) (app, spec string, err error) {
	app, spec, _ = strings.Cut(strings.TrimSpace(s), ":")
	if spec == "" {
		spec = "front"
	}
	a, err := apps.Lookup(app)
	if err != nil {
		return "", "", fmt.Errorf("--train %s: %v", s, err)
	}
	need, ok := workload.Builtin(spec)
	if !ok || (need != "" && need != app) || (!a.NeedsDB && spec != "front") {
		valid := "front"
		if app == "wordpress" {
			valid = "front, mix or comment"
		}
		return "", "", fmt.Errorf("--train %s: app %s trains on %s", s, app, valid)
	}
	return app, spec, nil
}

// trainDirs are the training's places: the docroot and configuration
// (root's, read by the lab account) and run/ (the lab account's: the
// socket, the pid file, php-fpm's log).
type trainDirs struct{ root, docroot, conf, run string }

func newTrainDirs(work string) trainDirs {
	t := filepath.Join(work, "train")
	return trainDirs{root: t, docroot: filepath.Join(t, "docroot"), conf: filepath.Join(t, "php-fpm.conf"), run: filepath.Join(t, "run")}
}

// FPMConfig is the php-fpm configuration training runs with: one static
// pool of workers on a unix socket, in the foreground, as the account
// that starts it (no user/group: it does not run as root).
//
// process_control_timeout lets the workers finish when the master is
// told to stop gracefully (SIGQUIT): with php-fpm's default of 0 the
// master follows its SIGQUIT to the workers with SIGTERM at once, which
// kills a worker before it exits through exit(), and an instrumented
// worker's profile — everything PHP executed — is written at exit. Only
// the master's profile (start-up code) was then left to train on.
func FPMConfig(runDir string, workers int) string {
	return fmt.Sprintf(`; phptune build: training pool
[global]
pid = %[1]s/php-fpm.pid
error_log = %[1]s/php-fpm.log
daemonize = no
process_control_timeout = 30s

[train]
listen = %[1]s/php-fpm.sock
listen.mode = 0600
pm = static
pm.max_children = %[2]d
catch_workers_output = yes
`, runDir, workers)
}

// TrainINI are the php settings of the training php-fpm: phpIni (the
// distro's fpm php.ini, as a lab reads it) or none (-n) when phpIni is "",
// then the build's own opcache (as a lab's php-fpm has one). The ini
// matters to what is trained: without one PHP runs with its development
// defaults (error_reporting E_ALL with deprecations shown, zend.assertions
// on), so a profile would weigh error paths that Debian's production
// php.ini never takes.
func TrainINI(extDir, opcache, phpIni string) []string {
	ini := []string{"-n"}
	if phpIni != "" {
		ini = []string{"-c", phpIni}
	}
	return append(ini, "-d", "extension_dir="+extDir, "-d", "zend_extension="+opcache,
		"-d", "opcache.enable=1", "-d", "opcache.validate_timestamps=1", "-d", "memory_limit=128M")
}

// train serves the app with the instrumented php-fpm (as the lab account,
// its own process group) and loads it with phptune's FastCGI generator;
// php-fpm is then stopped gracefully (SIGQUIT) so every worker writes its
// profile. It returns a line about the run.
func (b *builder) train(ctx context.Context, prof string, log io.Writer) (string, error) {
	app, spec, err := ParseTrain(b.o.Train)
	if err != nil {
		return "", err
	}
	a, _ := apps.Lookup(app)
	if a.NeedsDB {
		return b.trainInLab(ctx, prof, log, app, spec)
	}
	t := newTrainDirs(b.work)
	if err := os.MkdirAll(t.docroot, 0o755); err != nil {
		return "", err
	}
	if err := apps.Install(app, t.docroot); err != nil {
		return "", err
	}
	s := trainServe{docroot: t.docroot, requests: []load.Request{{Path: "/index.php"}}, host: "localhost", what: app + " front page"}
	return b.serveTraining(ctx, prof, log, s)
}

// trainServe is what a training serves: a docroot, the requests of the
// workload, the Host they carry, and the pool's environment and extra
// extensions (a lab's app needs its database settings and mysqli).
type trainServe struct {
	docroot  string
	requests []load.Request
	host     string
	env      []string // NAME=VALUE for the pool
	ini      []string // more -d settings (extension=...)
	what     string
}

// trainInLab brings up a lab of app (the distro's PHP serves it meanwhile,
// its MariaDB and the app's files are what training uses), and serves the
// lab's docroot with the instrumented php-fpm, as the lab account, loaded
// over FastCGI with the lab's workload: the same app, database and pages
// the lab measures. The extensions the build compiled are loaded from the
// build tree (instrumented too, so they are trained as well). The lab is
// taken down afterwards; it belongs to this process, so a killed build's
// lab is reaped by the next phptune command.
func (b *builder) trainInLab(ctx context.Context, prof string, log io.Writer, app, spec string) (string, error) {
	name := "train-" + randHex(4)
	fmt.Fprintf(b.o.Progress, "build: training in lab %s (%s, workload %s)\n", name, app, spec)
	// Through the stack session every measuring command opens: the lab
	// brought up, its workload parsed, and taken down however the
	// training ends.
	sess, err := stacksession.Open(ctx, stacksession.Options{Command: "build",
		Own:      lab.Options{Name: name, App: app, Progress: func(s string) { fmt.Fprintf(log, "lab %s: %s\n", name, s) }},
		Workload: spec, Say: func(format string, a ...any) { fmt.Fprintf(log, format+"\n", a...) }})
	if err != nil {
		return "", fmt.Errorf("training lab: %v", err)
	}
	defer sess.Close()
	l, w := sess.Lab, sess.Workload
	host := strings.TrimPrefix(l.URL, "http://")
	reqs := append([]load.Request(nil), w.Requests...)
	for i := range reqs {
		// The lab's app is a front controller behind nginx's try_files: its
		// pages all run index.php, as nginx passes them.
		if reqs[i].ScriptFilename == "" {
			reqs[i].ScriptFilename = l.ScriptFilename
		}
	}
	var ini []string
	for _, m := range b.trainModules() {
		ini = append(ini, "-d", "extension="+m)
	}
	s := trainServe{docroot: l.DocRoot, requests: reqs, host: host, env: l.PoolEnv(), ini: ini, what: app + " " + w.Name + " in a lab"}
	return b.serveTraining(ctx, prof, log, s)
}

// trainModules are the shared extensions the build compiled, from its
// tree, in the order the installed php-fpm loads them (opcache aside).
func (b *builder) trainModules() []string {
	enabled, err := EnabledModules(filepath.Join("/etc/php", b.phpName, "fpm", "conf.d"))
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range enabled {
		if slices.Contains(b.rec.Built, m.Name) {
			out = append(out, filepath.Join(b.src, "modules", m.Name+".so"))
		}
	}
	return out
}

// serveTraining runs the instrumented php-fpm on s, loads it, stops it
// gracefully and checks the profiles its processes wrote.
func (b *builder) serveTraining(ctx context.Context, prof string, log io.Writer, s trainServe) (string, error) {
	t := newTrainDirs(b.work)
	if err := b.writeTrainPool(t, s); err != nil {
		return "", err
	}
	cmd, err := b.startTrainFPM(t, s, log)
	if err != nil {
		return "", err
	}
	pgid := cmd.Process.Pid
	// Recorded (root's file) so an interrupted build's training is found.
	_ = os.WriteFile(filepath.Join(t.root, "pgid"), []byte(strconv.Itoa(pgid)), 0o644)
	w := waitFor(cmd)
	stopped := false
	defer func() {
		if !stopped {
			killGroup(pgid, 2*time.Second)
			<-w.done
		}
	}()
	sock := filepath.Join(t.run, "php-fpm.sock")
	uid := int(b.labAcct.UID)
	if err := waitSocket(ctx, sock, uid, w); err != nil {
		return "", err
	}
	info, err := b.loadTraining(ctx, log, s, sock, uid, t.run)
	if err != nil {
		return info, err
	}
	// SIGQUIT: graceful, workers exit through exit() and write their
	// profiles (SIGKILL would lose them).
	_ = syscall.Kill(pgid, syscall.SIGQUIT)
	select {
	case <-w.done:
	case <-time.After(60 * time.Second):
		return info, fmt.Errorf("the instrumented php-fpm did not stop within 60 s of SIGQUIT")
	case <-ctx.Done():
		return info, ctx.Err()
	}
	stopped = true
	killGroup(pgid, time.Second)
	return b.checkProfiles(ctx, prof, info)
}

// writeTrainPool makes the training's directories (run/ the lab
// account's) and writes its php-fpm.conf: the pool of FPMConfig with s's
// environment.
func (b *builder) writeTrainPool(t trainDirs, s trainServe) error {
	if err := os.MkdirAll(t.root, 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(t.run, 0o755); err != nil {
		return err
	}
	if uid, gid := b.labAcct.ids(); uid >= 0 {
		if err := os.Lchown(t.run, uid, gid); err != nil {
			return err
		}
	}
	if strings.ContainsAny(t.run, "\"'\n;= ") {
		return fmt.Errorf("the build cache's path %s has characters php-fpm.conf cannot carry; set PHPTUNE_HOME to a plain path", t.run)
	}
	conf := FPMConfig(t.run, 2)
	for _, kv := range s.env {
		name, value, _ := strings.Cut(kv, "=")
		if !validModName(name) || strings.ContainsAny(value, "\"\n") {
			return fmt.Errorf("training: the pool environment %q cannot be written", kv)
		}
		conf += fmt.Sprintf("env[%s] = \"%s\"\n", name, value)
	}
	return os.WriteFile(t.conf, []byte(conf), 0o644)
}

// startTrainFPM starts the instrumented php-fpm on t's configuration,
// with the distro's php.ini and s's extensions, at low priority, in a
// process group of its own, as the lab account.
func (b *builder) startTrainFPM(t trainDirs, s trainServe, log io.Writer) (*exec.Cmd, error) {
	// Debian's php.ini, as the lab reads it; its conf.d is not read (the
	// distro's extensions do not load into an older build: the build's own
	// come in s.ini), so the scan directory is an empty one of root's.
	phpIni := filepath.Join("/etc/php", b.phpName, "fpm", "php.ini")
	if st, err := os.Stat(phpIni); err != nil || !st.Mode().IsRegular() {
		phpIni = ""
	}
	scan := filepath.Join(t.root, "conf.d")
	if err := os.MkdirAll(scan, 0o755); err != nil {
		return nil, err
	}
	fpm := b.trainFPM
	if fpm == "" {
		fpm = filepath.Join(b.src, "sapi", "fpm", "php-fpm")
	}
	args := append([]string{"-F", "-y", t.conf}, TrainINI(b.rec.ExtDir, filepath.Join(b.src, "modules", "opcache.so"), phpIni)...)
	args = append(args, s.ini...)
	name, argv := lowPriority(fpm, args)
	cmd := exec.Command(name, argv...)
	cmd.Dir = t.run
	cmd.Env = []string{buildPath, "HOME=" + t.run, "LANG=C", "PHP_INI_SCAN_DIR=" + scan}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if b.labAcct.drop {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: b.labAcct.UID, Gid: b.labAcct.GID, Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the instrumented php-fpm: %v", err)
	}
	return cmd, nil
}

// loadTraining loads the php-fpm on sock (running as uid) with s's
// requests for the training's duration and returns a line about the run;
// most requests failing is an error (php-fpm's log is in runDir).
func (b *builder) loadTraining(ctx context.Context, log io.Writer, s trainServe, sock string, uid int, runDir string) (string, error) {
	res, err := load.Run(ctx, load.Options{
		Target: load.Target{Protocol: "fcgi", Network: "unix", Address: sock, DocRoot: s.docroot,
			Display: "fcgi://" + sock, CheckPeer: true, PeerUID: uid, Host: s.host},
		Requests:    s.requests,
		Connections: 2,
		Duration:    b.o.TrainDuration,
		KeepAlive:   true,
		Command:     "phptune build (training)",
	})
	if err != nil {
		return "", fmt.Errorf("training load: %v", err)
	}
	info := fmt.Sprintf("%s over FastCGI, %d requests in %.0f s (%.0f rps, %d errors)", s.what, res.Requests, res.DurationS, res.ThroughputRPS, res.Errors)
	fmt.Fprintln(log, info)
	if res.Requests == 0 || res.Errors*2 > res.Requests {
		return info, fmt.Errorf("training failed: %s; see php-fpm's log in %s", info, runDir)
	}
	return info, nil
}

// checkProfiles counts the profiles training wrote into prof, as the
// build account (root does not read the lab's directory), and refuses a
// training whose workers wrote none. It returns info with the count.
func (b *builder) checkProfiles(ctx context.Context, prof, info string) (string, error) {
	glob := b.trainProfiles
	if glob == "" {
		glob = "*.gcda"
	}
	out, err := b.output(ctx, prof, nil, "find", ".", "-maxdepth", "1", "-type", "f", "-name", glob, "-printf", "x")
	if err != nil {
		return info, fmt.Errorf("reading the profiles: %v", err)
	}
	if len(out) == 0 {
		return info, fmt.Errorf("training wrote no profile into %s", prof)
	}
	info += fmt.Sprintf("; %d profile files", len(out))
	if b.trainProfiles == "" {
		// GCC's profiles count the processes that wrote them: the
		// master alone means no worker's profile (what PHP ran) is in.
		runs, err := b.gcdaRuns(ctx, prof)
		if err != nil {
			return info, err
		}
		info += fmt.Sprintf(" from %d processes", runs)
		if runs < 2 {
			return info, fmt.Errorf("training's profile holds the run of %d process only: the php-fpm workers, which ran the PHP code, wrote none (killed before they could exit?); a build from it would be optimised for php-fpm's start-up alone", runs)
		}
	}
	return info, nil
}

// gcdaRuns reads, as the build account, how many process runs GCC merged
// into the profile of php-fpm's main object (gcov-dump's OBJECT_SUMMARY).
func (b *builder) gcdaRuns(ctx context.Context, prof string) (int, error) {
	out, err := b.output(ctx, prof, nil, "find", ".", "-maxdepth", "1", "-type", "f", "-name", "*#sapi#fpm#fpm#fpm_main.gcda")
	if err != nil {
		return 0, fmt.Errorf("finding fpm_main's profile: %v", err)
	}
	name := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	if name == "" {
		return 0, fmt.Errorf("training wrote no profile of php-fpm's main object (sapi/fpm/fpm/fpm_main.o) into %s", prof)
	}
	dump, err := b.output(ctx, prof, nil, "gcov-dump", name)
	if err != nil {
		return 0, fmt.Errorf("reading %s with gcov-dump: %v", name, err)
	}
	return ParseGcdaRuns(dump)
}

// ParseGcdaRuns finds the process count in gcov-dump's output
// ("OBJECT_SUMMARY runs=N, sum_max=M").
func ParseGcdaRuns(dump string) (int, error) {
	const key = "OBJECT_SUMMARY runs="
	i := strings.Index(dump, key)
	if i < 0 {
		return 0, errors.New("gcov-dump printed no OBJECT_SUMMARY runs=")
	}
	rest := dump[i+len(key):]
	j := 0
	for j < len(rest) && j < 10 && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil || (j < len(rest) && rest[j] >= '0' && rest[j] <= '9') {
		return 0, fmt.Errorf("gcov-dump's runs=%q: not a count", rest[:min(j+1, len(rest))])
	}
	return n, nil
}

// waited is a started process being waited for: done closes when it has
// exited and err is then cmd.Wait's result. A closed channel can be read
// by every waiter (a value sent once was taken by the first, and a
// deferred second read then blocked the build forever).
type waited struct {
	done chan struct{}
	err  error
}

func waitFor(cmd *exec.Cmd) *waited {
	w := &waited{done: make(chan struct{})}
	go func() {
		w.err = cmd.Wait()
		close(w.done)
	}()
	return w
}

// waitSocket waits until php-fpm (running as uid) accepts on sock.
func waitSocket(ctx context.Context, sock string, uid int, w *waited) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := peercred.Dial(dctx, "unix", sock, uid)
		cancel()
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-w.done:
			return fmt.Errorf("the php-fpm exited while starting (%v)", w.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the php-fpm did not accept on %s within 60 s: %v", sock, err)
		}
	}
}

// stopTraining kills the training php-fpm an interrupted build in work
// left, by the group recorded in root's pgid file, and only when its
// members still run the build's binary.
func (b *builder) stopTraining(work string) {
	t := newTrainDirs(work)
	data, err := saferead.Read(filepath.Join(t.root, "pgid"), 32, saferead.Mine)
	if err != nil {
		return
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pgid <= 1 {
		return
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pgid) + "/exe")
	if err == nil && strings.HasPrefix(exe, work+"/") {
		killGroup(pgid, 2*time.Second)
	}
}
