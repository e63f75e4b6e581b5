package knob

import (
	"fmt"
	"runtime"
	"strconv"
)

// Topology knobs: how the web server reaches php-fpm.
const (
	// PoolsKnob splits php-fpm into pools on sockets of their own behind
	// an nginx upstream. Several php-fpm masters would do the same:
	// a master answers no request (its workers accept on the pool's
	// socket), so what several masters buy is several sockets, each with
	// its own accept queue and its own workers, which pools of one master
	// give with one process to start, reload and watch.
	PoolsKnob = "fpm.pools"
	// FastCGIKeepaliveKnob keeps idle FastCGI connections from each nginx
	// worker to php-fpm (upstream keepalive with fastcgi_keep_conn on).
	FastCGIKeepaliveKnob = "nginx.fastcgi_keepalive"
)

// CPUs is the number of CPUs nginx's worker_processes auto starts a
// worker for, as the keep-alive rule counts them. The model does no I/O;
// runtime.NumCPU counts the CPUs this process may run on, which is what a
// lab started from it gets.
var CPUs = runtime.NumCPU

// NginxWorkers is the number of nginx worker processes c starts.
func (c Config) NginxWorkers() int {
	if v := c.value(byName["nginx.worker_processes"]); v != "auto" {
		n, _ := strconv.Atoi(v)
		return max(1, n)
	}
	return max(1, CPUs())
}

// Pools is the number of php-fpm pools c runs (fpm.pools, 1 when unset).
func (c Config) Pools() int {
	n, _ := strconv.Atoi(c.value(byName[PoolsKnob]))
	return max(1, n)
}

// PoolShares returns one configuration per pool of c (see PoolsKnob):
// pm.max_children, pm.start_servers and the spare bounds split as evenly
// as the whole numbers allow, the first pools taking the remainder, each
// at least 1; every other knob as in c. Splitting each bound the same way
// keeps php-fpm's order (min_spare <= start <= max_spare <= max_children)
// in every share when it holds in c. A configuration of one pool is
// returned as it is.
func (c Config) PoolShares() []Config {
	n := c.Pools()
	if n == 1 {
		return []Config{c}
	}
	out := make([]Config, n)
	for i := range out {
		out[i] = c.Clone()
		out[i][PoolsKnob] = "1"
		for _, name := range []string{"pm.max_children", "pm.start_servers", "pm.min_spare_servers", "pm.max_spare_servers"} {
			out[i][name] = strconv.FormatInt(share(c.Int(name), n, i), 10)
		}
	}
	return out
}

// share is pool i's part of total split n ways: the first total%n pools
// take one more; at least 1.
func share(total int64, n, i int) int64 {
	s := total / int64(n)
	if int64(i) < total%int64(n) {
		s++
	}
	return max(1, s)
}

// MostFastCGIKeepalive is the largest nginx.fastcgi_keepalive c's pools
// allow (see validateTopology): 0 when even one kept connection per nginx
// worker would be too many.
func (c Config) MostFastCGIKeepalive() int {
	pools := c.Pools()
	smallest := share(c.Int("pm.max_children"), pools, pools-1)
	return int((smallest - 1) / int64(c.NginxWorkers()))
}

// validateTopology checks the topology rules: every pool needs a worker
// of its own, and the FastCGI connections nginx keeps idle must leave a
// worker free in every pool. php-fpm ties a worker to a kept connection
// until nginx closes it, and nginx keeps a finished connection while its
// worker's cache has room: with caches that can hold every worker of a
// pool, all of them can end up waiting on idle connections of other nginx
// workers, and the next request to the pool waits for upstream
// keepalive_timeout (60 s). When the caches hold fewer (kept x nginx
// workers < the pool's workers), a connection beyond them is closed after
// its request and frees its worker.
func (c Config) validateTopology() []error {
	var errs []error
	pools, maxc := c.Pools(), c.Int("pm.max_children")
	if UsedBy(byName[PoolsKnob], c.Server()) && int64(pools) > maxc {
		errs = append(errs, fmt.Errorf("%s=%d is greater than pm.max_children=%d: each pool needs a worker of its own; valid: 1..%d (pm.max_children), or raise pm.max_children", PoolsKnob, pools, maxc, min(maxc, 64)))
		return errs
	}
	if !UsedBy(byName[FastCGIKeepaliveKnob], c.Server()) {
		return nil
	}
	kept := c.Int(FastCGIKeepaliveKnob)
	workers := c.NginxWorkers()
	smallest := share(maxc, pools, pools-1)
	if kept > 0 && kept*int64(workers) >= smallest {
		per := "pm.max_children"
		if pools > 1 {
			per = fmt.Sprintf("the smallest pool's share of pm.max_children (%d split %d ways)", maxc, pools)
		}
		errs = append(errs, fmt.Errorf("%s=%d keeps up to %d idle FastCGI connections (%d x %d nginx workers), not fewer than %s = %d: php-fpm ties a worker to each kept connection and the pool could stall; valid: 0..%d, or raise pm.max_children",
			FastCGIKeepaliveKnob, kept, kept*int64(workers), kept, workers, per, smallest, (smallest-1)/int64(workers)))
	}
	return errs
}
