package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/termsafe"
)

// serverNames are the programs a lab competes with when they run beside it
// (by /proc/PID/comm, which the kernel cuts at 15 bytes).
var serverNames = []string{"php-fpm", "nginx", "apache2", "httpd", "lighttpd", "caddy", "h2o", "unitd", "mariadbd", "mysqld", "memcached", "redis-server"}

func isServer(comm string) (string, bool) {
	for _, n := range serverNames {
		if comm == n || strings.HasPrefix(comm, n) {
			return n, true
		}
	}
	return "", false
}

// Neighbours lists the web, PHP and database servers running on this
// machine outside phptune's labs, one line each ("php-fpm8.2 (pid 812,
// 6 processes)"; a name's control characters are escaped, as any account
// names its processes): a lab beside them shares the CPUs, memory and
// disks, so its numbers depend on their load, and theirs on the lab's.
func Neighbours() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	type proc struct {
		comm string
		ppid int
	}
	procs := map[int]proc{}
	labs := []byte(Root() + "/")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		if _, ok := isServer(name); !ok {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmd), string(labs)) {
			continue
		}
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		procs[pid] = proc{name, st.ppid}
	}
	// One line per tree: a server whose parent is the same program is
	// counted under its top.
	count := map[int]int{}
	for pid := range procs {
		top := pid
		for {
			p, ok := procs[procs[top].ppid]
			if !ok || p.comm != procs[top].comm {
				break
			}
			top = procs[top].ppid
		}
		count[top]++
	}
	var out []string
	for top, n := range count {
		out = append(out, fmt.Sprintf("%s (pid %d, %d process%s)", termsafe.Line(procs[top].comm), top, n, map[bool]string{true: "", false: "es"}[n == 1]))
	}
	sort.Strings(out)
	return out
}
