package observe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/status/fpmstatus"
	"github.com/phptune/phptune/internal/servers/unit"
	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/speedprobe"
)

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

// fetchAll reads the pools' and servers' status pages and MariaDB's status
// at once, each bounded by most of an interval.
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

	o.addFetched(&s, <-fch)
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

// addFetched parses what fetchAll brought back into the sample: each
// pool's status (or why it has none) and the servers' status pages, whose
// failures go to the sample's Errors.
func (o *Observer) addFetched(s *results.Sample, f *fetched) {
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
	if o.ngx != nil && fetchOK(&s.Errors, f.ngxErr) {
		s.Nginx = f.ngx
	}
	if o.apache != nil && fetchOK(&s.Errors, f.apErr) {
		s.Apache = f.apache
	}
	if o.unit != nil && fetchOK(&s.Errors, f.unitErr) {
		s.Unit = unitSample(f.unit, o.cfg.UnitMaxProcesses)
	}
	if o.lighttpd != nil && fetchOK(&s.Errors, f.lightErr) {
		s.Lighttpd = f.light
	}
	if o.h2o != nil && fetchOK(&s.Errors, f.h2oErr) {
		s.H2O = f.h2o
	}
	if o.cfg.DB != nil && fetchOK(&s.Errors, f.dbErr) {
		s.MariaDB = f.db
	}
}

// fetchOK reports whether a status page was fetched (err is nil), adding
// err to errs when it was not.
func fetchOK(errs *[]string, err error) bool {
	if err != nil {
		*errs = append(*errs, err.Error())
	}
	return err == nil
}

// tv converts a rusage time to a Duration.
func tv(t unix.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// machineSample is the machine's CPU split, run queue, context switches and
// memory between two readings dt seconds apart.
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
