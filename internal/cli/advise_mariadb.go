package cli

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost"
)

// printMariaDBAdvice prints the database's figures and the knob lines
// apply takes.
func printMariaDBAdvice(env *Env, m *advise.MariaDBAdvice) {
	if m == nil || m.Error != "" {
		return
	}
	fmt.Fprintf(env.Stdout, "\nMariaDB %s (pid %d, %s): up %ds; connections max used %d of %d (pools' pm.max_children %d); buffer pool %.0f MiB for InnoDB data %.1f MiB, hit rate %s; holds %.1f MiB\n",
		m.Version, m.PID, m.Socket, m.UptimeS, m.MaxUsedConnections, m.MaxConnections, m.PoolsMaxChildren,
		float64(m.BufferPoolB)/(1<<20), float64(m.DataIndexB)/(1<<20), hitRate(m.HitRate), float64(m.ResidentB)/(1<<20))
	if m.Changed() {
		fmt.Fprintf(env.Stdout, "MariaDB: put these in a knob file and run phptune apply --knobs FILE (it writes %s in MariaDB's last included directory and sets them live):\n%s\n",
			livehost.MariaDBDropInName, strings.Join(m.Knobs, "\n"))
	}
}

func hitRate(r float64) string {
	if r < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.2f%%", 100*r)
}
