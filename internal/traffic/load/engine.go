package load

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/base/netnsdial"
	"github.com/phptune/phptune/internal/base/peercred"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/traffic/fcgi"
	"github.com/phptune/phptune/internal/traffic/httpwire"
)

// Connection states.
const (
	stClosed     = iota // no socket (about to dial, or idle without keep-alive)
	stIdle              // open, kept alive, waiting for the open model's next send
	stConnecting        // non-blocking connect in progress
	stWriting           // request partly written
	stReading           // waiting for the response
)

// conn is one connection slot. Its socket changes when the server closes it
// or without keep-alive; gen tells events of an old socket from the new one.
type conn struct {
	fd      int
	gen     int32
	state   uint8
	reused  bool // the socket already carried a response (a silent close is then not an error)
	retried bool
	out     bool // EPOLLOUT is in the socket's epoll mask
	got     bool // response bytes arrived
	measure bool // the request belongs to the measured part
	req     int  // index into run.reqs
	written int
	sentAt  int64 // ns since start; the intended time in the open model
	ioAt    int64 // ns since start of the current connect or write, for timeouts
	hp      httpwire.Parser
	fp      fcgi.Parser
}

// run is the shared, read-only part of a Run plus the global counters.
type run struct {
	o      Options
	fcgi   bool
	family int
	rawSA  rawAddr // the target's socket address, encoded for the raw connect
	reqs   [][]byte
	noBody []bool
	cum    []uint32 // cumulative weights
	totalW uint32
	lenRef []atomic.Int64
	start  time.Time
	// warmEnd and end bound the measured window (ns since start; end is
	// math.MaxInt64 with N). With Options.OnMeasure they are set when the
	// callback returns (see markMeasured); until then both read
	// math.MaxInt64, so nothing counts before the callback has run.
	warmEnd  atomic.Int64
	end      atomic.Int64
	nsecs    int // seconds in the measured part (0 with N)
	stop     atomic.Bool
	claimed  atomic.Int64
	lastDone atomic.Int64 // ns of the last measured completion (N mode)
	pacer    Pacer        // includes the warm-up
	// sockets, when the target is in another network namespace, makes
	// every connection's socket there; nil makes them here (rawSocket).
	sockets *netnsdial.SocketMaker
	// checkPeer: each unix connection checks its listener's uid.
	checkPeer bool
	peerFail  atomic.Bool
	// expect is Options.Expect compiled; nil keeps no body byte.
	expect *regexp.Regexp
	// unexpected describes the first body that did not match, for the
	// warning (written once, under unexpectedOnce).
	unexpectedOnce atomic.Bool
	unexpected     string
}

type loop struct {
	r        *run
	id       int
	epfd     int
	conns    []conn
	idle     []int32
	buf      []byte
	events   []unix.EpollEvent
	st       *stats
	rng      uint64
	inflight int
	sent     int64
	opened   int64
	deferred []int32 // slots whose connect failed: restarted next iteration
	nextK    int64   // open model: this loop's next request index
	unsent   int64   // open model: scheduled in the window but never sent
	unfin    int64   // measured requests still unanswered at the end
	pwait2   bool
	// finalPace: the open model's last sends at the window's end are done.
	finalPace bool
	now       int64
	err       error
}

// Run generates load as o says and returns the measured result. It returns
// an error for invalid options (before connecting), when the fd limit is too
// low, or when no connection could be made at all; failing requests are
// results, not errors. Cancelling ctx ends the run early and returns what
// was measured so far.
func Run(ctx context.Context, o Options) (*results.Bench, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.defaults(usableCPUs())
	spare := 0
	if o.Target.NetNS != nil {
		spare = socketsAhead
	}
	if err := CheckFDLimit(o.Connections + spare); err != nil {
		return nil, err
	}
	r := &run{o: o, fcgi: o.Target.Protocol == "fcgi"}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	if o.Target.NetNS != nil {
		m, err := netnsdial.NewSocketMaker(o.Target.NetNS, r.family, socketsAhead)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", o.Target.Display, err)
		}
		defer m.Close()
		r.sockets = m
	}

	loops := make([]*loop, o.Threads)
	for i := range loops {
		l, err := newLoop(r, i)
		if err != nil {
			for _, l := range loops[:i] {
				unix.Close(l.epfd)
			}
			return nil, err
		}
		loops[i] = l
	}

	b := newBench(o)

	// One P per loop plus one for everything else (see epollWait).
	if want := o.Threads + 1; runtime.GOMAXPROCS(0) < want {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(want))
	}
	r.start = time.Now()
	b.StartedAt = r.start.UTC()
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Not locked to its thread: the runtime preempts a busy
			// goroutine every 10 ms, and a locked one then needs two
			// futex hand-offs to resume; an unlocked one just continues.
			l.run()
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	win, cancelled := r.watch(ctx, loops, finished)
	wall := time.Since(r.start)
	if r.peerFail.Load() {
		return nil, fmt.Errorf("stopped: the listener on %s stopped being the lab's account (uid %d); the socket was replaced, so no request was sent to it", o.Target.Address, o.Target.PeerUID)
	}

	all := make([]*stats, len(loops))
	var unsent, unfin int64
	for i, l := range loops {
		all[i] = l.st
		b.RequestsSent += l.sent
		b.ConnectionsOpened += l.opened
		unsent += l.unsent
		unfin += l.unfin
		if l.err != nil {
			return nil, l.err
		}
	}
	fill(b, all)
	b.RequestsUnsent, b.RequestsUnanswered = unsent, unfin

	measuredFigures(b, o, win, r, wall, cancelled)
	r.warn(b, all, unsent, unfin)
	if b.Requests > 0 && b.Requests == b.ErrorsByClass[ClassConnectRefused] {
		return b, fmt.Errorf("every connection to %s was refused: is the server running and listening there? (start a lab with: phptune lab up)", o.Target.Display)
	}
	if cancelled && ctx.Err() != nil {
		return b, ctx.Err()
	}
	return b, nil
}

// newBench is the record of a run of o, before it runs.
func newBench(o Options) *results.Bench {
	b := &results.Bench{
		SchemaVersion: results.SchemaVersion, Kind: results.KindBench,
		ID:      fmt.Sprintf("bench-%s-%d", time.Now().UTC().Format("20060102T150405"), os.Getpid()),
		Command: o.Command, Target: o.Target.Display, Protocol: o.Target.Protocol,
		Model: "closed", Connections: o.Connections, KeepAlive: o.KeepAlive,
		WarmupS: o.Warmup.Seconds(), Threads: o.Threads,
	}
	if o.Pacer != nil {
		b.Model = "open"
		b.RateAskedRPS = MeanRate(o.Pacer, o.Duration)
		b.RateSchedule = o.Pacer.String()
	}

	return b
}

// cpuWindow is the generator's CPU seconds and the machine's CPU ticks
// (total and idle) at the start and the end of the measured part.
type cpuWindow struct {
	cpu0, cpuEnd                 float64
	tot0, idle0, totEnd, idleEnd uint64
}

// watch waits for the loops to finish (finished closes), marks the
// measured window's CPU figures, reports progress every second and stops
// the loops when ctx is cancelled (cancelled true).
func (r *run) watch(ctx context.Context, loops []*loop, finished <-chan struct{}) (win cpuWindow, cancelled bool) {
	o := &r.o
	// CPU and machine idle time are sampled over the measured part only.
	win.cpu0 = CPUTime()
	win.tot0, win.idle0 = cpuTimes()
	measuring := o.Warmup == 0
	var warmTimer <-chan time.Time
	if !measuring {
		warmTimer = time.After(o.Warmup)
	}
	var endTimer <-chan time.Time
	if o.Duration > 0 {
		endTimer = time.After(o.Warmup + o.Duration)
	}
	markEnd := func() {
		if win.cpuEnd == 0 {
			win.cpuEnd = CPUTime()
			win.totEnd, win.idleEnd = cpuTimes()
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var lastReq int64
	lastTick := time.Now()
wait:
	for {
		select {
		case <-finished:
			break wait
		case <-ctx.Done():
			if !cancelled {
				cancelled = true
				markEnd()
				r.stop.Store(true)
			}
		case <-warmTimer:
			if o.OnMeasure != nil {
				endTimer = r.markMeasured()
			}
			win.cpu0 = CPUTime()
			win.tot0, win.idle0 = cpuTimes()
			measuring = true
		case <-endTimer:
			markEnd()
		case now := <-tick.C:
			if o.Progress == nil {
				continue
			}
			var req, errs, p99 int64
			for _, l := range loops {
				req += l.st.liveReq.Load()
				errs += l.st.liveErr.Load()
				p99 = max(p99, l.st.liveP99.Load())
			}
			o.Progress(Progress{
				Elapsed: now.Sub(r.start), Warmup: !measuring, Requests: req, Errors: errs,
				RPS: float64(req-lastReq) / now.Sub(lastTick).Seconds(), P99LastMs: float64(p99) / 1000,
			})
			lastReq, lastTick = req, now
		}
	}
	markEnd()
	return win, cancelled
}

// markMeasured calls Options.OnMeasure and opens the measured window
// when it returns: the window starts then (never before the warm-up's
// end) and keeps its length. A lab marks its error logs there, so every
// request the generator counts was sent after the mark, however late the
// clock's goroutine ran (CI saw 1,032 of 87,309 502s counted but logged
// before a mark taken a timer's latency late). It returns the timer for
// the window's end (nil without a duration).
func (r *run) markMeasured() <-chan time.Time {
	r.o.OnMeasure()
	at := max(int64(r.o.Warmup), int64(time.Since(r.start)))
	if r.o.Duration <= 0 {
		r.warmEnd.Store(at)
		return nil
	}
	// end first: a loop that sees the window open sees where it ends.
	r.end.Store(at + int64(r.o.Duration))
	r.warmEnd.Store(at)
	return time.After(time.Duration(at+int64(r.o.Duration)) - time.Since(r.start))
}

// measuredFigures sets b's measured duration, throughput and generator
// CPU from the run's window (wall: the whole run's time; cancelled: it was
// interrupted), and warns when the generator was the bottleneck.
func measuredFigures(b *results.Bench, o Options, win cpuWindow, r *run, wall time.Duration, cancelled bool) {
	// The measured duration: the window, or for -n the time to the last
	// answer; shortened when the run was interrupted.
	switch {
	case o.Duration > 0:
		b.DurationS = o.Duration.Seconds()
		if cancelled {
			b.DurationS = math.Max(0, wall.Seconds()-o.Warmup.Seconds())
		}
	default:
		b.DurationS = math.Max(0, float64(r.lastDone.Load()-r.warmEnd.Load())/1e9)
	}
	if b.DurationS > 0 {
		b.ThroughputRPS = float64(b.Requests-b.Errors) / b.DurationS
		if b.Model == "open" {
			b.RateAchievedRPS = float64(b.Requests) / b.DurationS
		}
	}
	b.Generator.CPUSeconds = math.Max(0, win.cpuEnd-win.cpu0)
	if b.Generator.CPUSeconds > 0 {
		b.Generator.RequestsPerCPUSecond = float64(b.Requests) / b.Generator.CPUSeconds
	}
	// Saturated: the generator used most of the cores it ran on while the
	// machine still had idle CPU, so the server was waiting for it.
	if b.DurationS > 0 && win.totEnd > win.tot0 {
		genCores := b.Generator.CPUSeconds / b.DurationS
		machineIdle := float64(win.idleEnd-win.idle0) / float64(win.totEnd-win.tot0)
		b.MachineIdlePct = 100 * machineIdle
		if genCores > 0.85*float64(o.Threads) && machineIdle > 0.10 {
			b.Generator.Saturated = true
			b.Warnings = append(b.Warnings, fmt.Sprintf(
				"the generator was saturated: its %d thread(s) used %.2f cores while the machine was %.0f%% idle; the result measures phptune, not the server (add --threads or --cpus, or fewer connections per thread)",
				o.Threads, genCores, 100*machineIdle))
		}
	}
}

// warn adds the run's warnings to b: requests never sent or never
// answered, re-sent, with PHP's stderr, redirected, or not the expected
// body.
func (r *run) warn(b *results.Bench, all []*stats, unsent, unfin int64) {
	o := &r.o
	if unsent > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf(
			"%d requests scheduled in the measured part were never sent because all %d connections were busy: the server could not keep up with the asked rate (raise -c to queue more)",
			unsent, o.Connections))
	}
	if unfin > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d requests sent in the measured part were still unanswered when the run ended and are not counted", unfin))
	}
	var retried int64
	for _, s := range all {
		retried += s.retried
	}
	if retried > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d requests were re-sent because the server closed a kept-alive connection before answering", retried))
	}
	if b.ErrorsByClass[ClassFCGIStderr] > 0 && !o.FailOnStderr {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d responses carried php-fpm stderr output (PHP notices or errors); see them with phptune fcgi-style requests or the pool's error log", b.ErrorsByClass[ClassFCGIStderr]))
	}
	if w := RedirectWarning(b); w != "" {
		b.Warnings = append(b.Warnings, w)
	}
	if n := b.ErrorsByClass[ClassUnexpectedBody]; n > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d responses did not match --expect %q (matched against the first %d KiB of each body); the first: %s",
			n, o.Expect, ExpectBodyLimit>>10, r.unexpected))
	}
}

// prepare resolves the address and serialises every request once.
func (r *run) prepare() error {
	o := &r.o
	family, target, err := sockaddrOf(o.Target.Network, o.Target.Address)
	if err != nil {
		return err
	}
	r.family = family
	a, err := newRawAddr(target)
	if err != nil {
		return fmt.Errorf("target address %q: %w", o.Target.Address, err)
	}
	r.rawSA = a
	if r.expect, err = CompileExpect(o.Expect); err != nil {
		return err
	}
	r.checkPeer = o.Target.CheckPeer && r.family == unix.AF_UNIX
	if r.checkPeer {
		// Say it clearly up front; every connection checks again.
		c, err := peercred.Dial(context.Background(), "unix", o.Target.Address, o.Target.PeerUID)
		if err != nil {
			return err
		}
		c.Close()
	}
	r.lenRef = make([]atomic.Int64, len(o.Requests))
	for i, q := range o.Requests {
		r.lenRef[i].Store(-1)
		w := q.Weight
		if w == 0 {
			w = 1
		}
		r.totalW += uint32(w)
		r.cum = append(r.cum, r.totalW)
		method := q.Method
		if method == "" {
			method = "GET"
		}
		r.noBody = append(r.noBody, method == "HEAD")
		if r.fcgi {
			r.reqs = append(r.reqs, fcgiRequest(q, method, o.Target, o.KeepAlive))
		} else {
			r.reqs = append(r.reqs, httpRequest(q, method, o.Target.Host, o.KeepAlive))
		}
	}
	r.schedule()
	return nil
}

// sockaddrOf resolves a target's address: a unix socket's path, or
// IP:PORT on tcp (no DNS).
func sockaddrOf(network, address string) (family int, sa unix.Sockaddr, err error) {
	switch network {
	case "unix":
		return unix.AF_UNIX, &unix.SockaddrUnix{Name: address}, nil
	case "tcp":
		host, portS, ok := strings.Cut(address, ":")
		if i := strings.LastIndexByte(address, ':'); i >= 0 {
			host, portS, ok = address[:i], address[i+1:], true
		}
		port, err := strconv.Atoi(portS)
		if !ok || err != nil || port <= 0 || port > 65535 {
			return 0, nil, fmt.Errorf("target address %q: want IP:PORT", address)
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		switch {
		case ip == nil:
			return 0, nil, fmt.Errorf("target address %q: the host must be an IP address (the generator does no DNS)", address)
		case ip.To4() != nil:
			sa := &unix.SockaddrInet4{Port: port}
			copy(sa.Addr[:], ip.To4())
			return unix.AF_INET, sa, nil
		default:
			sa := &unix.SockaddrInet6{Port: port}
			copy(sa.Addr[:], ip.To16())
			return unix.AF_INET6, sa, nil
		}
	}
	return 0, nil, nil
}

// fcgiRequest serialises request q as FastCGI records for php-fpm: the
// script is q's, or the path's file under the target's document root.
func fcgiRequest(q Request, method string, t Target, keepAlive bool) []byte {
	script := q.ScriptFilename
	if script == "" {
		p, _, _ := strings.Cut(q.Path, "?")
		script = strings.TrimSuffix(t.DocRoot, "/") + p
	}
	target := "http://" + t.Host + q.Path
	params := fcgi.Params(method, target, script, q.Header, q.Body)
	return fcgi.AppendRequest(nil, 1, keepAlive, fcgi.SortedPairs(params), q.Body)
}

// httpRequest serialises request q as HTTP/1.1 to host. The generator
// writes Host, Content-Length and Connection itself, and a User-Agent
// unless q has one.
func httpRequest(q Request, method, host string, keepAlive bool) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, q.Path, host)
	hasUA := false
	for name, vals := range q.Header {
		switch http.CanonicalHeaderKey(name) {
		case "Host", "Content-Length", "Connection":
			continue
		case "User-Agent":
			hasUA = true
		}
		for _, v := range vals {
			fmt.Fprintf(&sb, "%s: %s\r\n", name, v)
		}
	}
	if !hasUA {
		sb.WriteString("User-Agent: phptune\r\n")
	}
	if !keepAlive {
		sb.WriteString("Connection: close\r\n")
	}
	if len(q.Body) > 0 || method == "POST" || method == "PUT" {
		fmt.Fprintf(&sb, "Content-Length: %d\r\n", len(q.Body))
	}
	sb.WriteString("\r\n")
	sb.Write(q.Body)
	return []byte(sb.String())
}

// schedule sets when the warm-up and the run end, and the pacer (a
// schedule's rate held through the warm-up).
func (r *run) schedule() {
	o := &r.o
	r.warmEnd.Store(int64(o.Warmup))
	r.end.Store(math.MaxInt64)
	if o.Duration > 0 {
		r.end.Store(int64(o.Warmup + o.Duration))
		r.nsecs = int((o.Duration + time.Second - 1) / time.Second)
	}
	if o.OnMeasure != nil && o.Warmup > 0 {
		r.warmEnd.Store(math.MaxInt64)
		r.end.Store(math.MaxInt64)
	}
	if o.Pacer != nil {
		r.pacer = o.Pacer
		if o.Warmup > 0 {
			r.pacer = warmupPacer{p: o.Pacer, warmup: o.Warmup}
		}
	}
}

// warmupPacer runs the warm-up at the schedule's starting rate, then the
// schedule itself, so a ramp starts with the measured part.
type warmupPacer struct {
	p      Pacer
	warmup time.Duration
}

func (w warmupPacer) kw() int64 { return int64(w.p.RateAt(0) * w.warmup.Seconds()) }

func (w warmupPacer) Intended(k int64) time.Duration {
	if kw := w.kw(); k >= kw {
		return w.warmup + w.p.Intended(k-kw)
	}
	return time.Duration(float64(k) / w.p.RateAt(0) * 1e9)
}

func (w warmupPacer) RateAt(t time.Duration) float64 { return w.p.RateAt(t - w.warmup) }
func (w warmupPacer) String() string                 { return w.p.String() }

func newLoop(r *run, id int) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	n := r.o.Connections / r.o.Threads
	if id < r.o.Connections%r.o.Threads {
		n++
	}
	l := &loop{
		r: r, id: id, epfd: epfd, conns: make([]conn, n),
		buf: make([]byte, 64<<10), events: make([]unix.EpollEvent, 512),
		st: newStats(), rng: uint64(id)*0x9E3779B97F4A7C15 + uint64(time.Now().UnixNano()) | 1,
		pwait2: true,
	}
	for i := range l.conns {
		c := &l.conns[i]
		c.fd = -1
		if r.expect != nil {
			c.hp.KeepBody, c.fp.KeepBody = ExpectBodyLimit, ExpectBodyLimit
		}
		c.hp.Reset()
		c.fp.ReqID = 1
		c.fp.MaxBody = 0
		c.fp.Reset()
	}
	return l, nil
}

func (l *loop) clock() int64 {
	l.now = int64(time.Since(l.r.start))
	return l.now
}

// run is the event loop.
func (l *loop) run() {
	defer unix.Close(l.epfd)
	r := l.r
	open := r.pacer != nil
	l.clock()
	if open {
		for i := range l.conns {
			l.idle = append(l.idle, int32(i))
		}
	} else {
		for i := range l.conns {
			l.send(int32(i))
		}
	}
	lastScan := l.now
	drainUntil := int64(-1)
	for {
		now := l.clock()
		end := r.end.Load()
		stopping := r.stop.Load() || now >= end
		if stopping && drainUntil < 0 {
			if r.stop.Load() {
				drainUntil = now
			} else {
				drainUntil = now + int64(min(r.o.Timeout, r.o.Drain))
			}
		}
		l.restartDeferred(open)
		if open && !r.stop.Load() && (!stopping || !l.finalPace) {
			// Also once in the iteration that finds the window over:
			// requests due before its end since the last iteration go out
			// on the connections free now (paceSends sends nothing due
			// at or after the end), else they would count as unsent
			// though a connection was free. Only once: requests queued
			// for a connection are not sent during the drain.
			l.finalPace = stopping
			l.paceSends()
		}
		if stopping && (l.inflight == 0 || now >= drainUntil) {
			break
		}
		if !stopping && !open && r.o.N > 0 && l.inflight == 0 && r.claimed.Load() >= r.o.N {
			break
		}
		if now-lastScan >= int64(50*time.Millisecond) {
			l.scanTimeouts()
			lastScan = now
		}
		n, err := epollWait(l.epfd, l.events, l.waitFor(now, end, stopping, open), &l.pwait2)
		if err != nil && err != unix.EINTR {
			l.err = fmt.Errorf("epoll_wait: %w", err)
			break
		}
		if n > 0 {
			l.clock()
		}
		for _, ev := range l.events[:n] {
			c := &l.conns[ev.Fd]
			if ev.Pad != c.gen || c.fd < 0 {
				continue // an event of a socket closed earlier in this batch
			}
			l.event(int32(ev.Fd), ev.Events)
		}
	}
	l.closeAll()
	if open {
		l.countUnsent()
	}
}

// restartDeferred restarts the slots whose connect failed, once per
// iteration and at most every millisecond: a refusing server must not
// turn the loop into a recursion or a spin.
func (l *loop) restartDeferred(open bool) {
	if len(l.deferred) == 0 {
		return
	}
	d := l.deferred
	l.deferred = nil
	for _, i := range d {
		if open {
			l.park(i)
		} else {
			l.send(i)
		}
	}
}

// waitFor is how long the loop may wait for events at now: until the
// next request is due (open model), a deferred restart, or the end of
// the window (end), and at most 50 ms, the timeouts' scan.
func (l *loop) waitFor(now, end int64, stopping, open bool) int64 {
	r := l.r
	wait := int64(50 * time.Millisecond)
	if open && len(l.idle) > 0 {
		next := int64(scaledPacer{r.pacer, int64(r.o.Threads), int64(l.id)}.at(l.nextK))
		wait = max(0, min(wait, next-now))
	}
	if len(l.deferred) > 0 {
		wait = min(wait, int64(time.Millisecond))
	}
	if end != math.MaxInt64 && !stopping {
		wait = max(0, min(wait, end-now))
	}
	return wait
}

// closeAll counts the measured requests left unfinished, then closes
// every connection.
func (l *loop) closeAll() {
	for i := range l.conns {
		c := &l.conns[i]
		if c.state >= stConnecting && c.measure {
			l.unfin++
		}
		if c.fd >= 0 {
			rawClose(c.fd)
			c.fd = -1
		}
	}
}

// countUnsent counts the requests the schedule wanted sent in the
// measured window that never were.
func (l *loop) countUnsent() {
	r := l.r
	sp := scaledPacer{r.pacer, int64(r.o.Threads), int64(l.id)}
	upTo := min(r.end.Load(), l.now)
	due := countBefore(sp, upTo)
	first := max(l.nextK, countBefore(sp, min(r.warmEnd.Load(), upTo)))
	l.unsent = max(0, due-first)
}

// paceSends sends every request the schedule has made due, while there are
// idle connections. A request waiting for a connection keeps its intended
// time: its queueing shows in its latency.
func (l *loop) paceSends() {
	sp := scaledPacer{l.r.pacer, int64(l.r.o.Threads), int64(l.id)}
	for len(l.idle) > 0 {
		at := int64(sp.at(l.nextK))
		end := l.r.end.Load()
		if at > l.now || at >= end {
			return
		}
		i := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		l.nextK++
		c := &l.conns[i]
		c.sentAt = at
		c.measure = at >= l.r.warmEnd.Load() && at < end
		c.retried = false
		l.pick(c)
		l.begin(i)
	}
}

// pick chooses the request kind by weight.
func (l *loop) pick(c *conn) {
	if len(l.r.reqs) == 1 {
		c.req = 0
		return
	}
	// xorshift64*: cheap and good enough to draw weights.
	l.rng ^= l.rng >> 12
	l.rng ^= l.rng << 25
	l.rng ^= l.rng >> 27
	v := uint32((l.rng * 2685821657736338717) >> 32 % uint64(l.r.totalW))
	for i, cw := range l.r.cum {
		if v < cw {
			c.req = i
			return
		}
	}
}

// send starts the next request of the closed model on slot i.
func (l *loop) send(i int32) {
	r := l.r
	c := &l.conns[i]
	end := r.end.Load()
	if r.stop.Load() || l.now >= end {
		l.park(i)
		return
	}
	c.measure = l.now >= r.warmEnd.Load() && l.now < end
	if r.o.N > 0 && c.measure {
		if r.claimed.Add(1) > r.o.N {
			l.park(i)
			return
		}
	}
	c.sentAt = l.now
	c.retried = false
	l.pick(c)
	l.begin(i)
}

// park leaves slot i without a request: idle in the open model, closed in
// the closed model once the run is over.
func (l *loop) park(i int32) {
	c := &l.conns[i]
	if c.fd >= 0 && (l.r.pacer == nil || !l.r.o.KeepAlive) {
		rawClose(c.fd)
		c.fd = -1
	}
	if c.fd >= 0 {
		c.state = stIdle
	} else {
		c.state = stClosed
	}
	if l.r.pacer != nil {
		l.idle = append(l.idle, i)
	}
}

// begin writes the chosen request on slot i, connecting first if needed.
func (l *loop) begin(i int32) {
	c := &l.conns[i]
	l.inflight++
	l.sent++
	c.written, c.got = 0, false
	if l.r.fcgi {
		c.fp.Reset()
	} else {
		c.hp.Reset()
		c.hp.NoBody = l.r.noBody[c.req]
	}
	if c.fd < 0 {
		l.dial(i)
		return
	}
	l.write(i)
}

// socketsAhead is how many sockets a run whose target is in another
// network namespace keeps made ahead: its maker's thread wakes once per
// half of them, not once per connection.
const socketsAhead = 128

// takeSocket is rawSocket for a target in another network namespace: a
// socket made there by the run's maker, or why none was.
func (r *run) takeSocket() (int, syscall.Errno) {
	fd, err := r.sockets.Take()
	if err == nil {
		return fd, 0
	}
	if errno, ok := err.(syscall.Errno); ok {
		return -1, errno
	}
	return -1, unix.EBADF // the maker is closed: the run is over
}

func (l *loop) dial(i int32) {
	c := &l.conns[i]
	var fd int
	var errno syscall.Errno
	if l.r.sockets == nil {
		fd, errno = rawSocket(l.r.family)
	} else {
		fd, errno = l.r.takeSocket()
	}
	if errno != 0 {
		// Out of fds or ports: the same class as a failed connect.
		l.fail(i, cConnectOther)
		return
	}
	c.fd = fd
	c.gen++
	c.reused = false
	c.ioAt = l.now
	l.opened++
	// No EPOLLOUT yet: a request fits the send buffer, and with it
	// registered every freed send buffer (the handshake, each ACK) would
	// wake the loop for nothing. A write that cannot finish asks for it
	// (wantOut).
	c.out = false
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: i, Pad: c.gen}
	if rawEpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev) != 0 {
		l.fail(i, cConnectOther)
		return
	}
	switch rawConnect(fd, l.r.rawSA) {
	case 0:
		if l.r.checkPeer && !l.peerOK(fd) {
			l.fail(i, cConnectOther)
			return
		}
		l.write(i)
	case unix.EINPROGRESS, unix.EINTR:
		// On loopback the handshake has usually completed by now: try to
		// write at once and save a trip through epoll. (A signal that
		// interrupts a non-blocking connect leaves it in progress.)
		c.state = stConnecting
		l.write(i)
	case unix.EAGAIN: // unix socket: listen queue full
		l.fail(i, cConnectBacklog)
	case unix.ECONNREFUSED, unix.ENOENT:
		l.fail(i, cConnectRefused)
	case unix.ETIMEDOUT:
		l.fail(i, cConnectTimeout)
	default:
		l.fail(i, cConnectOther)
	}
}

// peerOK checks the listener of a new unix connection; a stranger stops the
// run (Run reports it) and the connection is never written to.
func (l *loop) peerOK(fd int) bool {
	cred, err := peercred.FromFD(fd)
	if err == nil && peercred.CheckFD(cred, l.r.o.Target.PeerUID, l.r.o.Target.Address) == nil {
		return true
	}
	l.r.peerFail.Store(true)
	l.r.stop.Store(true)
	return false
}

func (l *loop) write(i int32) {
	c := &l.conns[i]
	req := l.r.reqs[c.req]
	for c.written < len(req) {
		n, e := rawWrite(c.fd, req[c.written:])
		switch e {
		case 0:
			c.written += n
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if c.state != stConnecting || c.written > 0 {
				// Bytes went out: the connection is up, whatever
				// state the dial left.
				c.state = stWriting
			}
			if c.written == 0 && c.state != stConnecting {
				c.ioAt = l.now
			}
			l.wantOut(i)
			return // EPOLLOUT (edge) resumes
		case unix.ENOTCONN:
			// Still connecting; EPOLLOUT will tell.
			c.state = stConnecting
			l.wantOut(i)
			return
		case unix.ECONNREFUSED:
			l.fail(i, cConnectRefused)
		default:
			l.ioFail(i, e)
		}
		return
	}
	c.state = stReading
	c.ioAt = l.now
}

// wantOut adds EPOLLOUT to slot i's epoll mask, once per socket. Modifying
// the mask re-checks readiness, so a socket that became writable in
// between still reports it.
func (l *loop) wantOut(i int32) {
	c := &l.conns[i]
	if c.out {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: i, Pad: c.gen}
	if rawEpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev) != 0 {
		l.fail(i, cConnectOther)
		return
	}
	c.out = true
}

// event handles epoll events for slot i.
func (l *loop) event(i int32, ev uint32) {
	c := &l.conns[i]
	switch c.state {
	case stConnecting:
		if ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			soerr, _ := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
			switch syscall.Errno(soerr) {
			case unix.ECONNREFUSED:
				l.fail(i, cConnectRefused)
			case unix.ETIMEDOUT:
				l.fail(i, cConnectTimeout)
			default:
				l.fail(i, cConnectOther)
			}
			return
		}
		if ev&unix.EPOLLOUT != 0 {
			c.state = stWriting
			l.write(i)
		}
	case stWriting:
		if ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.ioFail(i, unix.ECONNRESET)
			return
		}
		if ev&unix.EPOLLOUT != 0 {
			l.write(i)
		}
		if c.state == stReading && ev&unix.EPOLLIN != 0 {
			l.read(i)
		}
	case stReading:
		if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			l.read(i)
		}
	case stIdle:
		// The server closed (or wrote on) a kept-alive idle connection.
		// EPOLLOUT alone is the send buffer draining: ignore it.
		if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			rawClose(c.fd)
			c.fd = -1
			c.state = stClosed
		}
	}
}

func (l *loop) read(i int32) {
	c := &l.conns[i]
	for {
		n, e := rawRead(c.fd, l.buf)
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN:
			return
		case e != 0:
			l.ioFail(i, e)
			return
		case n == 0:
			l.eof(i)
			return
		}
		c.got = true
		l.st.bytes += int64(n)
		data := l.buf[:n]
		var used int
		var err error
		var done bool
		if l.r.fcgi {
			used, err = c.fp.Feed(data)
			done = c.fp.Done()
		} else {
			used, err = c.hp.Feed(data)
			done = c.hp.Done()
		}
		if err != nil || (done && used < n) {
			// Malformed, or bytes after the response that nobody asked
			// for: the connection's framing cannot be trusted.
			l.fail(i, cProtocol)
			return
		}
		if done {
			l.complete(i)
			return
		}
	}
}

// eof handles the server closing the connection while we wait for a
// response.
func (l *loop) eof(i int32) {
	c := &l.conns[i]
	if !l.r.fcgi && c.hp.EOF() == nil && c.hp.Done() {
		l.complete(i)
		return
	}
	if !c.got && c.reused && !c.retried {
		l.retry(i)
		return
	}
	l.fail(i, cClosed)
}

// retry re-sends a request that a kept-alive connection dropped before any
// byte of the answer (the server timed the connection out or recycled its
// worker): the request was not processed, so it is not a failure. Its
// latency still counts from the first send.
func (l *loop) retry(i int32) {
	c := &l.conns[i]
	rawClose(c.fd)
	c.fd = -1
	c.retried = true
	l.st.retried++
	l.inflight--
	l.sent--
	l.begin(i)
}

func (l *loop) ioFail(i int32, e syscall.Errno) {
	c := &l.conns[i]
	switch e {
	case unix.ECONNRESET, unix.EPIPE:
		if !c.got && c.reused && !c.retried {
			l.retry(i)
			return
		}
		l.fail(i, cReset)
	case unix.ECONNREFUSED:
		l.fail(i, cConnectRefused)
	case unix.ETIMEDOUT:
		l.fail(i, cReadTimeout)
	default:
		l.fail(i, cReset)
	}
}

// scanTimeouts fails connects and responses that have waited longer than
// the timeout. It runs every 50 ms, so a timeout fires at most 50 ms late.
func (l *loop) scanTimeouts() {
	limit := int64(l.r.o.Timeout)
	for i := range l.conns {
		c := &l.conns[i]
		if c.fd < 0 || l.now-c.ioAt < limit {
			continue
		}
		switch c.state {
		case stConnecting:
			l.fail(int32(i), cConnectTimeout)
		case stWriting, stReading:
			l.fail(int32(i), cReadTimeout)
		}
	}
}

// fail ends the current request of slot i with an error: the socket is
// closed and the slot moves on.
func (l *loop) fail(i int32, cl class) {
	c := &l.conns[i]
	if c.fd >= 0 {
		rawClose(c.fd)
		c.fd = -1
	}
	c.state = stClosed
	l.finish(i, true, cl)
}

// complete handles a whole response.
func (l *loop) complete(i int32) {
	c := &l.conns[i]
	var status int
	var bodyLen int64
	closeConn := !l.r.o.KeepAlive
	failed, cl := false, class(0)
	if l.r.fcgi {
		p := &c.fp
		status, bodyLen = p.Status, p.BodyLen
		switch {
		case p.ProtoStatus != fcgi.StatusRequestComplete:
			failed, cl, status = true, cFCGIOverloaded, 0
			closeConn = true
		case p.StderrLen > 0:
			l.st.classes[cFCGIStderr]++
			if l.r.o.FailOnStderr {
				failed, cl = true, cFCGIStderr
			} else if c.measure {
				l.st.stderrOK++
			}
		}
		if p.ContentLength >= 0 && p.ContentLength != bodyLen && !failed {
			failed, cl = true, cLength
		}
	} else {
		p := &c.hp
		status, bodyLen = p.Status, p.BodyLen
		if p.Close {
			closeConn = true
		}
	}
	if !failed {
		if sc, ok := statusClass(status, l.r.o.Requests[c.req].ExpectStatus); !ok {
			failed, cl = true, sc
		}
	}
	if !failed && l.r.expect != nil && status >= 200 && status < 300 && status != 204 && !l.r.noBody[c.req] {
		body := c.hp.Body()
		if l.r.fcgi {
			body = c.fp.Body()
		}
		if !l.r.expect.Match(body) {
			failed, cl = true, cUnexpectedBody
			if l.r.unexpectedOnce.CompareAndSwap(false, true) {
				l.r.unexpected = describeBody(l.r.o.Requests[c.req], status, body)
			}
		}
	}
	if !failed && l.r.o.CheckLength {
		ref := &l.r.lenRef[c.req]
		if !ref.CompareAndSwap(-1, bodyLen) && ref.Load() != bodyLen {
			failed, cl = true, cLength
		}
	}
	if c.measure && status > 0 && status < 1000 {
		l.st.status[status]++
	}
	if closeConn {
		rawClose(c.fd)
		c.fd = -1
		c.state = stClosed
	} else {
		c.reused = true
		c.state = stIdle
	}
	l.finish(i, failed, cl)
}

// finish records the request that just ended on slot i and starts the next.
func (l *loop) finish(i int32, failed bool, cl class) {
	c := &l.conns[i]
	l.inflight--
	if c.measure {
		sec := int((l.now - l.r.warmEnd.Load()) / int64(time.Second))
		if l.r.nsecs > 0 && sec >= l.r.nsecs {
			sec = l.r.nsecs - 1 // answers drained after the window
		}
		if failed {
			l.st.classes[cl]++
		}
		l.st.record(sec, (l.now-c.sentAt)/1000, failed)
		if l.r.o.N > 0 {
			for {
				old := l.r.lastDone.Load()
				if l.now <= old || l.r.lastDone.CompareAndSwap(old, l.now) {
					break
				}
			}
		}
	}
	c.measure = false
	if failed && cl <= cConnectOther {
		l.deferred = append(l.deferred, i)
		return
	}
	if l.r.pacer != nil {
		l.park(i)
		return
	}
	l.send(i)
}

// describeBody names a response that did not match Options.Expect by its
// request, status and title (or the start of its body).
func describeBody(q Request, status int, body []byte) string {
	m := q.Method
	if m == "" {
		m = "GET"
	}
	what := "an empty body"
	if t := titleRE.FindSubmatch(body); t != nil {
		what = fmt.Sprintf("title %.120q", strings.Join(strings.Fields(string(t[1])), " "))
	} else if len(body) > 0 {
		what = fmt.Sprintf("a body starting %.120q", body)
	}
	return fmt.Sprintf("%s %s answered %d with %s", m, q.Path, status, what)
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title\s*>`)

// countBefore is the number of request indexes k whose intended time is
// before t (bisection: schedules are monotonic).
func countBefore(sp scaledPacer, t int64) int64 {
	if int64(sp.at(0)) >= t {
		return 0
	}
	hi := int64(1)
	for int64(sp.at(hi)) < t && hi < 1<<50 {
		hi *= 2
	}
	lo := hi / 2 // at(lo) < t <= at(hi)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if int64(sp.at(mid)) < t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
