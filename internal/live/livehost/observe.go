package livehost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/fpmstatus"
	"github.com/phptune/phptune/internal/watch/observe"
	"github.com/phptune/phptune/internal/watch/proc"
)

// Master is a running php-fpm master found in /proc.
type Master struct {
	PID  int
	Conf string // from its title: php-fpm: master process (CONF)
	UID  int    // the account it runs as
	// Exe is the binary it runs, as verified (/proc/PID/exe's target;
	// "" when it could not be read without root).
	Exe string
}

const masterTitle = "php-fpm: master process ("

// PHPBranch is the PHP branch of the master's verified binary
// (/usr/sbin/php-fpm8.2 -> 8.2), "" when its name does not say.
func (m Master) PHPBranch() string {
	if m.Exe == "" {
		return ""
	}
	v := strings.TrimPrefix(filepath.Base(strings.TrimSuffix(m.Exe, " (deleted)")), "php-fpm")
	if !knob.SameBranch(v, v) {
		return ""
	}
	return v
}

// Masters lists the php-fpm masters running on this machine, by the title
// php-fpm gives its master, run by root or by this process's user (every
// uid of the process) from a php-fpm binary only root can write. Any
// process can set that title: one of another account (a pool's worker
// code, say, or a set-uid program it started) is left out, so phptune
// never reads the configuration it names or signals it.
func Masters(fs *proc.FS) ([]Master, error) {
	out, err := findMasters(fs, masterTitle, "php-fpm", func(pid int, cmdline string, v verified) (Master, string, bool) {
		conf := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cmdline), masterTitle), ")")
		return Master{PID: pid, Conf: conf, UID: v.uid, Exe: v.exe}, conf, true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Conf < out[j].Conf })
	return out, err
}

// Observe reads what advise needs of one master: its pools as configured
// (prefix: its -p, "" for none), each pool's workers' PSS, its status page
// (when pm.status_path is set) and how long the master has run.
func Observe(ctx context.Context, fs *proc.FS, m Master, prefix string) ([]advise.Pool, error) {
	h, err := ReadFPM(m.Conf, prefix)
	if err != nil {
		return nil, err
	}
	workers := map[string][]int{}
	pids, err := fs.PIDs()
	if err != nil {
		return nil, err
	}
	for _, pid := range pids {
		st, err := fs.ReadStat(pid)
		if err != nil || st.PPID != m.PID {
			continue
		}
		cmdline, err := fs.ReadCmdline(pid)
		if name, ok := strings.CutPrefix(strings.TrimSpace(cmdline), "php-fpm: pool "); err == nil && ok {
			workers[name] = append(workers[name], pid)
		}
	}
	uptime := masterUptime(fs, m.PID)
	var out []advise.Pool
	for _, p := range h.Pools {
		ap := advise.Pool{Master: m.Conf, Name: p.Name, File: p.File, PM: p.PM, MaxChildren: p.MaxChildren, StatusPath: p.StatusPath, Uptime: uptime}
		for _, pid := range workers[p.Name] {
			if mem, err := fs.ReadMemory(pid); err == nil {
				ap.WorkerPSS = append(ap.WorkerPSS, mem.PSS)
			}
		}
		if p.StatusPath != "" {
			if st, err := poolStatus(ctx, p, m.UID); err != nil {
				ap.StatusError = err.Error()
			} else {
				ap.Status = st
				if n, ok := st.Extra["start since"].(int64); ok {
					ap.Uptime = time.Duration(n) * time.Second
				}
			}
		}
		out = append(out, ap)
	}
	return out, nil
}

// poolStatus reads a pool's full status page over FastCGI, after checking
// that its socket's listener runs as the master's account.
func poolStatus(ctx context.Context, p Pool, uid int) (*results.FPMStatus, error) {
	network, addr := "unix", strings.TrimPrefix(p.Listen, "unix:")
	if a, ok := strings.CutPrefix(p.Listen, "tcp:"); ok {
		network, addr = "tcp", a
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	body, err := observe.FPMFetcher(network, addr, p.StatusPath, uid)(ctx, "json&full")
	if err != nil {
		return nil, err
	}
	return fpmstatus.Parse(body)
}

// masterUptime is how long pid has run, from its start in clock ticks
// after boot and the system's uptime.
func masterUptime(fs *proc.FS, pid int) time.Duration {
	st, err := fs.ReadStat(pid)
	if err != nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(fs.Root(), "uptime"))
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration((up - float64(st.StartTime)/ticks) * float64(time.Second))
}

// HostMemory reads the machine's memory and the smallest cgroup memory
// limit among the masters.
func HostMemory(fs *proc.FS, masters []Master) (advise.Host, error) {
	m, err := fs.ReadMachine()
	if err != nil {
		return advise.Host{}, fmt.Errorf("reading the host's memory: %w", err)
	}
	h := advise.Host{MemTotal: m.MemTotal, MemAvailable: m.MemAvailable, SwapTotal: m.SwapTotal, SwapFree: m.SwapFree}
	for _, ms := range masters {
		if l, err := fs.ReadMemoryLimit(ms.PID); err == nil && l.Bytes > 0 && (h.CgroupLimit == 0 || l.Bytes < h.CgroupLimit) {
			h.CgroupLimit = l.Bytes
		}
	}
	return h, nil
}
