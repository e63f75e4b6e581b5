package livehost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/watch/proc"
)

// NginxDefaultConf is where Debian's nginx reads its configuration when
// started without -c (its --conf-path).
const NginxDefaultConf = "/etc/nginx/nginx.conf"

// Nginx is one nginx master of a host and how to check, reload and
// probe it.
type Nginx struct {
	Binary string // nginx
	Conf   string // its -c, or the default
	Prefix string // its -p ("" for the compiled-in one)
	// ErrorLog is its -e: where nginx writes errors before it has read
	// error_log (a host copy's, so that checking the copy never opens
	// the host's log). "" for the compiled-in one.
	ErrorLog string
	// Systemd names the service when systemd runs this master: reloads
	// go through systemctl.
	Systemd string
	Timeout time.Duration // each wait (default 15 s)
}

// NginxMaster is a running nginx master found in /proc.
type NginxMaster struct {
	PID    int
	Conf   string // -c from its title, or NginxDefaultConf
	Prefix string // -p, or ""
	Binary string // the first word after "master process"
	// Exe is the binary it runs, as verified (/proc/PID/exe's target;
	// "" when it could not be read without root).
	Exe string
}

const nginxMasterTitle = "nginx: master process "

// ParseNginxTitle reads a master's title, "nginx: master process
// /usr/sbin/nginx -c FILE -p PREFIX -g 'daemon on;'" (nginx joins its
// arguments with spaces), into its binary, -c and -p.
func ParseNginxTitle(title string) (m NginxMaster, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(title, "\x00 \n"), nginxMasterTitle)
	if !ok {
		return m, false
	}
	words := strings.Fields(rest)
	if len(words) == 0 {
		return m, false
	}
	m.Binary, m.Conf = words[0], NginxDefaultConf
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case (w == "-c" || w == "-p") && i+1 < len(words):
			if w == "-c" {
				m.Conf = words[i+1]
			} else {
				m.Prefix = words[i+1]
			}
			i++
		case strings.HasPrefix(w, "-c") && len(w) > 2:
			m.Conf = w[2:]
		case strings.HasPrefix(w, "-p") && len(w) > 2:
			m.Prefix = w[2:]
		}
	}
	if m.Prefix != "" && !filepath.IsAbs(m.Conf) {
		m.Conf = filepath.Join(m.Prefix, m.Conf)
	}
	// Paths are words of the title: a NUL or a control character in one
	// is no configuration nginx was started with.
	clean := !strings.ContainsFunc(m.Conf+m.Prefix, func(r rune) bool { return r < ' ' || r == 0x7f })
	return m, clean && filepath.IsAbs(m.Conf)
}

// NginxMasters lists the nginx masters running here, by their title,
// owned by root or by this process's user (a process of another account
// can take any title: it is left out, never read from nor signalled). A
// worker just forked, still titled as its parent, is left out too.
func NginxMasters(fs *proc.FS) ([]NginxMaster, error) {
	out, err := findMasters(fs, nginxMasterTitle, "nginx", func(pid int, cmdline string, v verified) (NginxMaster, string, bool) {
		m, ok := ParseNginxTitle(cmdline)
		m.PID, m.Exe = pid, v.exe
		return m, m.Conf, ok
	})
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, err
}

// Step returns n as a transaction step named "nginx".
func (n Nginx) Step() liveapply.Step {
	return liveapply.Step{Name: "nginx", Check: n.Check, Reload: n.Reload, Healthy: n.Healthy}
}

func (n Nginx) timeout() time.Duration {
	if n.Timeout > 0 {
		return n.Timeout
	}
	return 15 * time.Second
}

func (n Nginx) args(flag string) []string {
	args := []string{flag, "-c", n.Conf}
	if n.Prefix != "" {
		args = append(args, "-p", n.Prefix)
	}
	if n.ErrorLog != "" {
		args = append(args, "-e", n.ErrorLog)
	}
	return args
}

// maxDump bounds nginx -T's output read.
const maxDump = 32 << 20

// Dump runs nginx -T (which, run as root, only reads the configuration
// and tests it) and parses what it prints.
func (n Nginx) Dump(ctx context.Context) (*NginxConf, error) {
	cmd := exec.CommandContext(ctx, n.Binary, n.args("-T")...)
	var stdout limitedBuffer
	stdout.limit = maxDump
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -T -c %s: %s (%v)", n.Binary, n.Conf, lastLines(stderr.Bytes(), 3), err)
	}
	if stdout.over {
		return nil, fmt.Errorf("%s -T printed more than %d bytes", n.Binary, maxDump)
	}
	return ParseNginxDump(stdout.Bytes())
}

// limitedBuffer keeps at most limit bytes and says whether more came.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// Check runs nginx -t on the configuration as it is on disk.
func (n Nginx) Check(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, n.Binary, n.args("-t")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -t: %s (%v)", n.Binary, lastLines(out, 3), err)
	}
	return nil
}

// Master returns the pid of the one running nginx master of n.Conf (see
// NginxMasters: by title, owned by root; no pid file is read).
func (n Nginx) Master() (int, error) {
	fs, err := proc.Default()
	if err != nil {
		return 0, err
	}
	ms, err := NginxMasters(fs)
	if err != nil {
		return 0, err
	}
	var pids []int
	for _, m := range ms {
		if m.Conf == n.Conf {
			pids = append(pids, m.PID)
		}
	}
	return oneMaster("nginx", n.Conf, pids, "a binary upgrade under way")
}

// children lists every child process of master, whatever its title (a
// worker just forked still has its master's).
func children(fs *proc.FS, master int) map[int]bool {
	out := map[int]bool{}
	pids, err := fs.PIDs()
	if err != nil {
		return out
	}
	for _, pid := range pids {
		if st, err := fs.ReadStat(pid); err == nil && st.PPID == master {
			out[pid] = true
		}
	}
	return out
}

// NginxWorkers counts master's worker processes that accept connections.
func NginxWorkers(fs *proc.FS, master int) int { return len(workers(fs, master)) }

// workers lists the pids of master's worker processes that accept
// connections (not those of a former configuration shutting down).
func workers(fs *proc.FS, master int) map[int]bool {
	out := map[int]bool{}
	pids, err := fs.PIDs()
	if err != nil {
		return out
	}
	for _, pid := range pids {
		st, err := fs.ReadStat(pid)
		if err != nil || st.PPID != master {
			continue
		}
		if cmd, err := fs.ReadCmdline(pid); err == nil && strings.HasPrefix(cmd, "nginx: worker process") && !strings.Contains(cmd, "shutting down") {
			out[pid] = true
		}
	}
	return out
}

// Reload makes the master read its configuration again (systemctl reload
// when systemd runs it, otherwise SIGHUP to the verified master) and
// waits until the master has started new workers and its old ones have
// stopped accepting: nginx keeps its old workers, and logs why, when it
// cannot use the new configuration.
func (n Nginx) Reload(ctx context.Context) error {
	fs, err := proc.Default()
	if err != nil {
		return err
	}
	pid, err := n.Master()
	if err != nil {
		return err
	}
	// Every child now is of the old configuration, titled yet or not.
	old := children(fs, pid)
	if n.Systemd != "" {
		out, err := exec.CommandContext(ctx, "systemctl", "reload", n.Systemd).CombinedOutput()
		if err != nil {
			return fmt.Errorf("systemctl reload %s: %s (%v)", n.Systemd, lastLines(out, 3), err)
		}
	} else if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("signalling nginx's master %d: %v", pid, err)
	}
	deadline := time.Now().Add(n.timeout())
	for time.Now().Before(deadline) {
		now, err := n.Master()
		if err != nil {
			return fmt.Errorf("nginx's master %d is gone after the reload: %v", pid, err)
		}
		if now != pid {
			return fmt.Errorf("nginx's master %d was replaced by %d during the reload", pid, now)
		}
		// Done when new workers run and every old one has stopped
		// accepting (gone, or titled "shutting down").
		fresh, stale := 0, 0
		for w := range workers(fs, pid) {
			if old[w] {
				stale++
			} else {
				fresh++
			}
		}
		if fresh > 0 && stale == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("nginx's master %d started no new workers within %v: it kept the old configuration (see its error_log)", pid, n.timeout())
}

// Healthy checks that the master of n.Conf runs and has workers.
func (n Nginx) Healthy(ctx context.Context) error {
	pid, err := n.Master()
	if err != nil {
		return err
	}
	fs, err := proc.Default()
	if err != nil {
		return err
	}
	if len(workers(fs, pid)) == 0 {
		return errors.New("nginx's master has no workers")
	}
	return nil
}

// ReadConfFile reads a configuration file of at most 1 MiB, regular,
// without following a link at its last component.
func ReadConfFile(path string) ([]byte, error) {
	return saferead.Whole(path, maxConf, saferead.AnyOwner)
}
