package profile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
)

// Finding is what a profile points to: the evidence with its measured
// share, and the configurations worth measuring because of it
// (Challenges: knob assignments a tune tries against its incumbent), or,
// for an application's own hot spot, no knob at all.
type Finding struct {
	ID       string  `json:"id"`
	Share    float64 `json:"share"` // of the samples named in Evidence
	Evidence string  `json:"evidence"`
	// Challenges are challenge specs ("opcache.huge_code_pages=on",
	// "realpath_cache_size=16M;realpath_cache_ttl=3600"): the assignments
	// of one are tried together.
	Challenges []string `json:"challenges,omitempty"`
	// AppIssue says the time is the application's, not the server's.
	AppIssue bool `json:"app_issue,omitempty"`
}

// CacheState is what the lab's caches held after a run (the runtime
// status script's counters), as far as findings need it.
type CacheState struct {
	OpcacheEnabled   bool
	OpcacheFull      bool
	OpcacheFreeShare float64 // free memory of opcache.memory_consumption
	InternedFull     bool    // the interned strings buffer is (nearly) full
	KeysFull         bool    // cached keys at max_accelerated_files
	ValidateTS       bool    // opcache.validate_timestamps is on
	// Server is the lab's server knob: kept FastCGI connections are
	// nginx's (fastcgi_keepalive) alone.
	Server string
	Listen string // php-fpm's listen knob: unix or tcp
}

// Thresholds of the findings, as shares of the PHP workers' samples.
const (
	HugePagesShare = 0.10 // allocator + page faults
	// FilesShare is low: its challenges are cheap to measure, and 3% is
	// about the smallest difference the search's paired rounds resolve.
	FilesShare   = 0.03 // stat/open/read in the kernel
	CompileShare = 0.05 // compiling scripts with opcache on
	NetworkShare = 0.10 // kernel networking
	MySQLShare   = 0.10 // mysqlnd/PDO (native) or the database's wait (PHP, wall clock)
	AppShare     = 0.30 // one PHP function's self time
)

// Findings reads a native and a PHP profile (either may be nil) and the
// caches' state. Findings come largest share first.
func Findings(n *Native, p *PHP, c CacheState) []Finding {
	var out []Finding
	if n != nil {
		php := n.ByRole[RolePHP]
		share := func(comps ...string) float64 {
			if php == 0 {
				return 0
			}
			s := 0
			for _, c := range comps {
				s += n.PHPComponents[c]
			}
			return float64(s) / float64(php)
		}
		if s := share(CompAllocator, CompKMem); s >= HugePagesShare {
			out = append(out, Finding{ID: "huge-pages", Share: s,
				Evidence:   fmt.Sprintf("the allocator and page faults take %.1f%% of the PHP workers' samples (≥ %.0f%%)", 100*s, 100*HugePagesShare),
				Challenges: []string{knob.ZendAllocHugePagesKnob + "=on", "opcache.huge_code_pages=on"}})
		}
		if s := share(CompKFiles); s >= FilesShare {
			f := Finding{ID: "file-lookups", Share: s,
				Evidence: fmt.Sprintf("stat/open/read in the kernel take %.1f%% of the PHP workers' samples (≥ %.0f%%): include's file checks", 100*s, 100*FilesShare)}
			if c.ValidateTS {
				f.Challenges = append(f.Challenges, "opcache.validate_timestamps=off")
			}
			f.Challenges = append(f.Challenges, "realpath_cache_size=16M;realpath_cache_ttl=3600")
			out = append(out, f)
		}
		if s := share(CompCompiler); s >= CompileShare && c.OpcacheEnabled {
			f := Finding{ID: "compiling", Share: s,
				Evidence: fmt.Sprintf("compiling scripts takes %.1f%% of the PHP workers' samples with opcache on", 100*s)}
			switch {
			case c.OpcacheFull || c.OpcacheFreeShare < 0.05:
				f.Evidence += "; opcache's memory is full"
				f.Challenges = append(f.Challenges, "opcache.memory_consumption=256")
			case c.KeysFull:
				f.Evidence += "; opcache's key table is full"
				f.Challenges = append(f.Challenges, "opcache.max_accelerated_files=100000")
			case c.InternedFull:
				f.Evidence += "; the interned strings buffer is full"
				f.Challenges = append(f.Challenges, "opcache.interned_strings_buffer=32")
			default:
				f.Evidence += "; opcache has room: scripts are recompiled for another reason (timestamps, invalidation)"
				if c.ValidateTS {
					f.Challenges = append(f.Challenges, "opcache.validate_timestamps=off")
				}
			}
			out = append(out, f)
		}
		if s := share(CompKNet); s >= NetworkShare {
			f := Finding{ID: "fpm-socket", Share: s,
				Evidence: fmt.Sprintf("kernel networking takes %.1f%% of the PHP workers' samples (≥ %.0f%%): the FastCGI socket", 100*s, 100*NetworkShare)}
			if c.Listen == "tcp" {
				f.Challenges = append(f.Challenges, "listen=unix")
			}
			if c.Server == "nginx-fpm" {
				f.Challenges = append(f.Challenges, "fastcgi_keepalive=most")
			}
			out = append(out, f)
		}
		if s := share(CompMySQL); s >= MySQLShare {
			out = append(out, Finding{ID: "database", Share: s,
				Evidence:   fmt.Sprintf("mysqlnd/PDO take %.1f%% of the PHP workers' samples (≥ %.0f%%)", 100*s, 100*MySQLShare),
				Challenges: []string{"mariadb.innodb_buffer_pool_size=512M"}})
		}
	}
	if p != nil && p.Samples > 0 {
		top := Top(p.Self, p.Samples, 1)
		if len(top) == 1 && top[0].Share >= AppShare && !strings.HasPrefix(top[0].Name, "[") {
			out = append(out, Finding{ID: "app-hot-function", Share: top[0].Share, AppIssue: true,
				Evidence: fmt.Sprintf("one PHP function, %s, runs in %.1f%% of the PHP samples (≥ %.0f%%): the application's own work, which no server knob changes", top[0].Name, 100*top[0].Share, 100*AppShare)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Share > out[j].Share })
	return out
}
