// Package results holds phptune's result records: what a bench run measured,
// what the observer sampled, and what a tune tried. They are plain data with
// stable JSON names (units in the names) so that a report can always be
// re-rendered from stored results. docs/results-schema.md documents them.
//
// Bump SchemaVersion when a field changes meaning or is removed; adding a
// field does not need a bump.
package results

import "time"

// SchemaVersion is the version of every JSON document phptune writes.
const SchemaVersion = 1

// Kinds of result document, in the "kind" field.
const (
	KindBench    = "bench"
	KindTune     = "tune"
	KindCapacity = "capacity"
)

// Bench is one load-generator run against one target.
type Bench struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // always "bench"
	ID            string    `json:"id"`
	StartedAt     time.Time `json:"started_at"`
	Command       string    `json:"command,omitempty"` // the command line that reproduces it
	Target        string    `json:"target"`            // URL or fcgi:// address
	Protocol      string    `json:"protocol"`          // "http" or "fcgi"
	Model         string    `json:"model"`             // "closed" or "open"
	Connections   int       `json:"connections"`
	RateAskedRPS  float64   `json:"rate_asked_rps,omitempty"` // open model only
	// RateAchievedRPS is the rate requests were actually answered at in the
	// open model (answered requests / duration), beside the asked one.
	RateAchievedRPS float64 `json:"rate_achieved_rps,omitempty"`
	// RateSchedule is the --rate as given: "1000", "500..2000", "500,1000".
	RateSchedule string `json:"rate_schedule,omitempty"`
	// Threads is the number of generator event loops.
	Threads int `json:"threads,omitempty"`
	// Engine is the load generator that made the run: empty for
	// phptune's own, "locust" for Locust (bench --engine locust, import
	// locust), EngineVersion its version ("2.47.0").
	Engine        string `json:"engine,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	// Workers is the number of Locust worker processes behind its master
	// (0: Locust ran as one process); WorkerCPUSeconds is the CPU time of
	// each worker phptune started on this machine, MasterCPUSeconds the
	// master's.
	Workers          int       `json:"workers,omitempty"`
	WorkerCPUSeconds []float64 `json:"worker_cpu_s,omitempty"`
	MasterCPUSeconds float64   `json:"master_cpu_s,omitempty"`
	// LatencyRounded says the latencies come from Locust's response-time
	// buckets, rounded to 1 ms below 100 ms, 10 ms below 1 s and 100 ms
	// above, and from when each request was sent (no coordinated-omission
	// correction), not from phptune's HdrHistograms.
	LatencyRounded bool    `json:"latency_rounded,omitempty"`
	KeepAlive      bool    `json:"keep_alive"`
	WarmupS        float64 `json:"warmup_s"`
	DurationS      float64 `json:"duration_s"` // measured part only

	Requests      int64   `json:"requests"` // completed in the measured part, errors included
	Errors        int64   `json:"errors"`
	ThroughputRPS float64 `json:"throughput_rps"` // successful responses per second
	BytesRead     int64   `json:"bytes_read"`
	// RequestsSent counts every request written, warm-up and requests
	// unanswered at the end included (what the server should have seen).
	RequestsSent int64 `json:"requests_sent"`
	// RequestsUnsent counts requests of the open model's schedule, due in
	// the measured part, that were never sent because every connection
	// was waiting for an answer; RequestsUnanswered requests sent in the
	// measured part still unanswered when the run ended. Neither is in
	// Requests or the latencies: a capacity step counts them as late.
	RequestsUnsent     int64 `json:"requests_unsent,omitempty"`
	RequestsUnanswered int64 `json:"requests_unanswered,omitempty"`
	// ConnectionsOpened counts sockets the generator connected.
	ConnectionsOpened int64 `json:"connections_opened"`
	// MachineIdlePct is the whole machine's idle CPU during the measured
	// part (steal excluded), the other half of the saturation check.
	MachineIdlePct float64 `json:"machine_idle_pct"`

	Latency Latency `json:"latency"`
	// LatencyDistribution is the HdrHistogram percentile distribution (the
	// points of a percentile plot).
	LatencyDistribution []PercentilePoint `json:"latency_distribution,omitempty"`
	// StatusCodes counts responses by status code ("200", "502").
	StatusCodes map[string]int64 `json:"status_codes,omitempty"`
	// StatusUnknown counts requests whose status code is not known: a run
	// imported from Locust's statistics, which count none (only failure
	// messages may name one). 0 for phptune's own runs and Locust runs
	// phptune made, which count every response.
	StatusUnknown int64 `json:"status_unknown,omitempty"`
	// ErrorsByClass counts failed requests by class: connect_refused,
	// connect_timeout, reset, read_timeout, redirect (a 3xx not expected),
	// status_4xx, status_5xx, unexpected_status (a 2xx where a request
	// expected another status), unexpected_body, length_mismatch,
	// protocol, fcgi_stderr ...
	ErrorsByClass map[string]int64 `json:"errors_by_class,omitempty"`
	// Series has one entry per second of the measured part.
	Series []Second `json:"series,omitempty"`

	Generator   GeneratorCost `json:"generator"`
	Observation *Observation  `json:"observation,omitempty"`
	// Runtime is what the servers said about their caches after the load
	// (lab runs only).
	Runtime     *Runtime     `json:"runtime,omitempty"`
	Environment *Environment `json:"environment,omitempty"`
	Warnings    []string     `json:"warnings,omitempty"`
	// ServerErrors is what the lab's servers wrote to their own error
	// logs during the measured part, classified (lab runs only).
	ServerErrors *ServerErrors `json:"server_errors,omitempty"`
	// Blocked are the connections a sealed site lab's processes tried to
	// open outside the lab during the run (all refused by the seal), by
	// destination; absent when nothing tried or the lab is not sealed.
	Blocked []Blocked `json:"blocked,omitempty"`
	// PageDrift says how the page checked before the run differs from
	// the first check of the lab's runs — another status or another
	// title (also in Warnings) —: the run measured another page. "" when
	// it does not, or was not checked.
	PageDrift string `json:"page_drift,omitempty"`
	// Caches are a site lab's own cache servers (Redis, Memcached) as
	// the run used them; absent when the lab runs none.
	Caches []CacheUse `json:"caches,omitempty"`
}

// CacheUse is one of a site lab's own cache servers during a run: its
// hits, misses and evictions counted over the measured part, its memory
// at the end.
type CacheUse struct {
	Kind  string   `json:"kind"`  // "redis" or "memcached"
	Addrs []string `json:"addrs"` // the site's addresses it answers
	// Hits and Misses are the lookups of the measured part that found
	// a key or did not; HitRatio is hits / (hits + misses), 0 without
	// lookups.
	Hits     int64   `json:"hits"`
	Misses   int64   `json:"misses"`
	HitRatio float64 `json:"hit_ratio"`
	// Evictions are the keys it dropped for room in the measured part.
	Evictions int64 `json:"evictions"`
	// UsedBytes is the memory it held at the end, MaxBytes its cap.
	UsedBytes int64 `json:"used_bytes"`
	MaxBytes  int64 `json:"max_bytes,omitempty"`
	// Error says why the counters were not read (the figures are then
	// 0).
	Error string `json:"error,omitempty"`
}

// Blocked is one destination a sealed lab's processes tried to reach
// during a run, refused by the seal: how many connection attempts (TCP)
// or datagrams (UDP) the run added.
type Blocked struct {
	Proto string `json:"proto"` // "tcp" or "udp"
	Dest  string `json:"dest"`  // "127.0.0.1:3306", "[::1]:80"
	Count uint64 `json:"count"`
}

// ServerErrors is what a lab's servers logged as errors while a run
// measured: the lines appended to nginx's, Apache's and php-fpm's error
// logs from the start of the measured part until the load ended, sorted
// into classes (internal/watch/errlog), and sentences relating them to the
// generator's status codes and error classes.
type ServerErrors struct {
	// Logs are the logs read, with what was read of each.
	Logs []ServerLog `json:"logs"`
	// Classes count the classified lines, web server's first.
	Classes []ServerErrorClass `json:"classes,omitempty"`
	// Explanations say, per 5xx status the generator counted, how many
	// each class accounts for, and what the other lines were.
	Explanations []string `json:"explanations,omitempty"`
	// Somaxconn is net.core.somaxconn when the logs were read: the kernel
	// cuts every listen backlog to it (0: not read).
	Somaxconn int `json:"somaxconn,omitempty"`
	// PHP counts PHP's own messages in the web server's log by class and
	// file; nil when PHP logged none.
	PHP *PHPErrors `json:"php,omitempty"`
}

// ServerLog is one error log as a run read it.
type ServerLog struct {
	Name      string `json:"name"` // "nginx", "apache", "php-fpm"
	BytesRead int64  `json:"bytes_read"`
	Lines     int64  `json:"lines"`
	// Note says when the log was not read whole: capped, replaced or
	// truncated since the mark, refused (a link, not the lab's file).
	Note string `json:"note,omitempty"`
}

// ServerErrorClass is one class of error line in one log.
type ServerErrorClass struct {
	Class string `json:"class"` // stable name, e.g. nginx_fpm_backlog_full
	Log   string `json:"log"`
	Lines int64  `json:"lines"`
	// Requests is how many failed requests the lines stand for (a request
	// nginx retried on another server, or mod_proxy_fcgi's two lines for
	// one failure, counts once); 0 for lines that are causes, not failures.
	Requests int64 `json:"requests,omitempty"`
	// ClientStatus is the HTTP status the client got for each such
	// request (502, 503, 504, 500).
	ClientStatus int    `json:"client_status,omitempty"`
	What         string `json:"what"`
	Cause        string `json:"cause"`
	Fix          string `json:"fix"`
	// Example is the first such line, cut to 400 bytes, control
	// characters replaced.
	Example string `json:"example"`
}

// Latency summarises response times in milliseconds. For the open model they
// are measured from each request's intended send time.
type Latency struct {
	MinMs  float64 `json:"latency_min_ms"`
	MeanMs float64 `json:"latency_mean_ms"`
	P50Ms  float64 `json:"latency_p50_ms"`
	P90Ms  float64 `json:"latency_p90_ms"`
	// P95Ms is absent (0) in results written before it was recorded.
	P95Ms  float64 `json:"latency_p95_ms,omitempty"`
	P99Ms  float64 `json:"latency_p99_ms"`
	P999Ms float64 `json:"latency_p999_ms"`
	MaxMs  float64 `json:"latency_max_ms"`
}

// PercentilePoint is one point of a latency percentile distribution.
type PercentilePoint struct {
	Percentile float64 `json:"percentile"`
	ValueMs    float64 `json:"value_ms"`
	Count      int64   `json:"count"` // requests at or below ValueMs
}

// Second is one second of a run.
type Second struct {
	TS       float64 `json:"t_s"` // seconds since the measured part began
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	P50Ms    float64 `json:"latency_p50_ms"`
	P99Ms    float64 `json:"latency_p99_ms"`
}

// GeneratorCost is what the load generator itself used.
type GeneratorCost struct {
	CPUSeconds           float64 `json:"cpu_s"`
	RequestsPerCPUSecond float64 `json:"requests_per_cpu_s"`
	// Saturated is set when the generator used most of a core while the
	// server still had idle CPU: the result measures the generator.
	Saturated bool `json:"saturated"`
}

// Environment describes the machine and software a run measured.
type Environment struct {
	Hostname   string            `json:"hostname,omitempty"`
	CPUModel   string            `json:"cpu_model"`
	Cores      int               `json:"cores"`
	MemoryB    int64             `json:"memory_bytes"`
	Kernel     string            `json:"kernel"`
	Versions   map[string]string `json:"versions"` // "nginx": "1.22.1", "php": "8.2.36", "phptune": ...
	MaxStealPc float64           `json:"max_steal_pct"`
	// PHPBuilds name every PHP build (knob php.build) a trial ran: its
	// version, variant, flags and training, and whether its source is older
	// than the installed PHP.
	PHPBuilds []PHPBuild `json:"php_builds,omitempty"`
	// KernelLimits are the host's kernel settings that bound how many
	// connections a stack can queue and hold (package sysctl).
	KernelLimits *KernelLimits `json:"kernel_limits,omitempty"`
}

// KernelLimits are the kernel settings and resource limits a run was
// bounded by, as phptune read them: it changes them only for the length of
// a run with --apply-sysctl, which Applied lists.
type KernelLimits struct {
	// Sysctl maps a setting to the host's own value as the kernel prints
	// it, whitespace collapsed to one space: "net.core.somaxconn": "4096",
	// "net.ipv4.ip_local_port_range": "32768 60999". A setting that could
	// not be read is left out (Errors says why).
	Sysctl map[string]string `json:"sysctl"`
	// NoFile are RLIMIT_NOFILE limits: phptune's own (the generator's)
	// and those of the lab's processes.
	NoFile []NoFileLimit `json:"nofile,omitempty"`
	// Applied lists the settings --apply-sysctl raised for the run; the
	// previous values (in Sysctl) were restored at its end.
	Applied []SysctlChange `json:"applied,omitempty"`
	// Backlogs are the listen backlogs of the configuration the result is
	// about (a bench's lab, a tune's recommendation): asked, and as the
	// kernel caps them at net.core.somaxconn.
	Backlogs []Backlog `json:"backlogs,omitempty"`
	Errors   []string  `json:"errors,omitempty"`
}

// NoFileLimit is one process's RLIMIT_NOFILE; -1 is unlimited.
type NoFileLimit struct {
	Process string `json:"process"` // "phptune", "nginx", "php-fpm" ...
	PID     int    `json:"pid,omitempty"`
	Soft    int64  `json:"soft"`
	Hard    int64  `json:"hard"`
}

// SysctlChange is one setting phptune changed for a run.
type SysctlChange struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Backlog is one listen backlog knob: the value asked for, and what
// listen(2) gives, capped at net.core.somaxconn during the run.
type Backlog struct {
	Knob      string `json:"knob"`
	Asked     int64  `json:"asked"`
	Effective int64  `json:"effective"`
	Somaxconn int64  `json:"somaxconn"`
}

// PHPBuild is one of phptune's builds of PHP as a result names it.
type PHPBuild struct {
	ID         string `json:"id"`
	PHPVersion string `json:"php_version"`
	Variant    string `json:"variant"`
	Minimal    bool   `json:"minimal,omitempty"`
	Training   string `json:"training,omitempty"`
	CFLAGS     string `json:"cflags"`
	LDFLAGS    string `json:"ldflags"`
	// Older is true when the build's source is older than the installed
	// PHP; Warning then says so in plain words.
	Older   bool   `json:"older_than_installed"`
	Warning string `json:"warning,omitempty"`
	// Missing says which PHP build a trial named that is no longer in the
	// cache (removed after the run).
	Missing bool `json:"missing,omitempty"`
}

// Observation is what the observer sampled during a run.
type Observation struct {
	// StartedAt is when the observer took its baseline; sample times (t_s)
	// count from it.
	StartedAt time.Time `json:"started_at,omitzero"`
	IntervalS float64   `json:"interval_s"`
	Samples   []Sample  `json:"samples"`
	Derived   Derived   `json:"derived"`
}

// Sample is the state of the machine and the stack at one instant; counters
// (CPU, requests) are turned into rates over the interval since the previous
// sample.
type Sample struct {
	TS float64 `json:"t_s"`
	// DTS is the length of the interval the rates cover (the time since
	// the previous sample, or since the baseline).
	DTS     float64       `json:"dt_s,omitempty"`
	Machine MachineSample `json:"machine"`
	Groups  []GroupSample `json:"groups"`
	FPM     []FPMStatus   `json:"fpm,omitempty"` // one per pool
	Nginx   *NginxStatus  `json:"nginx,omitempty"`
	Apache  *ApacheStatus `json:"apache,omitempty"`
	Unit    *UnitStatus   `json:"unit,omitempty"`
	// Lighttpd and H2O are those servers' status pages.
	Lighttpd *LighttpdStatus `json:"lighttpd,omitempty"`
	H2O      *H2OStatus      `json:"h2o,omitempty"`
	MariaDB  *MariaDBStatus  `json:"mariadb,omitempty"`
	Queues   []ListenQueue   `json:"listen_queues,omitempty"`
	// SamplerCPUPct is the observer's own CPU while taking this sample, in
	// percent of one core over the interval.
	SamplerCPUPct float64 `json:"sampler_cpu_pct,omitempty"`
	// SpeedProbeMs is the median CPU time of the machine-speed probe's
	// unit of work over the interval (package speedprobe), from
	// SpeedProbeN readings; 0 when none ran.
	SpeedProbeMs float64 `json:"speed_probe_ms,omitempty"`
	SpeedProbeN  int     `json:"speed_probe_n,omitempty"`
	// Errors lists what could not be read this time (a status page that
	// did not answer, a root process that is gone); figures that could not
	// be read are left out rather than reported as zero.
	Errors []string `json:"errors,omitempty"`
}

// MachineSample is the whole machine over one interval, in percent of all
// cores unless the name says otherwise.
type MachineSample struct {
	// Cores is the number of CPUs the percentages are shared over.
	Cores            int     `json:"cores,omitempty"`
	UserPct          float64 `json:"user_pct"`
	SystemPct        float64 `json:"system_pct"`
	SoftIRQPct       float64 `json:"softirq_pct"`
	StealPct         float64 `json:"steal_pct"`
	IdlePct          float64 `json:"idle_pct"`
	RunQueue         int64   `json:"run_queue"`
	ContextSwitchesS float64 `json:"context_switches_per_s"`
	MemAvailableB    int64   `json:"mem_available_bytes"`
	SwapUsedB        int64   `json:"swap_used_bytes"`
	CgroupMemLimitB  int64   `json:"cgroup_memory_limit_bytes,omitempty"` // 0: none
}

// GroupSample is one process group of the stack ("php-fpm workers",
// "nginx workers", "mariadbd", "generator").
type GroupSample struct {
	Name      string  `json:"name"`
	Processes int     `json:"processes"`
	UserPct   float64 `json:"cpu_user_pct"` // percent of one core
	SystemPct float64 `json:"cpu_system_pct"`
	RSSB      int64   `json:"rss_bytes"`
	PSSB      int64   `json:"pss_bytes"`
	USSB      int64   `json:"uss_bytes"`
	// PerProcess is filled for php-fpm workers: each worker's PSS and CPU.
	PerProcess []ProcessSample `json:"processes_detail,omitempty"`
}

// ProcessSample is one process at one instant.
type ProcessSample struct {
	PID    int     `json:"pid"`
	CPUPct float64 `json:"cpu_pct"`
	RSSB   int64   `json:"rss_bytes"`
	PSSB   int64   `json:"pss_bytes"`
	USSB   int64   `json:"uss_bytes"`
}

// FPMStatus is php-fpm's status page, read over FastCGI from the pool socket.
type FPMStatus struct {
	Pool               string         `json:"pool"`
	ProcessManager     string         `json:"process_manager"`
	AcceptedConn       int64          `json:"accepted_conn"`
	ListenQueue        int64          `json:"listen_queue"`
	MaxListenQueue     int64          `json:"max_listen_queue"`
	ListenQueueLen     int64          `json:"listen_queue_len"`
	IdleProcesses      int64          `json:"idle_processes"`
	ActiveProcesses    int64          `json:"active_processes"`
	TotalProcesses     int64          `json:"total_processes"`
	MaxActiveProcesses int64          `json:"max_active_processes"`
	MaxChildrenReached int64          `json:"max_children_reached"`
	SlowRequests       int64          `json:"slow_requests"`
	Workers            []FPMWorker    `json:"workers,omitempty"`
	Error              string         `json:"error,omitempty"` // when the page could not be read
	Extra              map[string]any `json:"extra,omitempty"`
}

// FPMWorker is one worker line of the full status page.
type FPMWorker struct {
	PID             int     `json:"pid"`
	State           string  `json:"state"`
	Requests        int64   `json:"requests"`
	LastRequestCPU  float64 `json:"last_request_cpu_pct"`
	LastRequestMemB int64   `json:"last_request_memory_bytes"`
	// RequestDurationUs is the current (state Running) or last request's
	// duration in microseconds; RequestURI and Script name that request.
	RequestDurationUs int64  `json:"request_duration_us,omitempty"`
	RequestURI        string `json:"request_uri,omitempty"`
	Script            string `json:"script,omitempty"`
}

// NginxStatus is nginx's stub_status.
type NginxStatus struct {
	Active   int64 `json:"active"`
	Accepts  int64 `json:"accepts"`
	Handled  int64 `json:"handled"`
	Requests int64 `json:"requests"`
	Reading  int64 `json:"reading"`
	Writing  int64 `json:"writing"`
	Waiting  int64 `json:"waiting"`
}

// UnitStatus is NGINX Unit's /status (its control API) for the lab's
// application: Unit's router accepts every connection and holds requests
// for the application processes itself, so its queue is
// RequestsActive above the processes running, not the kernel's.
type UnitStatus struct {
	ConnectionsActive int64 `json:"connections_active"`
	ConnectionsIdle   int64 `json:"connections_idle"`
	RequestsTotal     int64 `json:"requests_total"`
	// ProcessesRunning, Starting and Idle are the application's processes
	// (the PHP workers); MaxProcesses is unit.processes.
	ProcessesRunning  int64 `json:"processes_running"`
	ProcessesStarting int64 `json:"processes_starting,omitempty"`
	ProcessesIdle     int64 `json:"processes_idle"`
	MaxProcesses      int64 `json:"max_processes,omitempty"`
	// RequestsActive are the application's requests being served or
	// waiting in the router for a process.
	RequestsActive int64 `json:"requests_active"`
}

// ApacheStatus is Apache's mod_status page (?auto), the status request
// itself left out. Workers are request slots: threads with event, children
// (PHP workers with mod_php) with prefork. The scoreboard counts say what
// the slots were doing; Open slots have no process (room to grow up to
// MaxRequestWorkers).
type ApacheStatus struct {
	MPM           string  `json:"mpm,omitempty"`
	BusyWorkers   int64   `json:"busy_workers"`
	IdleWorkers   int64   `json:"idle_workers"`
	TotalAccesses int64   `json:"total_accesses"`
	ReqPerSec     float64 `json:"req_per_sec,omitempty"`
	// Processes and ConnsAsyncKeepAlive are the event MPM's: children, and
	// kept-alive connections parked without a thread.
	Processes           int64 `json:"processes,omitempty"`
	ConnsTotal          int64 `json:"conns_total,omitempty"`
	ConnsAsyncKeepAlive int64 `json:"conns_async_keepalive,omitempty"`
	// Scoreboard: '_' Waiting, 'S' Starting, 'R' Reading, 'W' Writing (the
	// request is being served, PHP included), 'K' KeepAlive (a connection
	// held between requests), 'C' Closing, 'L' Logging, 'G' Finishing,
	// 'I' IdleCleanup, 'D' DNS, '.' Open.
	Slots     int64 `json:"slots"`
	Waiting   int64 `json:"waiting"`
	Starting  int64 `json:"starting,omitempty"`
	Reading   int64 `json:"reading"`
	Writing   int64 `json:"writing"`
	KeepAlive int64 `json:"keepalive"`
	Closing   int64 `json:"closing,omitempty"`
	Logging   int64 `json:"logging,omitempty"`
	Finishing int64 `json:"finishing,omitempty"`
	Cleanup   int64 `json:"cleanup,omitempty"`
	DNS       int64 `json:"dns,omitempty"`
	Open      int64 `json:"open"`
}

// LighttpdStatus is lighttpd's mod_status page (?auto) and its statistics
// page (mod_fastcgi's counters), the status request's own connection left
// out. With server.max-worker > 0 each worker has its own: the figures are
// the one worker's that answered.
type LighttpdStatus struct {
	// BusyServers are the open client connections (kept-alive ones
	// included), IdleServers the rest of server.max-connections.
	BusyServers   int64 `json:"busy_servers"`
	IdleServers   int64 `json:"idle_servers"`
	TotalAccesses int64 `json:"total_accesses"`
	TotalKBytes   int64 `json:"total_kbytes"`
	UptimeS       int64 `json:"uptime_s"`
	// The connections by state (the scoreboard): 'k' kept alive between
	// requests; '.', 'q', 'r', 'R' reading a request; 'h', 's' handling
	// it (waiting for php-fpm among them); 'w', 'W', 'S' writing the
	// response; 'C', 'E' closing.
	KeepAlive int64 `json:"keepalive"`
	Reading   int64 `json:"reading"`
	Handling  int64 `json:"handling"`
	Writing   int64 `json:"writing"`
	Closing   int64 `json:"closing,omitempty"`
	// From the statistics page, when it was read: requests at php-fpm now,
	// requests sent since start, and connects to php-fpm refused
	// (overloaded: its listen queue was full) or failed (died), summed
	// over the backends.
	FastCGIActive     int64 `json:"fastcgi_active"`
	FastCGIRequests   int64 `json:"fastcgi_requests"`
	FastCGIOverloaded int64 `json:"fastcgi_overloaded"`
	FastCGIDied       int64 `json:"fastcgi_died"`
}

// H2OStatus is h2o's status handler (its JSON), the status request's own
// connection left out.
type H2OStatus struct {
	Connections    int64 `json:"connections"`
	MaxConnections int64 `json:"max_connections"`
	WorkerThreads  int64 `json:"worker_threads"`
	// InFlight are the requests being served, Idle the connections kept
	// alive between requests.
	InFlight int64 `json:"in_flight"`
	Idle     int64 `json:"idle"`
	// Errors5xx are the 500, 502 and 503 responses h2o made itself since
	// it started (502: php-fpm could not be reached).
	Errors500 int64 `json:"errors_500"`
	Errors502 int64 `json:"errors_502"`
	Errors503 int64 `json:"errors_503"`
}

// MariaDBStatus is a subset of SHOW GLOBAL STATUS.
type MariaDBStatus struct {
	ThreadsConnected   int64 `json:"threads_connected"`
	ThreadsRunning     int64 `json:"threads_running"`
	Questions          int64 `json:"questions"`
	SlowQueries        int64 `json:"slow_queries"`
	InnodbRowLockWaits int64 `json:"innodb_row_lock_waits"`
}

// ListenQueue is a listening socket's accept queue as the kernel reports it.
type ListenQueue struct {
	Socket  string `json:"socket"` // path or 127.0.0.1:port
	Owner   string `json:"owner"`  // "php-fpm", "nginx"
	Queued  int64  `json:"queued"`
	Backlog int64  `json:"backlog"` // the kernel's limit; -1 when unknown
	// AskedBacklog is the backlog the configuration asked listen(2) for;
	// Backlog is below it when net.core.somaxconn capped it.
	AskedBacklog int64 `json:"asked_backlog,omitempty"`
	// Sockets counts the listening sockets on the address when there are
	// several (SO_REUSEPORT: nginx.reuseport gives each worker its own):
	// Queued is then their sum and Backlog the smallest one's.
	Sockets int `json:"sockets,omitempty"`
}

// Derived holds the figures computed from a run's samples that the tuner and
// the report use.
type Derived struct {
	// CPUSecondsPerRequest per group name.
	CPUSecondsPerRequest map[string]float64 `json:"cpu_s_per_request,omitempty"`
	// WorkerPSS percentiles across php-fpm workers after warm-up: the memory
	// cost of one more worker.
	WorkerPSSP50B int64 `json:"worker_pss_p50_bytes"`
	WorkerPSSP95B int64 `json:"worker_pss_p95_bytes"`
	WorkerPSSMaxB int64 `json:"worker_pss_max_bytes"`
	// OtherPSSB is the PSS of everything in the stack but the fpm workers.
	OtherPSSB int64 `json:"other_pss_bytes"`
	// WorkerImbalance is the busiest worker's share of its pool's CPU (1/n is even).
	WorkerImbalance float64 `json:"worker_imbalance"`
	MaxStealPct     float64 `json:"max_steal_pct"`
	// MeanStealPct and MeanSoftIRQPct are the machine's stolen and softirq
	// time over the window, in percent of all its CPU (time-weighted means).
	MeanStealPct   float64 `json:"mean_steal_pct,omitempty"`
	MeanSoftIRQPct float64 `json:"mean_softirq_pct,omitempty"`
	// SamplerCPUPct is the observer's mean cost in percent of one core.
	SamplerCPUPct float64 `json:"sampler_cpu_pct,omitempty"`
	// SpeedProbeMs is the machine-speed probe's CPU time for its unit of
	// work over the window (the median of the samples' medians): how slow
	// the machine ran during the measurement; 0 unknown. CPU per request
	// divided by it compares runs at a common machine speed.
	SpeedProbeMs float64  `json:"speed_probe_ms,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
}

// Tune is one tuning run.
type Tune struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // always "tune"
	ID            string    `json:"id"`
	StartedAt     time.Time `json:"started_at"`
	Command       string    `json:"command,omitempty"`
	App           string    `json:"app"`
	Workload      string    `json:"workload"`
	// Server is the web server the tune ran (the start's server knob:
	// nginx-fpm, apache-event-fpm, apache-prefork-modphp); empty in
	// results stored before servers could be tuned, which ran nginx-fpm.
	Server    string            `json:"server,omitempty"`
	Objective string            `json:"objective"` // "throughput", "latency" or "capacity"
	Limits    Limits            `json:"limits"`
	Start     map[string]string `json:"start_config"`
	// StartFrom is "live" when Start is a live site's configuration
	// (production's pool and php.ini): tables call it live, and the
	// distro's defaults are a baseline. "" for the distro's defaults or a
	// knob file.
	StartFrom   string            `json:"start_from,omitempty"`
	Recommended map[string]string `json:"recommended_config"`
	Trials      []Trial           `json:"trials"`
	Changes     []Effect          `json:"changes"` // each changed knob's measured effect
	// Decisions are the categorical comparisons the search made (adopted
	// or not), each with its confidence interval.
	Decisions []Decision `json:"decisions,omitempty"`
	// ProfileFindings are what a profile of the start pointed to (tune
	// --profile): their challenges were added to the search's, and
	// Decisions say whether each won.
	ProfileFindings []ProfileFinding `json:"profile_findings,omitempty"`
	Holdout         *Holdout         `json:"holdout,omitempty"`
	// Verdict is the holdout's answer, as every report states it
	// (HoldoutVerdict); nil in results stored before it was recorded
	// (TheVerdict then derives it).
	Verdict *Verdict `json:"verdict,omitempty"`
	// Baselines are the rules of thumb beside the recommendation.
	Baselines []Baseline `json:"baselines,omitempty"`
	// Sizing are the knobs sized from what the stack reported (opcache,
	// the realpath cache, the InnoDB buffer pool, nginx's workers), each
	// with its numbers, raised or kept.
	Sizing []SizeDecision `json:"sizing,omitempty"`
	Curves []Curve        `json:"curves,omitempty"` // throughput vs concurrency
	// Capacity is set by a capacity tune (objective "capacity"): the
	// start's and the recommendation's capacity at the SLO.
	Capacity      *TuneCapacity     `json:"capacity,omitempty"`
	Files         map[string]string `json:"files,omitempty"` // file name -> contents
	Diff          string            `json:"diff,omitempty"`  // unified diff start -> recommended
	PredictedMemB int64             `json:"predicted_memory_bytes"`
	MeasuredMemB  int64             `json:"measured_memory_bytes"`
	Environment   *Environment      `json:"environment,omitempty"`
	Warnings      []string          `json:"warnings,omitempty"`
	// Blocked are the connections the sealed site lab's processes tried
	// to open outside the lab over the whole tune (see Bench.Blocked).
	Blocked []Blocked `json:"blocked,omitempty"`
	WallS   float64   `json:"wall_s"`
}

// ProfileFinding is one finding of phptune profile: the evidence with
// its measured share and the challenges it adds to a tune.
type ProfileFinding struct {
	ID         string   `json:"id"`
	Share      float64  `json:"share"`
	Evidence   string   `json:"evidence"`
	Challenges []string `json:"challenges,omitempty"`
	AppIssue   bool     `json:"app_issue,omitempty"`
}

// Limits are the user's constraints.
type Limits struct {
	MemoryBudgetB int64   `json:"memory_budget_bytes,omitempty"`
	MaxErrorRate  float64 `json:"max_error_rate"`
	SLOP99Ms      float64 `json:"slo_p99_ms,omitempty"`
}

// Trial is one measurement of one configuration.
type Trial struct {
	N           int               `json:"n"`
	Phase       string            `json:"phase"` // "knee", "workers", "categorical", "holdout", "drift" ...
	Config      map[string]string `json:"config"`
	Connections int               `json:"connections"`
	Status      string            `json:"status"` // "ok", "failed", "violates"
	FailReason  string            `json:"fail_reason,omitempty"`
	Log         string            `json:"log,omitempty"`
	Bench       *Bench            `json:"bench,omitempty"`
}

// Effect is the measured effect of one change, as a ratio recommended/start
// with a confidence interval.
type Effect struct {
	Knob       string  `json:"knob"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	Ratio      float64 `json:"throughput_ratio"`
	CILow      float64 `json:"ci_low"`
	CIHigh     float64 `json:"ci_high"`
	Confidence float64 `json:"confidence"` // e.g. 0.95
	Verdict    string  `json:"verdict"`    // "better", "worse", "no significant difference"
	// Effective is set when the kernel did not give To during the trials:
	// a listen backlog capped by net.core.somaxconn ("128, capped by
	// net.core.somaxconn"), so the ratio is not To's effect.
	Effective string `json:"effective_value,omitempty"`
}

// Decision is one paired comparison of a challenger (a categorical change
// such as pm=static) against the incumbent configuration.
type Decision struct {
	Name    string  `json:"name"`    // "pm=static"
	Changes string  `json:"changes"` // "pm: dynamic -> static"
	Ratio   float64 `json:"score_ratio"`
	CILow   float64 `json:"ci_low"`
	CIHigh  float64 `json:"ci_high"`
	Verdict string  `json:"verdict"`
	Adopted bool    `json:"adopted"`
	Rounds  int     `json:"rounds"`
	Skipped string  `json:"skipped,omitempty"` // why it was not measured
	// Statistic is what decided ("throughput", "p99", "stack CPU per
	// request"); Basis says it in a line with the correction applied.
	Statistic string `json:"statistic,omitempty"`
	Basis     string `json:"basis,omitempty"`
}

// Holdout is the final start-vs-recommended re-measurement.
type Holdout struct {
	Rounds          int     `json:"rounds"`
	ThroughputRatio float64 `json:"throughput_ratio"`
	ThroughputCILow float64 `json:"throughput_ci_low"`
	ThroughputCIHi  float64 `json:"throughput_ci_high"`
	P99Ratio        float64 `json:"p99_ratio"`
	P99CILow        float64 `json:"p99_ci_low"`
	P99CIHigh       float64 `json:"p99_ci_high"`
	StartRPS        float64 `json:"start_rps"`
	RecommendedRPS  float64 `json:"recommended_rps"`
	StartP99Ms      float64 `json:"start_p99_ms"`
	RecommendedP99  float64 `json:"recommended_p99_ms"`
	// Confidence of the intervals: 0.95, or stricter per look when the
	// holdout could add rounds to an undecided result (PlannedRounds up
	// to MaxRounds); 0 in results written before it was recorded.
	Confidence    float64 `json:"confidence,omitempty"`
	PlannedRounds int     `json:"planned_rounds,omitempty"`
	MaxRounds     int     `json:"max_rounds,omitempty"`
	// Statistic is what the holdout's verdict rests on: "throughput", or on
	// a CPU-bound page (both configurations reached 90% of their stack
	// ceiling in most rounds) "stack CPU per request", which steal does
	// not disturb. CPURatio is start's ÷ recommended's stack CPU per
	// request (> 1: the recommendation is faster), with its interval.
	Statistic string  `json:"statistic,omitempty"`
	CPURatio  float64 `json:"cpu_ratio,omitempty"`
	CPUCILow  float64 `json:"cpu_ci_low,omitempty"`
	CPUCIHigh float64 `json:"cpu_ci_high,omitempty"`
	// When Statistic is "stack CPU per request at the machine's speed",
	// CPURatio and its interval are at the machine's speed (each run's CPU
	// per request ÷ its speed probe's reading) and RawCPURatio is the same
	// without the probe.
	RawCPURatio      float64 `json:"raw_cpu_ratio,omitempty"`
	RawCPUCILow      float64 `json:"raw_cpu_ci_low,omitempty"`
	RawCPUCIHigh     float64 `json:"raw_cpu_ci_high,omitempty"`
	StartCPUMs       float64 `json:"start_stack_cpu_ms_per_request,omitempty"`
	RecommendedCPUMs float64 `json:"recommended_stack_cpu_ms_per_request,omitempty"`
	// StackCeilingRPS is the recommended stack's ceiling: (cores − steal −
	// softirq − the generator's CPU) ÷ its stack CPU per request, the mean
	// over its holdout runs; ShareOfCeiling its throughput ÷ that ceiling.
	StackCeilingRPS float64 `json:"stack_ceiling_rps,omitempty"`
	ShareOfCeiling  float64 `json:"share_of_stack_ceiling,omitempty"`
}

// Curve is throughput and p99 against concurrency for one configuration.
type Curve struct {
	Label  string       `json:"label"` // "start", "recommended"
	Points []CurvePoint `json:"points"`
}

// CurvePoint is one concurrency level of a Curve.
type CurvePoint struct {
	Connections   int     `json:"connections"`
	ThroughputRPS float64 `json:"throughput_rps"`
	P99Ms         float64 `json:"latency_p99_ms"`
	ErrorRate     float64 `json:"error_rate"`
}
