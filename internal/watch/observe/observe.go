// Package observe is phptune's observer: while a run loads a stack it samples,
// at a fixed interval, every process group of the stack (CPU from
// /proc/PID/stat, RSS/PSS/USS from smaps_rollup), the machine (CPU split with
// steal and softirq, run queue, context switches, free memory, swap, the
// cgroup memory limit), php-fpm's status page, the web server's own status
// page (nginx's stub_status, Apache's, lighttpd's or h2o's), MariaDB's
// global status and the kernel's accept queues of the stack's sockets, and
// derives the figures the tuner and the report need (CPU seconds per request,
// the memory cost of one more worker, imbalance, warnings).
//
// Typical use:
//
//	o, err := observe.New(cfg)
//	err = o.Start(ctx)
//	... load the stack ...
//	obs := o.Stop()
//	observe.Derive(obs, observe.Window{FromS: warmupEnd, ToS: end, Requests: n})
//
// Outside systems come in as values (a fetch function for the fpm status, a
// *sql.DB, a URL), so the package can be tested without them and does not
// care how the caller reaches php-fpm.
package observe

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/apachestatus"
	"github.com/phptune/phptune/internal/servers/status/h2ostatus"
	"github.com/phptune/phptune/internal/servers/status/lighttpdstatus"
	"github.com/phptune/phptune/internal/servers/status/nginxstatus"
	"github.com/phptune/phptune/internal/servers/unit"
	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/sockq"
	"github.com/phptune/phptune/internal/watch/speedprobe"
)

// Components a Root can name; each maps its process tree to groups.
const (
	// ComponentNginx: the master is "nginx master", its descendants
	// "nginx workers".
	ComponentNginx = "nginx"
	// ComponentFPM: the master is "php-fpm master", its descendants the
	// pool's workers ("php-fpm workers", or "php-fpm workers POOL" once
	// more than one pool has been seen).
	ComponentFPM = "php-fpm"
	// ComponentApache: Apache in front of php-fpm (event MPM). The parent
	// is "apache parent", its children "apache workers": web server only.
	ComponentApache = "apache"
	// ComponentApacheModPHP: Apache running PHP in its own children
	// (prefork + mod_php). The parent is "apache parent" (web server);
	// its children are "apache+php workers", which parse HTTP and run PHP
	// in the same process: their CPU and PSS cannot be split between the
	// two from /proc, so they count as the stack's PHP workers (per-worker
	// PSS, imbalance), the web server's part of them included.
	ComponentApacheModPHP = "apache-modphp"
	// ComponentUnit: NGINX Unit. Its main process, controller and the
	// application's prototype are "unit main", the router (HTTP, routing,
	// static files) "unit router": the web server. The application
	// processes are "unit php workers", the PHP workers.
	ComponentUnit = "unit"
	// ComponentLighttpd: lighttpd in front of php-fpm. The process started
	// is "lighttpd" (with server.max-worker 0 it serves everything); its
	// children, with max-worker > 0, are "lighttpd workers".
	ComponentLighttpd = "lighttpd"
	// ComponentCaddy: Caddy in front of php-fpm, one process (Go threads
	// inside): "caddy".
	ComponentCaddy = "caddy"
	// ComponentH2O: h2o in front of php-fpm, one process with its worker
	// threads (and a small helper that annotates crash backtraces, in the
	// same group): "h2o".
	ComponentH2O = "h2o"
	// ComponentMariaDB: the whole tree is "mariadbd".
	ComponentMariaDB = "mariadb"
	// ComponentRedis and ComponentMemcached: a site lab's own cache
	// servers (one process each): "redis-server", "memcached", part of
	// the stack beside the database.
	ComponentRedis     = "redis"
	ComponentMemcached = "memcached"
	// ComponentGenerator: the whole tree is "generator" (phptune's own
	// process while it loads, or an external wrk/ab).
	ComponentGenerator = "generator"
)

// Group names used in samples.
const (
	GroupNginxMaster  = "nginx master"
	GroupNginxWorkers = "nginx workers"
	GroupFPMMaster    = "php-fpm master"
	GroupFPMWorkers   = "php-fpm workers"
	GroupApacheParent = "apache parent"
	// GroupApacheWorkers are Apache's children in front of php-fpm.
	GroupApacheWorkers = "apache workers"
	// GroupApacheModPHPWorkers are Apache's children with PHP inside
	// (mod_php): the PHP workers of that server.
	GroupApacheModPHPWorkers = "apache+php workers"
	GroupUnitMain            = "unit main"
	GroupUnitRouter          = "unit router"
	GroupUnitWorkers         = "unit php workers"
	// GroupLighttpd is lighttpd's first process, GroupLighttpdWorkers the
	// workers it forks with server.max-worker > 0.
	GroupLighttpd        = "lighttpd"
	GroupLighttpdWorkers = "lighttpd workers"
	// GroupCaddy and GroupH2O are those servers' single processes.
	GroupCaddy   = "caddy"
	GroupH2O     = "h2o"
	GroupMariaDB = "mariadbd"
	// GroupRedis and GroupMemcached are a site lab's cache servers.
	GroupRedis     = "redis-server"
	GroupMemcached = "memcached"
	GroupGenerator = "generator"
	// GroupOther holds every process outside the roots' trees (CPU only):
	// neighbours, kernel threads, build jobs. It lets the groups add up
	// to the machine.
	GroupOther = "other"
)

// Root is a process whose tree forms one component of the stack.
type Root struct {
	// Component is one of the Component constants; any other name makes
	// one group of that name covering the whole tree.
	Component string
	PID       int
}

// FPMSource is how to read one pool's status page.
type FPMSource struct {
	// Pool labels errors until the page names the pool itself.
	Pool string
	// Fetch returns the status page body for a query string ("json&full").
	// It should ask php-fpm directly over FastCGI rather than through the
	// web server, which a saturated pool cannot answer through.
	Fetch func(ctx context.Context, query string) ([]byte, error)
	// MaxChildren is the pool's pm.max_children (the page does not say);
	// 0 when unknown.
	MaxChildren int
}

// Socket is a listening socket whose kernel accept queue is sampled.
type Socket struct {
	Owner string // "php-fpm", "nginx"
	// Addr is "unix:/path", "tcp:IP:PORT" or "IP:PORT".
	Addr string
	// Backlog is the backlog the configuration asks listen(2) for (0:
	// unknown). The kernel's own figure is below it when
	// net.core.somaxconn capped it, which the derived warnings say.
	Backlog int64
}

// UnixPage is a status page of a server on a unix socket: its path,
// asked with Host, from a listener the kernel says runs as UID.
type UnixPage struct {
	Socket, Host, Path string
	UID                int
}

// Config says what to observe.
type Config struct {
	// Interval between samples; 1 s when zero.
	Interval time.Duration
	Roots    []Root
	// Others adds the "other" group: every process outside the roots.
	Others         bool
	FPM            []FPMSource
	NginxStatusURL string
	// NginxStatusUnix, when set, is a sealed lab's stub_status, read on
	// its web server's unix socket instead of at a URL.
	NginxStatusUnix *UnixPage
	// ApacheStatusURL is Apache's mod_status page (without ?auto). Its
	// scoreboard has a slot per MaxRequestWorkers, so "every slot busy"
	// needs no knob.
	ApacheStatusURL string
	// UnitControl is NGINX Unit's control socket (its /status), read only
	// when its listener runs as UnitUID; UnitMaxProcesses is the
	// application's unit.processes (the page does not say).
	UnitControl      string
	UnitUID          int
	UnitMaxProcesses int64
	// LighttpdStatusURL is lighttpd's mod_status page (without ?auto),
	// LighttpdStatisticsURL its statistics page ("" to leave it out).
	LighttpdStatusURL     string
	LighttpdStatisticsURL string
	// H2OStatusURL is h2o's status handler (without /json).
	H2OStatusURL string
	// DB, when set, is used for SHOW GLOBAL STATUS (the account needs the
	// PROCESS privilege or none, depending on the server version).
	DB      *sql.DB
	Sockets []Socket
	// NetNS, when set, is the network namespace the Sockets listen in (a
	// sealed lab's, an open nsfs file the caller closes).
	NetNS *os.File
	// MemoryBudgetPct caps the CPU spent reading smaps_rollup, in percent
	// of one core (0.2 when zero). The kernel computes PSS by walking every
	// page table of the process, about 0.5-1 ms for a php-fpm worker with
	// opcache mapped, so with many workers not every process's memory is
	// read every interval: new processes first, then the oldest readings.
	// Memory changes slowly; CPU is still read for every process.
	MemoryBudgetPct float64
	// Warmup is left out of the derived figures that Stop computes.
	Warmup time.Duration
	// ProcRoot and SysRoot default to /proc and /sys.
	ProcRoot, SysRoot string
	// OnSample, when set, is called with each sample as it is taken (from
	// the sampling goroutine; keep it short).
	OnSample func(results.Sample)
}

type pkey struct {
	pid   int
	start uint64
}

// memEntry is a process's last memory reading.
type memEntry struct {
	mem proc.Memory
	at  time.Time
}

type owedCPU struct {
	ticks uint64
	group string
}

type procInfo struct {
	stat  proc.Stat
	group string
}

// Observer samples one stack. Its methods are not safe for concurrent use,
// except that Stop may be called while the goroutine started by Start runs.
type Observer struct {
	// fullMemory makes the next sample read every stack process's memory.
	fullMemory bool
	cfg        Config
	fs         *proc.FS
	sq         sockq.Reader
	addrs      []sockq.Addr
	ngx        *nginxstatus.Client
	apache     *apachestatus.Client
	unit       *unit.Control
	lighttpd   *lighttpdstatus.Client
	h2o        *h2ostatus.Client

	start     time.Time
	prevT     time.Time
	prevM     proc.Machine
	prev      map[int]procInfo
	pools     map[pkey]string // worker -> fpm pool name or Unit group, from cmdline
	poolNames []string
	limit     proc.MemoryLimit
	nLimit    int
	groups    []string // every group name seen, in first-seen order
	mem       map[pkey]memEntry
	// owed is, per parent, CPU of gone children already counted (seen)
	// that the parent's cutime did not yet show: the scan read the parent
	// before it reaped them. It is subtracted from the parent's growth in
	// the next interval only.
	owed    map[pkey]owedCPU
	memCost time.Duration // running mean CPU cost of one smaps_rollup read

	// probe measures the machine's speed while sampling runs (Start to
	// Stop); each sample records the median of its interval's readings.
	probe *speedprobe.Probe

	mu      sync.Mutex
	samples []results.Sample
	cancel  context.CancelFunc
	done    chan struct{}
}

// New checks cfg and prepares an observer; nothing is read until Start or
// Baseline.
func New(cfg Config) (*Observer, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Interval < 50*time.Millisecond {
		return nil, fmt.Errorf("observer interval %v is below 50ms; /proc CPU times move in 10ms ticks, so shorter intervals only measure noise", cfg.Interval)
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.SysRoot == "" {
		cfg.SysRoot = "/sys"
	}
	fs, err := proc.NewFS(cfg.ProcRoot, cfg.SysRoot)
	if err != nil {
		return nil, err
	}
	o := &Observer{cfg: cfg, fs: fs, sq: sockq.Reader{ProcRoot: cfg.ProcRoot, NetNS: cfg.NetNS}, pools: map[pkey]string{}, mem: map[pkey]memEntry{}}
	for _, s := range cfg.Sockets {
		a, err := sockq.ParseAddr(s.Addr)
		if err != nil {
			return nil, err
		}
		o.addrs = append(o.addrs, a)
	}
	if cfg.NginxStatusURL != "" {
		if o.ngx, err = nginxstatus.NewClient(cfg.NginxStatusURL); err != nil {
			return nil, err
		}
	}
	if p := cfg.NginxStatusUnix; p != nil {
		o.ngx = nginxstatus.NewUnixClient(p.Socket, p.Host, p.Path, p.UID)
	}
	if cfg.ApacheStatusURL != "" {
		if o.apache, err = apachestatus.NewClient(cfg.ApacheStatusURL); err != nil {
			return nil, err
		}
	}
	if cfg.UnitControl != "" {
		o.unit = unit.NewControl(cfg.UnitControl, cfg.UnitUID)
	}
	if cfg.LighttpdStatusURL != "" {
		if o.lighttpd, err = lighttpdstatus.NewClient(cfg.LighttpdStatusURL, cfg.LighttpdStatisticsURL); err != nil {
			return nil, err
		}
	}
	if cfg.H2OStatusURL != "" {
		if o.h2o, err = h2ostatus.NewClient(cfg.H2OStatusURL); err != nil {
			return nil, err
		}
	}
	for _, r := range cfg.Roots {
		if r.PID <= 0 {
			return nil, fmt.Errorf("observer root %q has pid %d; give the process id of its master", r.Component, r.PID)
		}
	}
	return o, nil
}

// Baseline takes the first reading that the first sample's rates are
// measured against.
func (o *Observer) Baseline() error {
	o.start = time.Now()
	cur, m, err := o.scan()
	if err != nil {
		return err
	}
	o.prev, o.prevM, o.prevT = cur, m, o.start
	return nil
}

// Elapsed is the time since the baseline in seconds, on the same clock as
// the samples' t_s (for building a Window).
func (o *Observer) Elapsed() float64 { return time.Since(o.start).Seconds() }

// Start takes the baseline and samples every interval in a goroutine until
// Stop or until ctx ends.
func (o *Observer) Start(ctx context.Context) error {
	if err := o.Baseline(); err != nil {
		return err
	}
	ctx, o.cancel = context.WithCancel(ctx)
	o.done = make(chan struct{})
	o.probe = speedprobe.Start(ctx, o.start)
	go func() {
		defer close(o.done)
		// One OS thread for the whole loop, so RUSAGE_THREAD measures the
		// sampler's own cost and not the load generator's.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		t := time.NewTicker(o.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s := o.Sample(ctx)
			if ctx.Err() != nil {
				return
			}
			o.mu.Lock()
			o.samples = append(o.samples, s)
			o.mu.Unlock()
			if o.cfg.OnSample != nil {
				o.cfg.OnSample(s)
			}
		}
	}()
	return nil
}

// Stop ends sampling and returns the observation with its derived figures
// computed over everything after Config.Warmup (without a request count;
// call Derive again with one).
//
// Stop takes one last sample, with every stack process's smaps_rollup read
// whatever the memory budget, so the CPU between the last tick and the end
// of the run is counted and no worker's memory is missing from the end of a
// trial.
func (o *Observer) Stop() *results.Observation {
	if o.cancel != nil {
		o.cancel()
		<-o.done
		if !o.prevT.IsZero() && time.Since(o.prevT) > 10*time.Millisecond {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			o.fullMemory = true
			s := o.Sample(ctx)
			o.fullMemory = false
			cancel()
			o.mu.Lock()
			o.samples = append(o.samples, s)
			o.mu.Unlock()
			if o.cfg.OnSample != nil {
				o.cfg.OnSample(s)
			}
		}
		o.probe.Stop()
	}
	if o.ngx != nil {
		o.ngx.Close()
	}
	if o.lighttpd != nil {
		o.lighttpd.Close()
	}
	if o.h2o != nil {
		o.h2o.Close()
	}
	if o.apache != nil {
		o.apache.Close()
	}
	if o.unit != nil {
		o.unit.Close()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	obs := &results.Observation{StartedAt: o.start, IntervalS: o.cfg.Interval.Seconds(), Samples: o.samples}
	Derive(obs, Window{FromS: o.cfg.Warmup.Seconds()})
	return obs
}
