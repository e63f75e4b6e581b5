package stacksession

import (
	"os"
	"strconv"
	"strings"
)

// MemAvailable reads MemAvailable from /proc/meminfo, in bytes (0 when it
// cannot be read).
func MemAvailable() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	return parseMemAvailable(string(data))
}

// parseMemAvailable finds MemAvailable in meminfo's text, in bytes.
func parseMemAvailable(meminfo string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n * 1024
		}
	}
	return 0
}
