package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/liveapply"
	"github.com/phptune/phptune/internal/livehost"
)

// addErrorRate adds the settle window's error-rate comparison to plan
// (after every server's step): the 5xx rate in the access logs of the
// nginx servers that pass to the pool (never another server's) over
// the settle window after the reloads against as long before the apply,
// or, without a log to read, the pool's status page over the same
// lengths (measured now, before anything changes). A rate worse after
// fails the health check and rolls the change back with both numbers.
func addErrorRate(env *Env, plan *liveapply.Plan, np *nginxPart, live *liveFPM, settle time.Duration) error {
	if settle <= 0 {
		return nil
	}
	logs, passes := np.poolLogs(live.pool.Listen)
	if !passes {
		fmt.Fprintf(env.Stderr, "apply: no running nginx passes to pool %s (%s): no web server's access log is the pool's, none is read\n", live.pool.Name, live.pool.Listen)
	}
	if len(logs) == 0 && live.pool.StatusPath != "" {
		fmt.Fprintf(env.Stderr, "apply: no access log of pool %s to read: measuring its status page for %v before the change\n", live.pool.Name, settle)
	}
	er, err := livehost.NewErrorRate(env.Ctx, logs, &live.fpm, settle)
	if err != nil {
		if errors.Is(err, env.Ctx.Err()) && env.Ctx.Err() != nil {
			return fmt.Errorf("interrupted before anything changed: %w", err)
		}
		fmt.Fprintf(env.Stderr, "apply: the error rate will not be compared after the reload: %v\n", err)
		return nil
	}
	fmt.Fprintf(env.Stderr, "apply: error rate before the change: %s over %v (%s)\n", er.Before, settle, er.Before.Source)
	plan.Steps = append(plan.Steps, er.Step())
	return nil
}

// dropKnobs are the nginx knobs the drop-in carries.
func (p *nginxPart) dropKnobs() []string {
	if p.changes == nil {
		return nil
	}
	return p.changes.DropKnobs
}
