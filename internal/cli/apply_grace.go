package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/live/livehost"
)

// printGrace says, when the master's reloads are not graceful yet, what
// apply does about it first (grace: livehost.GraceChange's change).
func printGrace(w io.Writer, grace *liveapply.Change) {
	if grace == nil {
		return
	}
	fmt.Fprintf(w, "php-fpm's configuration sets no process_control_timeout (0: a reload kills the requests in flight). First, in a transaction of its own: process_control_timeout = %ds in %s, reloaded at a moment the pool is idle (waiting at most %v for one); every later reload lets requests finish. phptune rollback undoes the recommendation and leaves this; a second rollback removes it.\n",
		int(livehost.ReloadGrace/time.Second), grace.Path, livehost.ReloadGrace)
}

// printProbe reports what the requests sent to the pool during php-fpm's
// reloads saw (who: "apply" or "rollback").
func printProbe(w io.Writer, who string, p *livehost.ReloadProbe) {
	if p == nil {
		return
	}
	for i, r := range p.Runs() {
		what := "php-fpm's reload"
		if i > 0 {
			what = "php-fpm's reload with the restored configuration"
		}
		fmt.Fprintf(w, "%s: during %s, %s\n", who, what, r)
	}
}
