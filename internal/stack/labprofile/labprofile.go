// Package labprofile profiles a lab under load: rounds of three runs
// interleaved (package interleave) — plain, with perf sampling every CPU
// (native stacks), with excimer sampling PHP functions in the workers —
// so that the profiles come from the same loaded stack and their overhead
// is measured against plain runs of the same rounds. The native and the
// PHP samplers never run together: DWARF unwinding is costly, and each
// would count the other's work.
package labprofile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/decide/interleave"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/watch/observe"
	"github.com/phptune/phptune/internal/watch/perf"
	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/profile"
)

// Options are a profile's settings.
type Options struct {
	Conns    int
	Duration time.Duration // measured part of each run
	Warmup   time.Duration
	Rounds   int // each runs plain, native and PHP once
	// PHPClock is excimer's clock: lab.ProfilerCPU or lab.ProfilerWall.
	PHPClock string
	// Native and PHP choose the samplers (both by default).
	Native, PHP bool
	Perf        perf.Options
	// TempDir is a private directory for perf's data (root-only); Run
	// makes one of its own, and removes it, when it is empty.
	TempDir string
	Say     func(format string, a ...any)
}

// Labels of the three runs of a round.
const (
	RunPlain  = "plain"
	RunNative = "native (perf)"
	RunPHP    = "php (excimer)"
)

// Overhead is a sampler's cost: the stack's CPU per request (perf's own
// CPU included) and its throughput, against plain runs of the same rounds.
type Overhead struct {
	Sampler string `json:"sampler"`
	// CPUPerRequestRatio is CPU per request with the sampler ÷ without,
	// with its 95% interval over the rounds (0 when one round gives none).
	CPUPerRequestRatio float64 `json:"cpu_per_request_ratio"`
	CPUPerRequestLow   float64 `json:"cpu_per_request_ratio_low"`
	CPUPerRequestHigh  float64 `json:"cpu_per_request_ratio_high"`
	ThroughputRatio    float64 `json:"throughput_ratio"`
	Rounds             int     `json:"rounds"`
}

// Result is a profile of a lab.
type Result struct {
	Connections int     `json:"connections"`
	DurationS   float64 `json:"duration_s"`
	Rounds      int     `json:"rounds"`
	Server      string  `json:"server"`
	PHPJIT      bool    `json:"php_jit"`
	// Native is perf's profile; NativeUnavailable says why there is none.
	Native            *profile.Native `json:"native,omitempty"`
	NativeUnavailable string          `json:"native_unavailable,omitempty"`
	// Unlinked are mapped files perf was not let read (not root's alone).
	Unlinked map[string]string `json:"files_not_read,omitempty"`
	// PHP is excimer's profile; PHPUnavailable says why there is none.
	PHP            *profile.PHP `json:"php,omitempty"`
	PHPClock       string       `json:"php_clock,omitempty"`
	PHPUnavailable string       `json:"php_unavailable,omitempty"`
	PHPTruncated   bool         `json:"php_truncated,omitempty"`
	Overhead       []Overhead   `json:"overhead"`
	// ThroughputRPS is each run kind's median throughput.
	ThroughputRPS map[string]float64 `json:"throughput_rps"`
	Findings      []profile.Finding  `json:"findings"`
	Runtime       *results.Runtime   `json:"runtime,omitempty"`
}

// Run profiles l under w's load. The lab's configuration is left as it
// was; the PHP sampler is off again at the end, however the run ends.
func Run(ctx context.Context, l *lab.Lab, w workload.Workload, o Options) (*Result, error) {
	say := o.Say
	if say == nil {
		say = func(string, ...any) {}
	}
	if o.Rounds < 1 || o.Conns < 1 || o.Duration < time.Second {
		return nil, errors.New("a profile needs at least 1 round, 1 connection and 1 s of load")
	}
	if o.TempDir == "" {
		tmp, err := os.MkdirTemp("", "phptune-profile-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		o.TempDir = tmp
	}
	res := &Result{Connections: o.Conns, DurationS: o.Duration.Seconds(), Rounds: o.Rounds, Server: l.Config.Server(),
		PHPJIT: jitOn(l.Config), ThroughputRPS: map[string]float64{}}
	var pb *perf.Binary
	if o.Native {
		var err error
		if pb, err = perf.Check(ctx); err != nil {
			res.NativeUnavailable = err.Error()
			say("%v", err)
		}
	} else {
		res.NativeUnavailable = "not asked for (--native=false)"
	}
	if !o.PHP {
		res.PHPUnavailable = "not asked for (--php=false)"
	}
	fs, err := proc.Default()
	if err != nil {
		return nil, err
	}
	defer func() {
		if l.PHPProfiler != "" {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := l.SetPHPProfiler(rctx, ""); err != nil {
				say("turning the PHP sampler off: %v", err)
			}
		}
	}()

	configs := []interleave.Config{{Label: RunPlain, Config: l.Config}}
	if pb != nil {
		configs = append(configs, interleave.Config{Label: RunNative, Config: l.Config})
	}
	if o.PHP {
		configs = append(configs, interleave.Config{Label: RunPHP, Config: l.Config})
	}
	p := &profiling{l: l, o: o, say: say, res: res, pb: pb, fs: fs, stack: labstack.New(l, w),
		nb: &profile.NativeBuilder{PHPJIT: res.PHPJIT}, jit: &profile.PerfMap{},
		unlinked: map[string]string{}, perfCPU: map[*results.Bench]float64{}}
	s := interleave.New(configs, interleave.RunnerFunc(p.run))
	s.OnRun = func(r interleave.Run, out interleave.Outcome) {
		if !out.OK() {
			say("round %d/%d %s: %s", r.Round+1, o.Rounds, r.Label, out.Failed)
			return
		}
		say("round %d/%d %s: %.1f rps, stack CPU %.2f ms/request", r.Round+1, o.Rounds, r.Label, out.Bench.ThroughputRPS, 1000*stackCPU(out.Bench, p.perfCPU))
	}
	if err := s.Run(ctx, o.Rounds); err != nil {
		return nil, err
	}
	p.overheads(s, configs)
	p.finish()
	return res, nil
}

// profiling is one profile's state while its rounds run: what the
// samplers gathered so far and perf's own CPU per request of each run.
type profiling struct {
	l          *lab.Lab
	o          Options
	say        func(string, ...any)
	res        *Result
	pb         *perf.Binary // nil: no native profile
	fs         *proc.FS
	stack      *labstack.Stack
	nb         *profile.NativeBuilder
	jit        *profile.PerfMap
	php        profile.PHP
	phpMissing bool
	unlinked   map[string]string
	perfCPU    map[*results.Bench]float64 // perf's CPU seconds per request sent
}

// run is one round's run of one kind: plain, under perf, or with the PHP
// sampler. Every run restarts the stack, as compare's do: fresh workers
// for each, the sampler in or out.
func (p *profiling) run(ctx context.Context, r interleave.Run) (interleave.Outcome, error) {
	l, o, res, say := p.l, p.o, p.res, p.say
	clock := ""
	switch {
	case r.Label == RunPHP:
		clock = o.PHPClock
	case r.Label == RunNative && res.PHPJIT:
		clock = lab.ProfilerPerfMap // the JIT names its code for perf
	}
	if err := l.SetPHPProfiler(ctx, clock); err != nil {
		if ctx.Err() != nil {
			return interleave.Outcome{}, ctx.Err()
		}
		return interleave.Outcome{Failed: "restarting: " + err.Error()}, nil
	}
	if r.Label == RunPHP {
		if err := l.ClearPHPProfile(); err != nil {
			return interleave.Outcome{}, err
		}
	}
	var rec *perf.Recording
	var sc *scanner
	var perfStart float64
	if r.Label == RunNative {
		dir, err := os.MkdirTemp(o.TempDir, "perf-")
		if err != nil {
			return interleave.Outcome{}, err
		}
		defer os.RemoveAll(dir)
		sc = newScanner(l, p.fs)
		sc.start(500 * time.Millisecond)
		if rec, err = p.pb.Record(ctx, dir, o.Perf); err != nil {
			sc.stopAndWait()
			return interleave.Outcome{Failed: err.Error()}, nil
		}
		perfStart = cpuSeconds(p.fs, rec.PID())
	}
	b, merr := p.stack.Measure(ctx, o.Conns, o.Duration, o.Warmup)
	if rec != nil {
		perfCPUUsed := cpuSeconds(p.fs, rec.PID()) - perfStart
		serr := rec.Stop()
		sc.stopAndWait()
		if merr == nil && serr == nil {
			if b.RequestsSent > 0 {
				p.perfCPU[b] = perfCPUUsed / float64(b.RequestsSent)
			}
			if res.PHPJIT {
				readPerfMaps(l, sc, p.jit, say)
				p.nb.JIT = p.jit
			}
			if err := readNative(ctx, p.pb, rec, sc, p.nb, p.unlinked, o.TempDir); err != nil {
				say("reading perf's samples: %v", err)
			}
		} else if serr != nil {
			say("perf: %v", serr)
		}
	}
	if merr != nil {
		if ctx.Err() != nil {
			return interleave.Outcome{}, ctx.Err()
		}
		return interleave.Outcome{Failed: merr.Error()}, nil
	}
	if r.Label == RunPHP {
		data, truncated, err := l.ReadPHPProfile()
		if err != nil {
			say("reading the PHP sampler's output: %v", err)
		}
		res.PHPTruncated = res.PHPTruncated || truncated
		if bytes.Contains(data, []byte("#excimer-missing")) {
			p.phpMissing = true
		}
		p.php.ReadCollapsed(bytes.NewReader(data))
	}
	if r.Label == RunPlain && b.Runtime != nil {
		res.Runtime = b.Runtime
	}
	return interleave.Outcome{Bench: b}, nil
}

// overheads sets each kind's median throughput and the samplers' cost
// against the plain runs: stack CPU per request and throughput ratios.
func (p *profiling) overheads(s *interleave.Session, configs []interleave.Config) {
	res, perfCPU := p.res, p.perfCPU
	metric := func(b *results.Bench) float64 { return stackCPU(b, perfCPU) }
	for i, c := range configs {
		if vals := s.Values(i, interleave.Throughput); len(vals) > 0 {
			res.ThroughputRPS[c.Label] = stats.Median(vals)
		}
		if i == 0 {
			continue
		}
		ov := Overhead{Sampler: c.Label}
		a, bb := s.Paired(0, i, metric)
		ov.Rounds = len(a)
		if ci, err := s.Ratio(0, i, metric, 0.95); err == nil {
			ov.CPUPerRequestRatio = ci.Ratio
			if !isInf(ci.Low) && !isInf(ci.High) {
				ov.CPUPerRequestLow, ov.CPUPerRequestHigh = ci.Low, ci.High
			}
		} else if len(a) > 0 && stats.Median(a) > 0 {
			ov.CPUPerRequestRatio = stats.Median(bb) / stats.Median(a)
		}
		if ci, err := s.Ratio(0, i, interleave.Throughput, 0.95); err == nil {
			ov.ThroughputRatio = ci.Ratio
		}
		res.Overhead = append(res.Overhead, ov)
	}
}

// finish sets the result's profiles, what perf could not read and the
// findings.
func (p *profiling) finish() {
	l, o, res, pb, nb, php := p.l, p.o, p.res, p.pb, p.nb, &p.php
	if pb != nil {
		n := nb.Result()
		res.Native = &n
		if n.Samples == 0 && res.NativeUnavailable == "" {
			res.NativeUnavailable = "perf recorded no sample of the lab's processes"
		}
	}
	if len(p.unlinked) > 0 {
		res.Unlinked = p.unlinked
	}
	if o.PHP {
		res.PHPClock = o.PHPClock
		if php.Self == nil {
			php.ReadCollapsed(strings.NewReader(""))
		}
		res.PHP = php
		switch {
		case p.phpMissing:
			res.PHPUnavailable = "the excimer extension is not loaded in the lab's PHP (as root: apt-get install php-excimer, or phptune setup); a php.build build loads only its own extensions"
		case php.Samples == 0:
			res.PHPUnavailable = "the PHP sampler recorded no sample (requests shorter than its 10 ms period, or the app never ran PHP)"
		}
	}
	res.Findings = profile.Findings(res.Native, res.PHP, cacheState(l.Config, res.Runtime))
}

// readNative runs perf script on a recording and adds its samples of the
// lab's processes to nb: perf reads only files verified as root's
// (Symfs); the ones refused are listed in unlinked.
func readNative(ctx context.Context, pb *perf.Binary, rec *perf.Recording, sc *scanner, nb *profile.NativeBuilder, unlinked map[string]string, tmp string) error {
	dir, err := os.MkdirTemp(tmp, "symfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sym, err := perf.NewSymfs(dir)
	if err != nil {
		return err
	}
	for _, f := range sc.mapped() {
		sym.Add(f)
	}
	for f, why := range sym.Refused {
		unlinked[f] = why
	}
	nb.Role = sc.role
	return pb.Script(ctx, rec.Data, sym.Dir, nb.Add)
}

// readPerfMaps adds the perf maps the lab's PHP processes wrote (their
// JIT's code, by address) to jit: the workers share the JIT's buffer, so
// one map names code another ran.
func readPerfMaps(l *lab.Lab, sc *scanner, jit *profile.PerfMap, say func(string, ...any)) {
	for _, pid := range sc.pids(profile.RolePHP) {
		b, err := l.ReadPerfMap(pid)
		if err != nil {
			say("perf map of pid %d not read: %v", pid, err)
			continue
		}
		if len(b) > 0 {
			jit.Add(bytes.NewReader(b))
		}
	}
}

// stackCPU is the stack's CPU seconds per request in a run (every group
// the observer saw but the generator's), plus perf's own in a native run.
func stackCPU(b *results.Bench, perfCPU map[*results.Bench]float64) float64 {
	cpu := perfCPU[b]
	if b.Observation != nil {
		for g, v := range b.Observation.Derived.CPUSecondsPerRequest {
			if !strings.HasPrefix(g, observe.ComponentGenerator) {
				cpu += v
			}
		}
	}
	return cpu
}

// cpuSeconds is a process's CPU time so far (0 when it cannot be read).
func cpuSeconds(fs *proc.FS, pid int) float64 {
	st, err := fs.ReadStat(pid)
	if err != nil {
		return 0
	}
	return float64(st.CPUTicks()) / 100 // USER_HZ
}

func isInf(x float64) bool { return x > 1e300 || x < -1e300 }

// jitOn says PHP's JIT runs with cfg: a mode and a buffer.
func jitOn(cfg knob.Config) bool {
	if cfg["opcache.jit"] == "off" || cfg["opcache.enable"] == "off" {
		return false
	}
	size, err := knob.ParseSize(cfg["opcache.jit_buffer_size"])
	return err == nil && size > 0
}

// cacheState reads what findings need of the runtime counters.
func cacheState(cfg knob.Config, rt *results.Runtime) profile.CacheState {
	c := profile.CacheState{ValidateTS: cfg["opcache.validate_timestamps"] != "off", OpcacheEnabled: cfg["opcache.enable"] != "off",
		Server: cfg.Server(), Listen: cfg["listen"]}
	if rt == nil || rt.Opcache == nil {
		return c
	}
	op := rt.Opcache
	c.OpcacheEnabled = op.Enabled
	c.OpcacheFull = op.CacheFull
	if op.MemoryConsumptionB > 0 {
		c.OpcacheFreeShare = float64(op.FreeB) / float64(op.MemoryConsumptionB)
	} else {
		c.OpcacheFreeShare = 1
	}
	c.InternedFull = op.InternedBufferB > 0 && float64(op.InternedUsedB) >= 0.95*float64(op.InternedBufferB)
	c.KeysFull = op.MaxCachedKeys > 0 && op.CachedKeys >= op.MaxCachedKeys
	return c
}

// Summary is a one-line statement of a sampler's overhead.
func (o Overhead) Summary() string {
	s := fmt.Sprintf("%s: CPU per request ×%.3f", o.Sampler, o.CPUPerRequestRatio)
	if o.CPUPerRequestHigh > 0 {
		s += fmt.Sprintf(" [%.3f, %.3f]", o.CPUPerRequestLow, o.CPUPerRequestHigh)
	} else {
		s += " (one round: no interval)"
	}
	if o.ThroughputRatio > 0 {
		s += fmt.Sprintf(", throughput ×%.3f", o.ThroughputRatio)
	}
	return s + ", " + strconv.Itoa(o.Rounds) + " rounds"
}
