package stacksession

import "github.com/phptune/phptune/internal/watch/proc"

// MemAvailable reads MemAvailable from /proc/meminfo, in bytes (0 when it
// cannot be read).
func MemAvailable() int64 {
	mi, err := proc.SystemMeminfo()
	if err != nil {
		return 0
	}
	return mi.Available
}
