// Package search holds the tuner's strategies: pure code that proposes the
// next configurations to measure and learns from the measurements, behind a
// small ask/tell interface so that the orchestrator (package tune) stays the
// same whatever the strategy. It does no I/O and reads no clock.
//
// Domain is phptune's strategy (concurrency knee, pool sizing against CPU,
// waiting and the memory budget, paired comparisons for the categorical
// knobs); Grid is the exhaustive baseline the benchmark compares it with.
package search

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/stats"
)

// Phases a candidate belongs to; they end up in results.Trial.Phase.
const (
	PhaseBaseline    = "baseline"
	PhaseKnee        = "knee"
	PhaseWorkers     = "workers"
	PhaseCategorical = "categorical"
	PhaseGrid        = "grid"
)

// Candidate is one configuration to measure at one concurrency.
type Candidate struct {
	// ID numbers the candidates of one strategy run from 1, in the order
	// they are asked for. A deterministic strategy asks for the same
	// candidates in the same order when told the same outcomes, which is
	// how a tune resumes: stored outcomes are told again by ID.
	ID     int
	Phase  string
	Label  string // short, for progress lines: "workers=16", "pm=static r2"
	Config knob.Config
	Conns  int
}

// Outcome is the result of measuring a candidate: a Bench, or why there is
// none (the stack did not start, the generator failed).
type Outcome struct {
	Bench *results.Bench
	Err   string
}

// Strategy proposes candidates and learns from their outcomes.
//
// The orchestrator calls Ask, measures the returned candidates in the order
// given (consecutive candidates of a batch are the interleaved arms of a
// paired comparison, so the order matters), calls Tell once per candidate,
// and asks again until Ask returns no candidates. Recommend may be called at
// any time (e.g. when the time budget runs out) and gives the best
// configuration known so far. Close releases the strategy.
type Strategy interface {
	Ask() []Candidate
	Tell(Candidate, Outcome)
	Recommend() Recommendation
	Close()
}

// Decision is the outcome of one paired comparison of a challenger against
// the incumbent configuration.
type Decision struct {
	Name    string        `json:"name"` // "pm=static"
	Changes []knob.Change `json:"changes"`
	// CI is the deciding statistic's ratio, oriented so that > 1 means the
	// challenger is better: challenger/incumbent throughput or latency
	// score, or for StatCPU the incumbent's CPU per request ÷ the
	// challenger's (> 1: faster on a CPU-bound page).
	CI       stats.RatioCI `json:"ci"`
	Verdict  string        `json:"verdict"`
	Adopted  bool          `json:"adopted"`
	Rounds   int           `json:"rounds"`
	Skipped  string        `json:"skipped,omitempty"` // why it was not measured
	Violated bool          `json:"violated,omitempty"`
	// Statistic is what decided: StatThroughput, StatP99 or StatCPU.
	Statistic string `json:"statistic,omitempty"`
	// Throughput and P99 are challenger/incumbent ratios at CI's
	// confidence, shown (and, when CPU decided, checked) whatever decided.
	Throughput *stats.RatioCI `json:"throughput,omitempty"`
	P99        *stats.RatioCI `json:"p99,omitempty"`
	// Family is the number of comparisons Holm's correction covered.
	Family int `json:"family,omitempty"`
	// Basis says in one line what decided and at which level, for the
	// evidence: "decided on stack CPU per request (...); throughput ...;
	// intervals at 98.33%, Holm-corrected over 3 comparisons ...".
	Basis string `json:"basis,omitempty"`
}

// Recommendation is a strategy's answer with its evidence.
type Recommendation struct {
	Config        knob.Config
	Conns         int
	Knee          int     // estimated concurrency at which throughput saturates; 0 unknown
	Score         float64 // best measured score of the recommended pool size
	ThroughputRPS float64 // its throughput
	PredictedMemB int64   // memory the recommended config is predicted to use
	MemoryCap     int     // most workers the memory budget allows; 0 no budget or unknown
	Decisions     []Decision
	Curve         []results.CurvePoint // the knee scan
	Notes         []string
	Trials        int // candidates asked for
}

// Options configure a strategy.
type Options struct {
	Start knob.Config // the configuration being tuned (usually the distro's)
	// Conns is the workload's concurrency (client connections).
	Conns int
	// Cores the stack runs on.
	Cores  int
	Limits results.Limits
	// Objective is "throughput" (default) or "latency" (p99).
	Objective string
	// MaxChildren bounds every proposed pool size (pm.max_children, or
	// MaxRequestWorkers with mod_php; default 256).
	MaxChildren int
	// Compare configures the paired comparisons. Zero means
	// stats.DefaultCompare with MaxRounds derived from CategoricalTrials.
	Compare stats.CompareOptions
	// CategoricalTrials is the budget of trials for the categorical race
	// (default 14): every challenger and the incumbent in the first round,
	// the better half of the undecided ones in each round after.
	CategoricalTrials int
	// SearchTrials, when > 0, caps every trial the strategy asks for (its
	// own baseline included when Baseline is nil); the categorical race
	// gets what the earlier phases leave of it, at most CategoricalTrials.
	SearchTrials int
	// Spare, when set, is asked once as the race starts, with the
	// trials the race plans (CategoricalTrials within SearchTrials), how
	// many more it may spend: on more rounds for the challengers still
	// undecided (the better half of them each round, the leader last),
	// never on more challengers. A tune answers with what its time
	// budget spares once every planned phase is counted. SearchTrials,
	// when set, still caps the whole search.
	Spare func(planned int) int
	// Challenges to try against the sized pool; nil means DefaultChallenges.
	Challenges []Challenge
	// Writes says the workload writes to the database (WordPress
	// comments): WriteChallenges join the default challenges.
	Writes bool
	// Baseline, if set, is Start already measured at Conns; the strategy
	// then skips its own baseline trial.
	Baseline *results.Bench
}

func (o *Options) defaults() error {
	if o.Start == nil {
		o.Start = knob.Defaults()
	}
	if err := o.Start.Validate(); err != nil {
		return fmt.Errorf("search: start configuration: %w", err)
	}
	if o.Conns <= 0 {
		return fmt.Errorf("search: Conns must be > 0 (the workload's client connections)")
	}
	if o.Cores <= 0 {
		o.Cores = 1
	}
	if o.MaxChildren <= 0 {
		o.MaxChildren = 256
	}
	if o.Compare.MinRounds == 0 {
		o.Compare = stats.DefaultCompare
		o.Compare.MaxRounds = 0
	}
	if o.CategoricalTrials <= 0 {
		o.CategoricalTrials = 14
	}
	if o.Challenges == nil {
		o.Challenges = ChallengesFor(o.Start.Server(), o.Writes)
	}
	return nil
}

// Challenge is a categorical change tried against the incumbent.
type Challenge struct {
	Name  string   // shown in decisions: "pm=static"
	Group string   // challenges in one group exclude each other (e.g. "pm")
	Set   []string // knob=value assignments
	// Servers, when set, are the only servers the challenge is tried on
	// by default (ChallengesFor); nil: every server that uses its knobs.
	Servers []string
	// Fit, when set, adjusts the challenged configuration to the
	// incumbent it is tried against (a value that depends on the sized
	// pool), before php-fpm's rules are applied.
	Fit func(knob.Config) knob.Config
}

// AppliesTo reports whether c is one of server's default challenges: its
// knobs are server's (see knob.UsedBy) and Servers, if set, names it.
func (c Challenge) AppliesTo(server string) bool {
	if c.Servers != nil && !slices.Contains(c.Servers, server) {
		return false
	}
	for _, a := range c.Set {
		name, _, _ := strings.Cut(a, "=")
		k, err := knob.Lookup(name)
		if err != nil || !knob.UsedBy(k, server) {
			return false
		}
	}
	return true
}

// ChallengesFor are the challenges a tune of server decides by default:
// those of DefaultChallenges, ApacheChallenges and, when the workload
// writes, WriteChallenges that apply to it (Challenge.AppliesTo). For
// nginx-fpm that is DefaultChallenges (and WriteChallenges); php-fpm's
// process manager and socket are not challenged where no php-fpm runs.
func ChallengesFor(server string, writes bool) []Challenge {
	all := slices.Concat(DefaultChallenges, ApacheChallenges)
	if writes {
		all = append(all, WriteChallenges...)
	}
	var out []Challenge
	for _, c := range all {
		if c.AppliesTo(server) {
			out = append(out, c)
		}
	}
	return out
}

// DefaultChallenges are the categorical knobs the domain strategy decides.
// A tie keeps the incumbent, which holds the distro's values except for the
// process manager: the pool was sized as a static pool, so static is what
// the evidence is about, and a fixed pool spawns nothing during load (seed
// 004 fixed its process counts for that reason).
var DefaultChallenges = []Challenge{
	{Name: "pm=dynamic", Group: "pm", Set: []string{"pm=dynamic"}},
	{Name: "pm=ondemand", Group: "pm", Set: []string{"pm=ondemand"}},
	{Name: "listen=tcp", Group: "listen", Set: []string{"listen=tcp"}},
	{Name: "opcache.validate_timestamps=off", Group: "validate_timestamps", Set: []string{"opcache.validate_timestamps=off"}},
	{Name: "jit=tracing,64M", Group: "jit", Set: []string{"opcache.jit=tracing", "opcache.jit_buffer_size=64M"}},
	{Name: "pm.max_requests=1000", Group: "max_requests", Set: []string{"pm.max_requests=1000"}},
}

// WriteChallenges are decided too when the workload writes to the
// database: with a commit per comment, flushing InnoDB's log to disk at
// every commit (the default, 1) can be what the page waits for; 2 writes
// it at each commit but syncs once a second, so a crash of the OS (not of
// MariaDB) can lose the last second of comments. The report's evidence
// shows the trade when it is adopted.
var WriteChallenges = []Challenge{
	{Name: "innodb_flush_log_at_trx_commit=2", Group: "flush_log", Set: []string{"mariadb.innodb_flush_log_at_trx_commit=2"}},
}

// ApacheChallenges are decided where Apache runs:
//   - KeepAlive off: Debian keeps client connections open, which holds an
//     event thread (cheap) or, with prefork, a whole child, i.e. a PHP
//     worker with mod_php, idle between a client's requests;
//   - with prefork, Debian's own spares (start 5, keep 5 to 10 idle)
//     against the incumbent's children all started and kept (the nearest
//     prefork has to a static pool, see Pool), as pm=dynamic is to php-fpm;
//   - with prefork, children replaced after 1000 connections, as
//     pm.max_requests=1000 is to php-fpm (with mod_php a child is a PHP
//     worker whose leaks it bounds).
var ApacheChallenges = []Challenge{
	{Name: "apache.keepalive=off", Group: "apache.keepalive", Set: []string{"apache.keepalive=off"}},
	{Name: "prefork.spares=debian", Group: "prefork.spares", Set: []string{"apache.prefork.start_servers=5", "apache.prefork.min_spare_servers=5", "apache.prefork.max_spare_servers=10"},
		Servers: []string{knob.ApachePreforkModPHP}},
	{Name: "apache.max_connections_per_child=1000", Group: "max_requests", Set: []string{"apache.max_connections_per_child=1000"},
		Servers: []string{knob.ApachePreforkModPHP}},
}

// KeepaliveMost is the challenge of kept FastCGI connections at the most
// the incumbent's pool allows (knob.Config.MostFastCGIKeepalive): its
// value depends on the pool the search sized, so it is set when tried.
const KeepaliveMost = "fastcgi_keepalive=most"

// TopologyChallenges are how nginx reaches php-fpm: several pools behind
// an upstream, and kept FastCGI connections. They are decided only when
// named (--challenges): measured here (bench/overload.sh topology, hello
// at c=500, static pool of 8, quiet machine), two pools made no
// significant difference to throughput (x0.96 [0.92, 1.00]) and four were
// slower (x0.93 [0.88, 0.99]), both raising p99 1.7 to 2.8 times; kept
// connections raised throughput x1.46 [1.36, 1.56] and p99 sixteen times
// (the connections not kept wait for the pool's few free workers): a
// trade to choose with an SLO, not to adopt on throughput.
var TopologyChallenges = []Challenge{
	{Name: "fpm.pools=2", Group: "pools", Set: []string{"fpm.pools=2"}},
	{Name: "fpm.pools=4", Group: "pools", Set: []string{"fpm.pools=4"}},
	{Name: KeepaliveMost, Group: "fastcgi_keepalive", Set: []string{knob.FastCGIKeepaliveKnob + "=1"}, Fit: mostKeepalive},
}

// mostKeepalive keeps as many FastCGI connections as c's pool allows
// (the challenge's 1 when even that is too many, so that it is refused
// saying why).
func mostKeepalive(c knob.Config) knob.Config {
	if n := c.MostFastCGIKeepalive(); n > 0 {
		c[knob.FastCGIKeepaliveKnob] = strconv.Itoa(n)
	}
	return c
}

// KnownChallenges are all challenges a tune may name.
func KnownChallenges() []Challenge {
	return slices.Concat(DefaultChallenges, WriteChallenges, ApacheChallenges, TopologyChallenges)
}

// GridChallenges are the categorical knobs the exhaustive grid covers, for
// comparing the two strategies on the same space.
var GridChallenges = []Challenge{
	{Name: "pm=dynamic", Group: "pm", Set: []string{"pm=dynamic"}},
	{Name: "pm=ondemand", Group: "pm", Set: []string{"pm=ondemand"}},
	{Name: "opcache.validate_timestamps=off", Group: "validate_timestamps", Set: []string{"opcache.validate_timestamps=off"}},
}

// Pool returns base with the given process manager and max_children; for a
// dynamic pool the spares scale with the pool (min 25%, max 75%, start in
// between, as the common calculators do) so that a large pool does not
// spend a loaded run spawning and reaping workers. The result is brought
// within php-fpm's rules (FitDynamic) and validated.
//
// With mod_php (server=apache-prefork-modphp) the pool is Apache's
// prefork children and n is MaxRequestWorkers (see preforkPool).
//
// MariaDB's max_connections is raised, if needed, to the pool size plus 10
// (a worker holds at most one connection; the 10 are for the tool and an
// administrator), so that a large pool does not fail on "Too many
// connections".
func Pool(base knob.Config, pm string, n int) (knob.Config, error) {
	c := base.Clone()
	if v, ok := c["mariadb.max_connections"]; ok {
		if cur, err := strconv.Atoi(v); err == nil && cur < n+10 {
			c["mariadb.max_connections"] = strconv.Itoa(n + 10)
		}
	}
	switch c.Server() {
	case knob.ApachePreforkModPHP:
		return preforkPool(c, pm, n)
	case knob.UnitPHP:
		return unitPool(c, pm, n)
	}
	c["pm"] = pm
	c["pm.max_children"] = strconv.Itoa(n)
	if pm == "dynamic" {
		minS := max(1, n/4)
		maxS := max(minS, (3*n+3)/4)
		c["pm.min_spare_servers"] = strconv.Itoa(minS)
		c["pm.max_spare_servers"] = strconv.Itoa(maxS)
		c["pm.start_servers"] = strconv.Itoa(minS + (maxS-minS)/2)
	}
	c = c.FitDynamic()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// preforkPool sizes Apache's prefork children, which are the PHP workers
// with mod_php, to n: MaxRequestWorkers n, and ServerLimit raised to n when
// below it (Apache would lower MaxRequestWorkers to it). Prefork has no
// process manager mode; pm picks the nearest thing:
//   - "static": every child started and kept (StartServers = MinSpareServers
//     = n, MaxSpareServers = n+1, as Apache wants it above the minimum), so
//     a loaded run forks nothing, as php-fpm's static pool;
//   - "dynamic": the spares scale with the pool as for php-fpm (min 25%,
//     max 75% and above min, start in between).
//
// There is no ondemand: prefork always keeps MinSpareServers idle.
func preforkPool(c knob.Config, pm string, n int) (knob.Config, error) {
	var start, minS, maxS int
	switch pm {
	case "static":
		start, minS, maxS = n, n, n+1
	case "dynamic":
		minS = max(1, n/4)
		maxS = max(minS+1, (3*n+3)/4)
		start = min(n, minS+(maxS-minS)/2)
	default:
		return nil, fmt.Errorf("search: pm=%s: %s runs no php-fpm; its prefork children are sized static or dynamic", pm, c.Server())
	}
	c["apache.max_request_workers"] = strconv.Itoa(n)
	if int(c.Int("apache.prefork.server_limit")) < n {
		c["apache.prefork.server_limit"] = strconv.Itoa(n)
	}
	c["apache.prefork.start_servers"] = strconv.Itoa(start)
	c["apache.prefork.min_spare_servers"] = strconv.Itoa(minS)
	c["apache.prefork.max_spare_servers"] = strconv.Itoa(maxS)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// unitPool sizes NGINX Unit's application processes: static keeps n
// running; dynamic keeps a quarter of them (at least one) idle and lets
// Unit start the rest on demand, as php-fpm's dynamic pool does.
func unitPool(c knob.Config, pm string, n int) (knob.Config, error) {
	switch pm {
	case "static":
		c["unit.pm"] = "static"
	case "dynamic":
		c["unit.pm"] = "dynamic"
		c["unit.spare_processes"] = strconv.Itoa(max(1, n/4))
	default:
		return nil, fmt.Errorf("search: pm=%s: %s runs no php-fpm; its application processes are sized static or dynamic", pm, c.Server())
	}
	c["unit.processes"] = strconv.Itoa(n)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// FitConnections raises, where needed, the settings that bound how many
// client connections the stack can hold at once to what conns needs: the
// accept queues of php-fpm, nginx and lighttpd (listen.backlog,
// nginx.listen_backlog, lighttpd.listen_backlog), when shorter than conns,
// to the next power of two at or above it, nginx's worker_connections to
// 2 × conns + 64 (each client connection may need an upstream one, and all
// may land on one worker), lighttpd's and h2o's max_connections to conns +
// 16, and the event MPM's MaxRequestWorkers to conns. Only the knobs of base's server are touched.
// Nothing is lowered; the kernel still caps a backlog at net.core.somaxconn.
func FitConnections(base knob.Config, conns int) knob.Config {
	c := base.Clone()
	// raise sets name to want when it holds less than need.
	raise := func(name string, need, want int) {
		v, ok := c[name]
		if !ok || !c.Relevant(name) {
			return
		}
		if cur, err := strconv.Atoi(v); err == nil && cur < need {
			c[name] = strconv.Itoa(want)
		}
	}
	backlog := 1
	for backlog < conns {
		backlog *= 2
	}
	backlog = min(backlog, 65535)
	raise("listen.backlog", conns, backlog)
	raise("nginx.listen_backlog", conns, backlog)
	raise("lighttpd.listen_backlog", conns, backlog)
	wc := min(2*conns+64, 65535)
	raise("nginx.worker_connections", wc, wc)
	// lighttpd and h2o count client connections only (per lighttpd
	// process: with server.max-worker each worker may get all of them);
	// the 16 are for status reads and the odd late close.
	raise("lighttpd.max_connections", conns+16, min(conns+16, 21845))
	raise("h2o.max_connections", conns+16, conns+16)
	if c.Server() == knob.ApacheEventFPM {
		// The event MPM's threads hold the client connections in front
		// of php-fpm: MaxRequestWorkers covers conns in whole children,
		// ServerLimit follows.
		threads := max(1, int(c.Int("apache.event.threads_per_child")))
		need := (conns + threads - 1) / threads * threads
		if int(c.Int("apache.max_request_workers")) < need && need <= 20000 {
			c["apache.max_request_workers"] = strconv.Itoa(need)
			if int(c.Int("apache.event.server_limit")) < need/threads {
				c["apache.event.server_limit"] = strconv.Itoa(need / threads)
			}
		}
	}
	return c
}

// TwoPerCore is the "2 × cores children" rule of thumb applied to
// base with a static pool, for the benchmark's comparison.
func TwoPerCore(base knob.Config, cores int) (knob.Config, error) {
	return Pool(base, "static", max(1, 2*cores))
}

// Calculator is what the popular php-fpm calculators recommend:
// max_children = 0.9 × available memory / average worker RSS, a dynamic
// pool with 25%/75% spares. For the benchmark's comparison.
func Calculator(base knob.Config, memAvailableB, avgWorkerRSSB int64) (knob.Config, error) {
	if avgWorkerRSSB <= 0 {
		return nil, fmt.Errorf("search: calculator needs the average worker RSS")
	}
	n := int(0.9 * float64(memAvailableB) / float64(avgWorkerRSSB))
	n = min(max(n, 1), 4096)
	return Pool(base, "dynamic", n)
}

// Memory predicts the stack's memory from measurements: per-worker PSS p95
// and the PSS of everything else (nginx, master, MariaDB). A worker is what
// runs PHP: a php-fpm worker, or with mod_php an Apache child (the
// observer's "apache+php workers"), whose count is the configuration's
// PHPWorkers.
type Memory struct {
	WorkerB int64 `json:"worker_pss_p95_bytes"`
	OtherB  int64 `json:"other_pss_bytes"`
}

// Known reports whether a worker's size has been measured.
func (m Memory) Known() bool { return m.WorkerB > 0 }

// Observe folds in one run's measurements, keeping the largest seen so a
// prediction errs on the safe side. Runs with a JIT buffer are skipped for
// OtherB, since the buffer is added to predictions explicitly.
func (m *Memory) Observe(cfg knob.Config, b *results.Bench) {
	if b == nil || b.Observation == nil {
		return
	}
	d := b.Observation.Derived
	m.WorkerB = max(m.WorkerB, d.WorkerPSSP95B)
	if jitBuffer(cfg) == 0 {
		m.OtherB = max(m.OtherB, d.OtherPSSB)
	}
}

func jitBuffer(cfg knob.Config) int64 {
	if cfg["opcache.jit"] == "off" || !cfg.On("opcache.enable") {
		return 0
	}
	return cfg.Bytes("opcache.jit_buffer_size")
}

// Predict is the peak memory of cfg: every worker alive at its p95 size
// plus everything else plus the JIT buffer.
func (m Memory) Predict(cfg knob.Config) int64 {
	return m.OtherB + cfg.PHPWorkers()*m.WorkerB + jitBuffer(cfg)
}

// MaxWorkers is the largest pool that fits budget with cfg's other
// settings; 0 when unknown or no budget (callers then apply other bounds).
func (m Memory) MaxWorkers(budget int64, cfg knob.Config) int {
	if budget <= 0 || !m.Known() {
		return 0
	}
	free := budget - m.OtherB - jitBuffer(cfg)
	if free < m.WorkerB {
		return 1 // the budget cannot hold even one: the smallest pool, noted by the caller
	}
	return int(free / m.WorkerB)
}

// score turns a run into "higher is better" for the objective; 0 means
// unusable.
func score(objective string, b *results.Bench) float64 {
	if b == nil {
		return 0
	}
	if objective == "latency" {
		if b.Latency.P99Ms <= 0 {
			return 0
		}
		return 1000 / b.Latency.P99Ms
	}
	return b.ThroughputRPS
}

// Violation says which limit a run breaks, or "".
func Violation(l results.Limits, b *results.Bench) string {
	if b == nil {
		return ""
	}
	if b.Requests > 0 {
		rate := float64(b.Errors) / float64(b.Requests)
		if rate > l.MaxErrorRate {
			return fmt.Sprintf("error rate %.2f%% above the limit %.2f%%", 100*rate, 100*l.MaxErrorRate)
		}
	} else if b.Errors > 0 {
		return "only errors"
	} else {
		return "no request completed in the measured part: the trial is shorter than the page's latency under this load (lengthen --trial-duration)"
	}
	if l.SLOP99Ms > 0 && b.Latency.P99Ms > l.SLOP99Ms {
		return fmt.Sprintf("p99 %.1f ms above the SLO %.1f ms", b.Latency.P99Ms, l.SLOP99Ms)
	}
	return ""
}

// KneeOf estimates the concurrency at which throughput stops growing from a
// curve measured with a pool large enough not to limit it: the point where
// the initial slope (requests/s per connection, from the lowest levels)
// meets the plateau. By Little's law it is the number of requests the stack
// can usefully have in flight, i.e. the workers the pool needs.
func KneeOf(curve []results.CurvePoint) int {
	var slope, peak float64
	for _, p := range curve {
		if p.Connections <= 0 || p.ThroughputRPS <= 0 {
			continue
		}
		slope = math.Max(slope, p.ThroughputRPS/float64(p.Connections))
		peak = math.Max(peak, p.ThroughputRPS)
	}
	if slope == 0 {
		return 0
	}
	return max(1, int(math.Round(peak/slope)))
}
