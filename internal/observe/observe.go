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
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/apachestatus"
	"github.com/phptune/phptune/internal/fpmstatus"
	"github.com/phptune/phptune/internal/h2ostatus"
	"github.com/phptune/phptune/internal/lighttpdstatus"
	"github.com/phptune/phptune/internal/nginxstatus"
	"github.com/phptune/phptune/internal/proc"
	"github.com/phptune/phptune/internal/results"
	"github.com/phptune/phptune/internal/sockq"
	"github.com/phptune/phptune/internal/speedprobe"
	"github.com/phptune/phptune/internal/unit"
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
	GroupCaddy     = "caddy"
	GroupH2O       = "h2o"
	GroupMariaDB   = "mariadbd"
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

// Config says what to observe.
type Config struct {
	// Interval between samples; 1 s when zero.
	Interval time.Duration
	Roots    []Root
	// Others adds the "other" group: every process outside the roots.
	Others         bool
	FPM            []FPMSource
	NginxStatusURL string
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
	o := &Observer{cfg: cfg, fs: fs, sq: sockq.Reader{ProcRoot: cfg.ProcRoot}, pools: map[pkey]string{}, mem: map[pkey]memEntry{}}
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

// Samples returns a copy of the samples taken so far.
func (o *Observer) Samples() []results.Sample {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.samples)
}

// scan reads every process's stat and the machine.
func (o *Observer) scan() (map[int]procInfo, proc.Machine, error) {
	m, err := o.fs.ReadMachine()
	if err != nil {
		return nil, m, err
	}
	pids, err := o.fs.PIDs()
	if err != nil {
		return nil, m, err
	}
	cur := make(map[int]procInfo, len(pids))
	for _, pid := range pids {
		st, err := o.fs.ReadStat(pid)
		if err != nil {
			// Gone since the directory was listed: it is accounted
			// as a vanished process below.
			continue
		}
		cur[pid] = procInfo{stat: st}
	}
	o.assign(cur)
	return cur, m, nil
}

// assign labels each process with its group by walking the roots' trees.
// Roots are walked in order, the generator last, and a process already
// labelled is not relabelled: a test that starts php-fpm as its own child
// still sees php-fpm as php-fpm, not as part of the generator.
func (o *Observer) assign(cur map[int]procInfo) {
	children := make(map[int][]int, len(cur))
	for pid, p := range cur {
		children[p.stat.PPID] = append(children[p.stat.PPID], pid)
	}
	roots := slices.Clone(o.cfg.Roots)
	slices.SortStableFunc(roots, func(a, b Root) int {
		ga, gb := a.Component == ComponentGenerator, b.Component == ComponentGenerator
		switch {
		case ga == gb:
			return 0
		case gb:
			return -1
		default:
			return 1
		}
	})
	for _, r := range roots {
		rp, ok := cur[r.PID]
		if !ok || rp.group != "" {
			continue
		}
		rootGroup, childGroup := groupsOf(r.Component)
		rp.group = rootGroup
		cur[r.PID] = rp
		queue := slices.Clone(children[r.PID])
		for len(queue) > 0 && len(queue) < 1<<20 {
			pid := queue[0]
			queue = queue[1:]
			p := cur[pid]
			if p.group != "" {
				continue
			}
			p.group = childGroup
			switch childGroup {
			case GroupFPMWorkers:
				p.group = o.fpmGroup(p.stat)
			case GroupUnitWorkers:
				p.group = o.unitGroup(p.stat)
			}
			cur[pid] = p
			queue = append(queue, children[pid]...)
		}
	}
	if o.cfg.Others {
		for pid, p := range cur {
			if p.group == "" {
				p.group = GroupOther
				cur[pid] = p
			}
		}
	}
}

func groupsOf(component string) (root, child string) {
	switch component {
	case ComponentNginx:
		return GroupNginxMaster, GroupNginxWorkers
	case ComponentFPM:
		return GroupFPMMaster, GroupFPMWorkers
	case ComponentApache:
		return GroupApacheParent, GroupApacheWorkers
	case ComponentApacheModPHP:
		return GroupApacheParent, GroupApacheModPHPWorkers
	case ComponentUnit:
		return GroupUnitMain, GroupUnitWorkers
	case ComponentLighttpd:
		return GroupLighttpd, GroupLighttpdWorkers
	case ComponentCaddy:
		return GroupCaddy, GroupCaddy
	case ComponentH2O:
		return GroupH2O, GroupH2O
	case ComponentMariaDB:
		return GroupMariaDB, GroupMariaDB
	case ComponentGenerator:
		return GroupGenerator, GroupGenerator
	}
	return component, component
}

// fpmGroup names a php-fpm worker's group from its pool ("php-fpm: pool
// www" in its argv). The cmdline is read once per process.
func (o *Observer) fpmGroup(st proc.Stat) string {
	k := pkey{st.PID, st.StartTime}
	pool, ok := o.pools[k]
	if !ok {
		c, _ := o.fs.ReadCmdline(st.PID)
		_, pool, _ = strings.Cut(c, "pool ")
		pool = strings.TrimSpace(pool)
		o.pools[k] = pool
		if pool != "" && !slices.Contains(o.poolNames, pool) {
			o.poolNames = append(o.poolNames, pool)
		}
	}
	if len(o.poolNames) > 1 && pool != "" {
		return GroupFPMWorkers + " " + pool
	}
	return GroupFPMWorkers
}

// unitGroup names one of Unit's processes from its title ("unit:
// router", "unit: "app" application"), read once per process.
func (o *Observer) unitGroup(st proc.Stat) string {
	k := pkey{st.PID, st.StartTime}
	g, ok := o.pools[k]
	if !ok {
		c, _ := o.fs.ReadCmdline(st.PID)
		switch {
		case strings.HasPrefix(c, "unit: router"):
			g = GroupUnitRouter
		case strings.HasPrefix(c, "unit: ") && strings.HasSuffix(strings.TrimSpace(c), " application"):
			g = GroupUnitWorkers
		default: // controller, prototype, discovery
			g = GroupUnitMain
		}
		o.pools[k] = g
	}
	return g
}

// IsFPMWorkers reports whether a group name is a php-fpm worker group.
func IsFPMWorkers(name string) bool { return strings.HasPrefix(name, GroupFPMWorkers) }

// IsPHPWorkers reports whether a group is one of PHP's worker pools: php-fpm's
// workers, or Apache's children with mod_php.
func IsPHPWorkers(name string) bool {
	return IsFPMWorkers(name) || name == GroupApacheModPHPWorkers || name == GroupUnitWorkers
}

// fetched is what the concurrent readers bring back: raw bodies, parsed on
// the sampling thread so their CPU is counted as the sampler's.
type fetched struct {
	fpm      [][]byte
	fpmErr   []error
	ngx      *results.NginxStatus
	ngxErr   error
	apache   *results.ApacheStatus
	apErr    error
	unit     *unit.Status
	unitErr  error
	light    *results.LighttpdStatus
	lightErr error
	h2o      *results.H2OStatus
	h2oErr   error
	db       *results.MariaDBStatus
	dbErr    error
	elapsed  time.Duration
}

func (o *Observer) fetchAll(ctx context.Context) *fetched {
	f := &fetched{fpm: make([][]byte, len(o.cfg.FPM)), fpmErr: make([]error, len(o.cfg.FPM))}
	// A saturated pool answers its status page only when a worker frees
	// up; waiting longer than most of an interval would delay the sample.
	ctx, cancel := context.WithTimeout(ctx, o.cfg.Interval*8/10)
	defer cancel()
	var wg sync.WaitGroup
	for i, src := range o.cfg.FPM {
		wg.Go(func() {
			f.fpm[i], f.fpmErr[i] = src.Fetch(ctx, "json&full")
		})
	}
	if o.ngx != nil {
		wg.Go(func() { f.ngx, f.ngxErr = o.ngx.Fetch(ctx) })
	}
	if o.apache != nil {
		// With every slot busy Apache answers only when one frees up, as
		// a saturated fpm pool does: the error is the sample's gap.
		wg.Go(func() { f.apache, f.apErr = o.apache.Fetch(ctx) })
	}
	if o.unit != nil {
		// Unit's router answers its control socket whatever the
		// application processes are doing.
		wg.Go(func() { f.unit, f.unitErr = o.unit.Status(ctx) })
	}
	if o.lighttpd != nil {
		wg.Go(func() { f.light, f.lightErr = o.lighttpd.Fetch(ctx) })
	}
	if o.h2o != nil {
		wg.Go(func() { f.h2o, f.h2oErr = o.h2o.Fetch(ctx) })
	}
	if o.cfg.DB != nil {
		wg.Go(func() { f.db, f.dbErr = mariadbStatus(ctx, o.cfg.DB) })
	}
	wg.Wait()
	return f
}

// Sample takes one sample now, with rates since the previous one (or the
// baseline). Nothing it cannot read is an error: the sample records what
// failed in Errors and leaves the figure out.
func (o *Observer) Sample(ctx context.Context) results.Sample {
	// RUSAGE_THREAD only measures the sampler if it stays on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ru0 unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru0)
	if o.prev == nil {
		if err := o.Baseline(); err != nil {
			return results.Sample{Errors: []string{err.Error()}}
		}
	}
	fch := make(chan *fetched, 1)
	go func() { fch <- o.fetchAll(ctx) }()

	now := time.Now()
	s := results.Sample{TS: now.Sub(o.start).Seconds(), DTS: now.Sub(o.prevT).Seconds()}
	cur, m, err := o.scan()
	if err != nil {
		s.Errors = append(s.Errors, err.Error())
		<-fch
		return s
	}
	s.Machine = machineSample(o.prevM, m, s.DTS)
	if o.nLimit%30 == 0 {
		// The limit rarely changes; re-read it now and then.
		for _, r := range o.cfg.Roots {
			if r.Component == ComponentFPM {
				if l, err := o.fs.ReadMemoryLimit(r.PID); err == nil {
					o.limit = l
				}
				break
			}
		}
	}
	o.nLimit++
	s.Machine.CgroupMemLimitB = o.limit.Bytes
	s.Groups = o.groupSamples(cur, s.DTS, busyTicks(o.prevM, m), &s.Errors)
	s.Queues = o.queues(&s.Errors)

	f := <-fch
	for i, src := range o.cfg.FPM {
		st := results.FPMStatus{Pool: src.Pool}
		err := f.fpmErr[i]
		if err == nil {
			var p *results.FPMStatus
			if p, err = fpmstatus.Parse(f.fpm[i]); err == nil {
				st = *p
			}
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("no answer within %v: every worker is busy (the kernel listen queue shows the backlog)", o.cfg.Interval*8/10)
			}
			st.Error = err.Error()
		}
		s.FPM = append(s.FPM, st)
	}
	if o.ngx != nil {
		if f.ngxErr != nil {
			s.Errors = append(s.Errors, f.ngxErr.Error())
		} else {
			s.Nginx = f.ngx
		}
	}
	if o.apache != nil {
		if f.apErr != nil {
			s.Errors = append(s.Errors, f.apErr.Error())
		} else {
			s.Apache = f.apache
		}
	}
	if o.unit != nil {
		if f.unitErr != nil {
			s.Errors = append(s.Errors, f.unitErr.Error())
		} else {
			s.Unit = unitSample(f.unit, o.cfg.UnitMaxProcesses)
		}
	}
	if o.lighttpd != nil {
		if f.lightErr != nil {
			s.Errors = append(s.Errors, f.lightErr.Error())
		} else {
			s.Lighttpd = f.light
		}
	}
	if o.h2o != nil {
		if f.h2oErr != nil {
			s.Errors = append(s.Errors, f.h2oErr.Error())
		} else {
			s.H2O = f.h2o
		}
	}
	if o.cfg.DB != nil {
		if f.dbErr != nil {
			s.Errors = append(s.Errors, f.dbErr.Error())
		} else {
			s.MariaDB = f.db
		}
	}
	if o.probe != nil {
		from := 0.0
		if !o.prevT.IsZero() {
			from = o.prevT.Sub(o.start).Seconds()
		}
		s.SpeedProbeMs, s.SpeedProbeN = speedprobe.Median(o.probe.Readings(), from, s.TS)
	}
	o.prev, o.prevM, o.prevT = cur, m, now

	var ru1 unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru1)
	if s.DTS > 0 {
		used := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
		s.SamplerCPUPct = used.Seconds() / s.DTS * 100
	}
	return s
}

func tv(t unix.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

func machineSample(a, b proc.Machine, dt float64) results.MachineSample {
	d := func(x, y float64) float64 { return max(0, y-x) }
	total := d(a.CPU.Total(), b.CPU.Total())
	pct := func(x float64) float64 {
		if total <= 0 {
			return 0
		}
		return x / total * 100
	}
	ms := results.MachineSample{
		// Nice is user time at another priority; IRQ is tiny and kernel.
		UserPct:       pct(d(a.CPU.User, b.CPU.User) + d(a.CPU.Nice, b.CPU.Nice)),
		SystemPct:     pct(d(a.CPU.System, b.CPU.System) + d(a.CPU.IRQ, b.CPU.IRQ)),
		SoftIRQPct:    pct(d(a.CPU.SoftIRQ, b.CPU.SoftIRQ)),
		StealPct:      pct(d(a.CPU.Steal, b.CPU.Steal)),
		IdlePct:       pct(d(a.CPU.Idle, b.CPU.Idle) + d(a.CPU.IOWait, b.CPU.IOWait)),
		Cores:         b.Cores,
		RunQueue:      int64(b.ProcsRunning),
		MemAvailableB: b.MemAvailable,
		SwapUsedB:     max(0, b.SwapTotal-b.SwapFree),
	}
	if dt > 0 && b.ContextSwitches >= a.ContextSwitches {
		ms.ContextSwitchesS = float64(b.ContextSwitches-a.ContextSwitches) / dt
	}
	return ms
}

// busyTicks is the machine's CPU time spent other than idle, waiting or
// stolen between two readings, in UserHZ ticks.
func busyTicks(a, b proc.Machine) float64 {
	busy := func(c proc.CPUTimes) float64 { return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ }
	return max(0, busy(b.CPU)-busy(a.CPU)) * proc.UserHZ
}

// groupSamples turns two scans into per-group CPU and memory. busy is the
// machine's busy CPU in the interval in ticks (0: unknown), the ceiling of
// the CPU credited to processes that were not seen.
func (o *Observer) groupSamples(cur map[int]procInfo, dt, busy float64, errs *[]string) []results.GroupSample {
	type acc struct {
		g        results.GroupSample
		user     uint64
		sys      uint64
		tail     uint64
		detail   bool
		hasStack bool
	}
	byName := map[string]*acc{}
	get := func(name string) *acc {
		a := byName[name]
		if a == nil {
			a = &acc{g: results.GroupSample{Name: name}, detail: IsPHPWorkers(name)}
			byName[name] = a
			if !slices.Contains(o.groups, name) {
				o.groups = append(o.groups, name)
			}
		}
		return a
	}
	// Roots that are configured always have their groups, even empty, so a
	// series has no holes; a missing root is reported.
	for _, r := range o.cfg.Roots {
		rg, cg := groupsOf(r.Component)
		get(rg)
		if cg != GroupFPMWorkers || len(o.poolNames) <= 1 {
			get(cg)
		}
		if _, ok := cur[r.PID]; !ok {
			*errs = append(*errs, fmt.Sprintf("%s (pid %d) is not running", r.Component, r.PID))
		}
	}
	if o.cfg.Others {
		get(GroupOther)
	}
	pct := func(ticks uint64) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(ticks) / proc.UserHZ / dt * 100
	}
	pids := make([]int, 0, len(cur))
	for pid, p := range cur {
		if p.group != "" {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	o.refreshMemory(cur, pids, dt, errs)
	for _, pid := range pids {
		p := cur[pid]
		a := get(p.group)
		u, sy := p.stat.UTime, p.stat.STime
		if old, ok := o.prev[pid]; ok && old.stat.StartTime == p.stat.StartTime {
			u, sy = sub(u, old.stat.UTime), sub(sy, old.stat.STime)
		}
		// else: born since the previous sample, all its CPU is new.
		a.user += u
		a.sys += sy
		a.g.Processes++
		if p.group == GroupOther {
			continue
		}
		me, ok := o.mem[pkey{pid, p.stat.StartTime}]
		if !ok {
			continue
		}
		mem := me.mem
		a.g.RSSB += mem.RSS
		a.g.PSSB += mem.PSS
		a.g.USSB += mem.USS
		if a.detail {
			a.g.PerProcess = append(a.g.PerProcess, results.ProcessSample{
				PID: pid, CPUPct: pct(u + sy), RSSB: mem.RSS, PSSB: mem.PSS, USSB: mem.USS})
		}
	}
	// Processes that exited since the previous sample: their last moments
	// of CPU were not seen, but their parent's cutime/cstime grew by their
	// whole lifetime when it reaped them. What was not yet counted is that
	// growth minus what was seen, credited to the children's group.
	type reaped struct {
		seen  uint64
		group string
	}
	// Processes gone since the previous sample, and the CPU last seen of
	// each one's subtree of gone processes: a gone process's own time and
	// its cutime then, plus that of gone children it reaped in between
	// (a php-fpm master stopped with its workers), which the parent's
	// cutime now also includes.
	gone := map[int]procInfo{}
	kids := map[int][]int{}
	for pid, old := range o.prev {
		if p, ok := cur[pid]; ok && p.stat.StartTime == old.stat.StartTime {
			continue
		}
		gone[pid] = old
		kids[old.stat.PPID] = append(kids[old.stat.PPID], pid)
	}
	var subtree func(pid, depth int) uint64
	subtree = func(pid, depth int) uint64 {
		old := gone[pid]
		n := old.stat.CPUTicks() + old.stat.CUTime + old.stat.CSTime
		if depth < 64 {
			for _, k := range kids[pid] {
				n += subtree(k, depth+1)
			}
		}
		return n
	}
	vanished := map[int]*reaped{}
	for pid, old := range gone {
		if _, parentGone := gone[old.stat.PPID]; parentGone || old.group == "" {
			continue // counted in its gone parent's subtree
		}
		r := vanished[old.stat.PPID]
		if r == nil {
			r = &reaped{group: old.group}
			vanished[old.stat.PPID] = r
		}
		r.seen += subtree(pid, 0)
	}
	owed := map[pkey]owedCPU{}
	for ppid, p := range cur {
		old, ok := o.prev[ppid]
		if !ok || old.stat.StartTime != p.stat.StartTime || p.group == "" {
			continue
		}
		k := pkey{ppid, p.stat.StartTime}
		grew := sub(p.stat.CUTime+p.stat.CSTime, old.stat.CUTime+old.stat.CSTime)
		// Children nobody saw (born and reaped within the interval)
		// belong to the parent's worker group.
		group := p.group
		switch group {
		case GroupFPMMaster:
			group = GroupFPMWorkers
		case GroupNginxMaster:
			group = GroupNginxWorkers
		case GroupLighttpd:
			group = GroupLighttpdWorkers
		case GroupApacheParent:
			group = GroupApacheWorkers
			for _, r := range o.cfg.Roots {
				if r.Component == ComponentApacheModPHP {
					group = GroupApacheModPHPWorkers
				}
			}
		case GroupUnitMain:
			// The prototype reaps the application processes.
			group = GroupUnitWorkers
		}
		var seen, seenNow uint64
		if r := vanished[ppid]; r != nil {
			seenNow, group = r.seen, r.group
		}
		prevOwed := o.owed[k]
		if prevOwed.ticks > 0 && seenNow == 0 {
			group = prevOwed.group
		}
		seen = seenNow + prevOwed.ticks
		if grew < seen {
			// The parent was read before it reaped children seen
			// gone: their time shows in its cutime next interval.
			// Only this interval's debt is carried, once.
			if left := min(seen-grew, seenNow); left > 0 {
				owed[k] = owedCPU{ticks: left, group: group}
			}
			continue
		}
		// Split between user and system is unknown here; it is
		// counted as user time.
		get(group).tail += grew - seen
	}
	o.owed = owed
	// The unseen CPU cannot exceed what the machine spent beyond what the
	// processes' own counters show. When it does, a parent was read after
	// it reaped a child that the same scan still read alive, and its
	// cutime growth repeats the child's whole life: scale the tails down.
	// The machine's tick counts and the processes' times differ by a few
	// percent, hence the margin.
	if busy > 0 {
		var direct, tails float64
		for pid, p := range cur {
			c := p.stat.CPUTicks()
			if old, ok := o.prev[pid]; ok && old.stat.StartTime == p.stat.StartTime {
				c = sub(c, old.stat.CPUTicks())
			}
			direct += float64(c)
		}
		for _, a := range byName {
			tails += float64(a.tail)
		}
		if room := 1.1*busy + 2 - direct; tails > max(room, 0) {
			f := max(room, 0) / tails
			for _, a := range byName {
				a.tail = uint64(float64(a.tail) * f)
			}
		}
	}
	out := make([]results.GroupSample, 0, len(byName))
	slices.SortStableFunc(o.groups, func(a, b string) int { return groupRank(a) - groupRank(b) })
	for _, name := range o.groups {
		a, ok := byName[name]
		if !ok {
			continue
		}
		a.g.UserPct = pct(a.user + a.tail)
		a.g.SystemPct = pct(a.sys)
		out = append(out, a.g)
	}
	return out
}

// refreshMemory re-reads smaps_rollup for as many stack processes as the
// budget allows: never-read processes first, then the stalest readings.
func (o *Observer) refreshMemory(cur map[int]procInfo, pids []int, dt float64, errs *[]string) {
	live := make(map[pkey]bool, len(pids))
	var todo []pkey
	for _, pid := range pids {
		p := cur[pid]
		if p.group == GroupOther {
			continue
		}
		k := pkey{pid, p.stat.StartTime}
		live[k] = true
		todo = append(todo, k)
	}
	for k := range o.mem {
		if !live[k] {
			delete(o.mem, k)
		}
	}
	slices.SortStableFunc(todo, func(a, b pkey) int {
		return o.mem[a].at.Compare(o.mem[b].at) // zero time (never read) first
	})
	budget := o.cfg.MemoryBudgetPct
	if budget <= 0 {
		budget = 0.2
	}
	n := len(todo)
	if o.memCost > 0 && dt > 0 && !o.fullMemory {
		n = int(budget / 100 * dt / o.memCost.Seconds())
	}
	n = max(n, 1)
	var ru0, ru1 unix.Rusage
	now := time.Now()
	read := 0
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru0)
	for _, k := range todo {
		if read >= n {
			break
		}
		m, err := o.fs.ReadMemory(k.pid)
		read++
		if err != nil {
			if !errors.Is(err, proc.ErrGone) && len(*errs) < 10 {
				*errs = append(*errs, err.Error())
			}
			continue
		}
		o.mem[k] = memEntry{mem: m, at: now}
	}
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru1)
	if read > 0 {
		c := (tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)) / time.Duration(read)
		if o.memCost == 0 {
			o.memCost = c
		} else {
			o.memCost = (o.memCost*3 + c) / 4
		}
		o.memCost = max(o.memCost, 10*time.Microsecond)
	}
}

// groupRank orders groups the way the stack is layered: web server, PHP,
// database, then anything else, the generator and the rest of the machine.
func groupRank(name string) int {
	switch {
	case name == GroupNginxMaster:
		return 0
	case name == GroupNginxWorkers:
		return 1
	case name == GroupApacheParent:
		return 0
	case name == GroupApacheWorkers:
		return 1
	case name == GroupApacheModPHPWorkers:
		return 3
	case name == GroupUnitMain:
		return 0
	case name == GroupUnitRouter:
		return 1
	case name == GroupUnitWorkers:
		return 3
	case name == GroupLighttpd, name == GroupCaddy, name == GroupH2O:
		return 0
	case name == GroupLighttpdWorkers:
		return 1
	case name == GroupFPMMaster:
		return 2
	case IsFPMWorkers(name):
		return 3
	case name == GroupMariaDB:
		return 4
	case name == GroupGenerator:
		return 6
	case name == GroupOther:
		return 7
	}
	return 5
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func (o *Observer) queues(errs *[]string) []results.ListenQueue {
	if len(o.addrs) == 0 {
		return nil
	}
	wantUnix, wantTCP := false, false
	for _, a := range o.addrs {
		wantUnix = wantUnix || a.Network == "unix"
		wantTCP = wantTCP || a.Network == "tcp"
	}
	ls, err := o.sq.Listeners(wantUnix, wantTCP)
	if err != nil {
		*errs = append(*errs, err.Error())
	}
	var out []results.ListenQueue
	for i, a := range o.addrs {
		all := sockq.FindAll(ls, a)
		if len(all) == 0 {
			if err == nil {
				*errs = append(*errs, fmt.Sprintf("no listening socket %s (%s) found in the kernel's tables", a.Address, o.cfg.Sockets[i].Owner))
			}
			continue
		}
		// With SO_REUSEPORT (nginx.reuseport) each worker has a socket
		// of its own: the connections waiting are their sum, and each
		// socket's backlog is the limit one queue reaches.
		q := results.ListenQueue{Socket: a.Address, Owner: o.cfg.Sockets[i].Owner, Backlog: all[0].Backlog, AskedBacklog: o.cfg.Sockets[i].Backlog}
		for _, l := range all {
			q.Queued += l.Queued
			q.Backlog = min(q.Backlog, l.Backlog)
		}
		if len(all) > 1 {
			q.Sockets = len(all)
		}
		out = append(out, q)
	}
	return out
}

// mariadbStatus reads the SHOW GLOBAL STATUS subset. The observer's own
// connection and query are subtracted from the thread counts.
func mariadbStatus(ctx context.Context, db *sql.DB) (*results.MariaDBStatus, error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN "+
		"('Threads_connected','Threads_running','Questions','Slow_queries','Innodb_row_lock_waits')")
	if err != nil {
		return nil, fmt.Errorf("MariaDB SHOW GLOBAL STATUS: %w", err)
	}
	defer rows.Close()
	var st results.MariaDBStatus
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("MariaDB SHOW GLOBAL STATUS: %w", err)
		}
		switch strings.ToLower(name) {
		case "threads_connected":
			st.ThreadsConnected = max(0, v-1)
		case "threads_running":
			st.ThreadsRunning = max(0, v-1)
		case "questions":
			st.Questions = v
		case "slow_queries":
			st.SlowQueries = v
		case "innodb_row_lock_waits":
			st.InnodbRowLockWaits = v
		}
	}
	return &st, rows.Err()
}
