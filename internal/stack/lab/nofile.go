package lab

import (
	"fmt"
	"syscall"

	"github.com/phptune/phptune/internal/model/knob"
)

// openFilesNeeded is how many open files a process of the lab may need
// for cfg: nginx holds a client socket and an upstream one per connection,
// so 2 x worker_connections per worker plus its logs and listening
// sockets; nginx.worker_rlimit_nofile, when set, is what nginx asks for.
// 0 when the configuration asks nothing beyond the usual.
func openFilesNeeded(cfg knob.Config) uint64 {
	if cfg.Server() != knob.NginxFPM {
		return 0
	}
	need := uint64(2*cfg.Int("nginx.worker_connections") + 64)
	if n := cfg.Int("nginx.worker_rlimit_nofile"); n > 0 {
		need = max(need, uint64(n))
	}
	return need
}

// raiseOpenFiles gives the processes the lab starts from now on the hard
// open-files limit as their soft one (Go raises its own soft limit at
// start but hands children the original, often 1024, unless the program
// sets the limit itself), so that nginx's worker_connections are not cut by
// it; nginx sets worker_rlimit_nofile itself, within that hard limit. A
// configuration that needs more than the hard limit is refused, before
// anything starts, with the fix.
func raiseOpenFiles(cfg knob.Config) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return nil
	}
	if need := openFilesNeeded(cfg); need > rl.Max {
		return fmt.Errorf("nginx.worker_connections=%s (and nginx.worker_rlimit_nofile=%s) need about %d open files per nginx worker, above this process's hard limit of %d: raise it (ulimit -Hn %d as root, or LimitNOFILE= in the unit that starts phptune) or lower nginx.worker_connections to at most %d",
			cfg["nginx.worker_connections"], cfg["nginx.worker_rlimit_nofile"], need, rl.Max, need, (rl.Max-64)/2)
	}
	if rl.Cur == rl.Max {
		return nil
	}
	rl.Cur = rl.Max
	// syscall.Setrlimit (not x/sys/unix's) also tells Go's exec to hand
	// children this limit rather than the one the process started with.
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
}
